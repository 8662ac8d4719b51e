"""`--rosdep-only` leaves out exactly the tests listed as needing more than rosdep installs.

A ROS workspace is imitated by making the oracles unimportable: a folder put first on the path
holds a module of each name that raises ModuleNotFoundError, as a missing package does.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
import subprocess
import sys

from conftest import REPO
from pytest_rosdep_only import BEYOND_ROSDEP, MODULES_BEYOND_ROSDEP, SWITCH

TEST_DIR = REPO / 'test'


def imports_beyond_rosdep(path: Path) -> list[str]:
    """Where `path` imports a module rosdep does not install, or a test module that needs one
    as a whole: 'file' or 'file::function'."""
    found = []
    beyond = set(MODULES_BEYOND_ROSDEP) | {
        key.removesuffix('.py') for key in BEYOND_ROSDEP if '::' not in key}

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


def test_every_import_of_a_tool_beyond_rosdep_is_in_a_listed_test():
    unlisted = [where for path in sorted(TEST_DIR.glob('*.py'))
                for where in imports_beyond_rosdep(path)
                if where not in BEYOND_ROSDEP and where.split('::')[0] not in BEYOND_ROSDEP]
    assert unlisted == []


def test_the_scan_sees_a_nested_and_a_module_level_import(tmp_path):
    source = tmp_path / 'test_x.py'
    source.write_text('import yourdfpy\n\ndef test_a():\n    from jvrc_description import x\n\n'
                      'def test_b():\n    from test_model import y\n')
    assert imports_beyond_rosdep(source) == ['test_x.py', 'test_x.py::test_a', 'test_x.py::test_b']


def run_pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """pytest on this suite with the oracles' modules made unimportable."""
    missing = tmp_path / 'missing'
    missing.mkdir(exist_ok=True)
    for name in MODULES_BEYOND_ROSDEP:
        (missing / f'{name}.py').write_text(
            f'raise ModuleNotFoundError("No module named {name!r}", name={name!r})\n')
    # Not the options of the run around this one (colcon passes its own in PYTEST_ADDOPTS).
    env = {key: value for key, value in os.environ.items() if key != 'PYTEST_ADDOPTS'}
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(missing), env.get('PYTHONPATH')]))
    return subprocess.run(
        [sys.executable, '-m', 'pytest', '-p', 'no:randomly', '-p', 'no:cacheprovider', *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def test_the_switch_collects_without_the_oracles_and_lists_what_it_left_out(tmp_path):
    # test/ros_install needs launch_testing, which only a ROS install has (Makefile).
    result = run_pytest(tmp_path, SWITCH, '--collect-only', '-q', '--ignore=test/ros_install',
                        'test')
    assert result.returncode == 0, result.stdout + result.stderr
    section = result.stdout.split(f'left out by {SWITCH}')[1].splitlines()[1:]
    assert sorted(section[:len(BEYOND_ROSDEP)]) == sorted(
        f'{key}: needs {need}' for key, need in BEYOND_ROSDEP.items())
    assert section[len(BEYOND_ROSDEP)].startswith(
        f'{len(BEYOND_ROSDEP)} left out; run them in a checkout with `make test`')
    collected = {line.split('::')[0].split('/')[-1] + '::' + line.split('::')[1].split('[')[0]
                 for line in result.stdout.splitlines() if line.startswith('test/')}
    assert not {key for key in BEYOND_ROSDEP if '::' not in key} & {
        item.split('::')[0] for item in collected}
    assert not collected & set(BEYOND_ROSDEP)
    # What is left is most of the suite, the ROS-free core and the node tests alike.
    assert {'test_geometry.py', 'test_stream.py', 'test_node_health.py', 'test_release.py',
            'test_description.py'} <= {item.split('::')[0] for item in collected}


def test_without_the_switch_a_missing_oracle_fails_the_run_and_names_the_switch(tmp_path):
    result = run_pytest(tmp_path, '--collect-only', '-q', 'test/test_model.py')
    assert result.returncode != 0
    assert "No module named 'jvrc_description'" in result.stdout
    assert (f'test_model.py could not import a test tool. In a ROS workspace, where rosdep '
            f'installed the tools, pass {SWITCH}') in result.stdout
