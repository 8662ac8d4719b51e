"""Pytest plugin: `--rosdep-only`, the suite as a ROS workspace can run it.

In a ROS workspace (`colcon test`, the build farm) the test tools are what rosdep installed from
package.xml's <test_depend> keys. Some tests compare with an oracle rosdep has no key for, or
only a pip key, which a released package may not depend on: yourdfpy, jvrc-description, ruff,
pytest-randomly, myst-parser, and the rosdistro snapshot beside the CI clone. `make test` and
CI run every one of them, and a missing one is an error there (test/pytest_skip_policy.py).

`--rosdep-only` is the one switch that leaves them out: it deselects exactly the tests listed in
`BEYOND_ROSDEP`, never a test whose tool merely failed to import, and the run ends with what it
left out and how to run it. Without the switch, a module that cannot import its oracle fails
the run and this plugin names the switch.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SWITCH = '--rosdep-only'
TEST_DIR = Path(__file__).resolve().parent

# What each test needs that rosdep does not install: a whole file, or `file::test` for one test
# function (all its parameters). A file listed whole need not import at all.
BEYOND_ROSDEP = {
    'test_model.py': 'yourdfpy (forward-kinematics oracle) and jvrc-description (a real robot)',
    'test_description.py::test_jvrc1': 'jvrc-description (a real robot)',
    'test_reliability_loader.py': 'jvrc-description (a real robot to mutate)',
    'test_reliability_node.py': 'jvrc-description (through the helpers of '
                                'test_reliability_loader.py)',
    'test_tf_output_identity.py': 'jvrc-description (one of the recorded robots)',
    'test_benchmark_smoke.py': "jvrc-description (one of the benchmark's robots)",
    'test_lint.py': 'ruff',
    'test_skip_policy.py::test_the_random_order_seed_is_named': 'pytest-randomly',
    'test_release.py::test_every_rosdep_key_resolves_on_each_distro':
        'the rosdistro snapshot ../shared/rosdistro (beside the CI clone) and rosdep',
    'test_docs.py': 'myst-parser (rosdoc2 brings it; rosdep has only a pip key)',
}
# The importable modules behind those needs: a test file that imports one, or a test file listed
# whole, must be listed above (test/test_rosdep_only.py checks it).
MODULES_BEYOND_ROSDEP = ('yourdfpy', 'jvrc_description', 'trimesh', 'myst_parser')
HOW_TO_RUN = ('run them in a checkout with `make test` (README), or install the test tools '
              'with `pip install -r requirements/dev.txt` and run pytest without ' + SWITCH)

_FILES = {key for key in BEYOND_ROSDEP if '::' not in key}
_left_out: list[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        SWITCH, action='store_true',
        help='leave out the tests that need what rosdep does not install (a ROS workspace: '
             '`colcon test --pytest-args ' + SWITCH + '`); the run lists them')


def _selected(path: Path, config: pytest.Config) -> bool:
    """Whether the run's paths include `path` (pytest also visits the files beside them)."""
    for arg in config.args:
        chosen = (config.invocation_params.dir / arg.split('::')[0]).resolve()
        if chosen == path or chosen in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if (config.getoption(SWITCH) and collection_path.parent == TEST_DIR
            and collection_path.name in _FILES):
        if _selected(collection_path, config):
            _left_out.append(collection_path.name)
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption(SWITCH):
        return
    kept, deselected = [], []
    for item in items:
        key = f'{item.path.name}::{getattr(item, "originalname", item.name)}'
        (deselected if key in BEYOND_ROSDEP else kept).append(item)
    if deselected:
        _left_out.extend(sorted({f'{item.path.name}::{item.originalname}'
                                 for item in deselected}))
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    write = terminalreporter.write_line
    if config.getoption(SWITCH):
        terminalreporter.section(f'left out by {SWITCH}', yellow=True)
        for key in _left_out:
            write(f'{key}: needs {BEYOND_ROSDEP[key]}')
        write(f'{len(_left_out)} left out; {HOW_TO_RUN}')
        return
    unimportable = sorted(
        Path(str(report.nodeid)).name for report in terminalreporter.stats.get('error', ())
        if isinstance(report, pytest.CollectReport)
        and 'ModuleNotFoundError' in str(report.longrepr))
    if unimportable:
        terminalreporter.section('test tools missing', red=True)
        write(f'{", ".join(unimportable)} could not import a test tool. In a ROS workspace, '
              f'where rosdep installed the tools, pass {SWITCH} (`colcon test --pytest-args '
              f'{SWITCH}`) to leave out the tests that need more; elsewhere '
              '`pip install -r requirements/dev.txt`.')
