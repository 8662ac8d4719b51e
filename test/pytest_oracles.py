"""Pytest plugin: tests whose oracle package.xml's keys do not install, and `--require-oracles`.

Where the suite runs as a released package's tests (`colcon test` on the build farm, in a
workspace that holds only what rosdep installed for package.xml's keys), some oracles are
missing: they have no rosdep key, or only a pip key, which a released package may not depend
on. `ORACLES` names each test (a whole file, or `file::function` for one test and all its
parameters) and the modules it needs.

- By default, a listed test whose modules are not all importable is skipped, with one reason
  that names what it needs, and the run ends with the list of what it left out and how to run
  it. A plain `colcon test` passes there.
- With `--require-oracles` (the README's `make test` and CI pass it) a missing oracle is an
  error, never a skip: a whole file fails at collection naming the module and the fix.

The decision is made before pytest, or any other plugin, imports a listed file:
launch_testing's pytest plugin imports every test module while looking for launch tests, and
an import error there would be reported against the folder, not the file.
"""

from __future__ import annotations

from dataclasses import dataclass
import importlib.util
import os
from pathlib import Path

import pytest

SWITCH = '--require-oracles'
TEST_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Oracle:
    """What a test needs that package.xml's keys do not install: modules, and in words."""

    modules: tuple[str, ...]
    what: str
    programs: tuple[str, ...] = ()  # executables, by path: a browser the tests drive

    def missing(self) -> tuple[str, ...]:
        return tuple(m for m in self.modules if not _importable(m)) + tuple(
            p for p in self.programs if not os.access(p, os.X_OK))


def _importable(module: str) -> bool:
    """Whether `module` can be found: a dotted name is looked up below its parents, which an
    uninstall may leave behind as an empty folder (a namespace package of nothing)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent missing; or in sys.modules as None
        return False


JVRC = 'jvrc-description (a real robot)'
ORACLES = {
    'test_model.py': Oracle(('yourdfpy', 'trimesh', 'jvrc_description'),
                            'yourdfpy (forward-kinematics oracle) and ' + JVRC),
    'test_description.py::test_jvrc1': Oracle(('jvrc_description',), JVRC),
    'test_reliability_loader.py': Oracle(('jvrc_description',), JVRC + ', to mutate'),
    'test_reliability_node.py': Oracle(
        ('jvrc_description',), JVRC + ', through the helpers of test_reliability_loader.py'),
    'test_tf_output_identity.py': Oracle(('jvrc_description',),
                                         JVRC + ', one of the recorded robots'),
    'test_benchmark_smoke.py': Oracle(('jvrc_description', 'rosbags.rosbag2'),
                                      JVRC + ", one of the benchmark's robots, and rosbags, "
                                      'for its bag section'),
    'test_lint.py': Oracle(('ruff',), 'ruff (the linter)'),
    'test_skip_policy.py::test_the_random_order_seed_is_named': Oracle(
        ('pytest_randomly',), 'pytest-randomly'),
    'test_docs.py': Oracle(('sphinx', 'myst_parser'),
                           'sphinx and myst-parser (rosdoc2 brings them; rosdep has only a '
                           'pip key for myst-parser)'),
    'test_release_check.py': Oracle(('rosdep2',), 'rosdep (the release check runs it)'),
    'test_cdr_bytes.py': Oracle(('rosbags.typesys',),
                                'rosbags (its CDR serializer is the oracle)'),
    'test_xacro_arguments.py::test_the_bag_command_reports_the_warning_as_a_finding': Oracle(
        ('rosbags.rosbag2', 'rosbags.typesys'),
        "rosbags (urdf_state_publisher_bag's optional dependency, and the test's bag)"),
    'test_bag_runs.py': Oracle(('rosbags.rosbag2',), 'rosbags (the bags of the tests)'),
    'test_bag_ros1.py': Oracle(('rosbags.rosbag1', 'rosbags.convert'),
                               "rosbags (it writes the ROS 1 bags, and rosbags-convert's "
                               'conversion is the oracle)'),
    'test_bag.py': Oracle(('rosbags.rosbag2',), "rosbags (urdf_state_publisher_bag's optional "
                                        'dependency, and the bags of the tests)'),
    'test_bag_folders.py': Oracle(('rosbags.rosbag2', 'rosbags.rosbag1'),
                                  'rosbags (the folders of recordings of the tests)'),
    'test_bag_second_pass.py': Oracle(('rosbags.rosbag2',),
                                      'rosbags (the bags of the tests, read back)'),
    'test_bag_statuses.py': Oracle(('rosbags.rosbag2',), 'rosbags (the bags of the tests)'),
    'test_bag_table.py': Oracle(('rosbags.rosbag2',), 'rosbags (the bags of the tests)'),
    'test_bag_cluster.py': Oracle(('rosbags.rosbag2', 'distributed'),
                                  "rosbags and Dask's distributed (a scheduler and its workers "
                                  'run the batches; the cluster extra)'),
    # A helper, not a test: it starts the cluster of test_bag_cluster.py, skipped as above.
    'dask_cluster.py::client': Oracle(('distributed',), "Dask's distributed"),
    'test_bag_types.py': Oracle(('rosbags.rosbag2', 'rosbags.typesys'),
                                'rosbags (the output read back; the input bags are written '
                                "by the tests to rosbag2's own layout)"),
    'test_view_browser.py': Oracle(('viser', 'playwright', 'PIL'),
                                   "viser (the view extra's library) and playwright, which "
                                   "drives Debian's chromium (apt-get install chromium)",
                                   programs=('/usr/bin/chromium',)),
    'test_view_browser.py::test_a_recording_s_timeline_moves_the_drawn_robot': Oracle(
        ('rosbags.rosbag2', 'rosbags.typesys'), 'rosbags (the recording the view shows)'),
}
# The importable modules behind those needs: a test file that imports one must be listed
# above, whole or by the function that imports it (test/test_oracles.py checks it).
ORACLE_MODULES = tuple(sorted({m for oracle in ORACLES.values() for m in oracle.modules}))
HOW_TO_RUN = ('run them in a checkout with `make test` (README), or install the test tools '
              'with `pip install -r requirements/dev.txt`')
SKIP_PREFIX = 'needs '  # every skip of this plugin: 'needs <what> (missing: <modules>)'

_left_out: dict[str, str] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        SWITCH, action='store_true',
        help='a missing test oracle is an error instead of a skip (make test and CI); without '
             'it the tests that need what rosdep does not install are skipped and listed')


def skip_reason(oracle: Oracle, missing: tuple[str, ...]) -> str:
    return f'{SKIP_PREFIX}{oracle.what} (missing: {", ".join(missing)})'


def is_allowed_skip(reason: str, config: pytest.Config) -> bool:
    """Whether `reason` is this plugin's skip of a test whose oracle is missing, and allowed."""
    return not config.getoption(SWITCH, False) and reason.startswith(SKIP_PREFIX) and any(
        reason == skip_reason(oracle, oracle.missing()) for oracle in ORACLES.values())


class _MissingOracleModule(pytest.Module):
    """A listed test file whose oracle is missing: skipped, or an error, without importing it."""

    oracle: Oracle
    missing: tuple[str, ...]

    def collect(self):
        # Recorded here: pytest makes a module of every file beside the ones a run asks for.
        if self.config.getoption(SWITCH):
            raise self.CollectError(
                f'{self.path.name} needs {self.oracle.what}, but cannot import '
                f'{", ".join(self.missing)}: `pip install -r requirements/dev.txt` (or '
                f'leave out {SWITCH}, where rosdep installed the test tools, to skip it)')
        reason = skip_reason(self.oracle, self.missing)
        _left_out[self.path.name] = reason
        pytest.skip(reason, allow_module_level=True)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent) -> pytest.Module | None:
    if TEST_DIR not in module_path.parents:  # test/ and its folders
        return None
    oracle = ORACLES.get(module_path.name)
    if oracle is None or not oracle.missing():
        return None
    module = _MissingOracleModule.from_parent(parent, path=module_path)
    module.oracle, module.missing = oracle, oracle.missing()
    return module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption(SWITCH):
        return
    for item in items:
        key = f'{item.path.name}::{getattr(item, "originalname", item.name)}'
        oracle = ORACLES.get(key)
        if oracle is not None and oracle.missing():
            reason = skip_reason(oracle, oracle.missing())
            item.add_marker(pytest.mark.skip(reason=reason))
            _left_out[key] = reason


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if _left_out:
        terminalreporter.section('left out: test oracles not installed', yellow=True)
        for key, reason in sorted(_left_out.items()):
            terminalreporter.write_line(f'{key}: {reason}')
        terminalreporter.write_line(f'{len(_left_out)} left out; {HOW_TO_RUN}, and pass '
                                    f'{SWITCH} to make a missing one an error')
