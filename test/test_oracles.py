"""Tests whose oracle rosdep does not install: skipped and listed by default, errors if required.

A workspace like the build farm's is imitated by making the oracles unimportable: the inner
pytest runs with their names set to None in `sys.modules`, which both `import` and
`importlib.util.find_spec` take for a module that is not installed. All but pytest-randomly,
a pytest plugin whose entry point pytest loads at start.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
import subprocess
import sys
import textwrap

from conftest import REPO
import pytest
from pytest_oracles import ORACLE_MODULES, ORACLES, SWITCH

pytestmark = pytest.mark.ros_free  # the inner runs collect ROS-free files only

TEST_DIR = REPO / 'test'
# launch_testing's pytest plugin (loaded wherever launch_testing is installed, as on the build
# farm) imports every test module while looking for launch tests, as this one does, with the
# call its pytest takes (pytest 8.1 added consider_namespace_packages; Ubuntu noble's is 7.4).
# Only those the run asks for here: the others need ROS, which a ROS-free run of this test has
# not.
IMPORTS_EVERY_MODULE = """
from pathlib import Path

import pytest
from _pytest.pathlib import import_path

NAMESPACES = ({'consider_namespace_packages': False}
              if tuple(map(int, pytest.__version__.split('.')[:2])) >= (8, 1) else {})


def pytest_pycollect_makemodule(module_path, parent):
    if module_path.name in {Path(arg.split('::')[0]).name for arg in parent.config.args}:
        import_path(module_path, root=parent.config.rootpath, **NAMESPACES)
"""


def imports_of_oracles(path: Path) -> list[str]:
    """Where `path` imports an oracle module, or a test module listed whole: 'file' or
    'file::function'."""
    found = []
    beyond = ({m.split('.')[0] for m in ORACLE_MODULES}
              | {key.removesuffix('.py') for key in ORACLES if '::' not in key})

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and where == path.name:
                visit(child, f'{path.name}::{child.name}')
                continue
            names = ([alias.name for alias in child.names] if isinstance(child, ast.Import)
                     else [child.module or ''] if isinstance(child, ast.ImportFrom) else [])
            if any(name.split('.')[0] in beyond for name in names):
                found.append(where)
            visit(child, where)

    visit(ast.parse(path.read_text()), path.name)
    return found


def test_every_import_of_an_oracle_is_in_a_listed_test():
    unlisted = [where for path in sorted(TEST_DIR.rglob('*.py'))
                for where in imports_of_oracles(path)
                if where not in ORACLES and where.split('::')[0] not in ORACLES]
    assert unlisted == []


def test_the_scan_sees_a_nested_and_a_module_level_import(tmp_path):
    source = tmp_path / 'test_x.py'
    source.write_text('import yourdfpy\n\ndef test_a():\n    from jvrc_description import x\n\n'
                      'def test_b():\n    from test_model import y\n')
    assert imports_of_oracles(source) == ['test_x.py', 'test_x.py::test_a', 'test_x.py::test_b']


def test_every_listed_test_exists():
    for key in ORACLES:
        file, _, function = key.partition('::')
        paths = list(TEST_DIR.rglob(file))  # in test/ or one of its folders, by its unique name
        assert len(paths) == 1, key
        if function:
            tree = ast.parse(paths[0].read_text())
            assert function in {node.name for node in tree.body
                                if isinstance(node, ast.FunctionDef)}, key


def run_pytest(tmp_path: Path, *args: str, launch_testing_like: bool = False
               ) -> subprocess.CompletedProcess:
    """pytest on this suite, in file order, with every oracle module unimportable."""
    plugins = []
    if launch_testing_like:
        (tmp_path / 'imports_every_module.py').write_text(IMPORTS_EVERY_MODULE)
        plugins = ['-p', 'imports_every_module']
    blocked = tuple(m for m in ORACLE_MODULES if m != 'pytest_randomly')
    code = textwrap.dedent(f"""
        import sys
        sys.modules.update(dict.fromkeys({blocked!r}))
        import pytest
        sys.exit(pytest.main(sys.argv[1:]))
        """)
    # Not the options of the run around this one (colcon passes its own in PYTEST_ADDOPTS).
    env = {key: value for key, value in os.environ.items() if key != 'PYTEST_ADDOPTS'}
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(tmp_path), env.get('PYTHONPATH')]))
    return subprocess.run(
        [sys.executable, '-c', code, '-p', 'no:randomly', '-p', 'no:cacheprovider', *plugins,
         *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def closing_counts(result: subprocess.CompletedProcess) -> str:
    (line,) = [x for x in result.stdout.splitlines() if x.startswith('suite: ')]
    return line.removeprefix('suite: ').removesuffix('; file order')


def left_out(result: subprocess.CompletedProcess) -> list[str]:
    """The lines of the closing list of what the run left out."""
    section = result.stdout.split('left out: test oracles not installed')[1].splitlines()[1:]
    return section[:next(k for k, line in enumerate(section) if ' left out; ' in line) + 1]


@pytest.mark.parametrize('launch_testing_like', [False, True])
def test_by_default_a_missing_oracle_is_a_listed_skip_and_the_run_passes(tmp_path,
                                                                         launch_testing_like):
    # A file listed whole (it imports its oracle at the top) and one listed test of a file.
    result = run_pytest(tmp_path, 'test/test_lint.py', 'test/description/test_description.py',
                        '-k', 'jvrc1 or lint', launch_testing_like=launch_testing_like)
    assert result.returncode == 0, result.stdout + result.stderr
    assert closing_counts(result) == '0 passed, 0 failed, 2 skipped (0 unexpected)'
    assert left_out(result) == [
        'test_description.py::test_jvrc1: needs jvrc-description (a real robot) (missing: '
        'jvrc_description)',
        'test_lint.py: needs ruff (the linter) (missing: ruff)',
        '2 left out; run them in a checkout with `make test` (README), or install the test '
        'tools with `pip install -r requirements/dev.txt`, and pass --require-oracles to make a '
        'missing one an error',
    ]


@pytest.mark.parametrize('launch_testing_like', [False, True])
def test_with_the_switch_a_missing_oracle_fails_the_run_naming_the_file(tmp_path,
                                                                        launch_testing_like):
    result = run_pytest(tmp_path, SWITCH, 'test/test_lint.py',
                        launch_testing_like=launch_testing_like)
    assert result.returncode != 0
    assert ('test_lint.py needs ruff (the linter), but cannot import ruff: `pip install -r '
            'requirements/dev.txt`') in result.stdout
    assert closing_counts(result) == '0 passed, 1 failed, 0 skipped (0 unexpected)'
    assert 'left out' not in result.stdout


def test_with_the_switch_a_listed_test_runs_and_fails_without_its_oracle(tmp_path):
    result = run_pytest(tmp_path, SWITCH, 'test/description/test_description.py', '-k', 'jvrc1')
    assert result.returncode != 0
    assert 'ModuleNotFoundError: import of jvrc_description' in result.stdout
    assert closing_counts(result) == '0 passed, 1 failed, 0 skipped (0 unexpected)'

