"""The package built by colcon in a workspace, as a ROS 2 user builds it.

`ros2 run` finds executables in `lib/<package>/`, `ros2 launch` and FindPackageShare find
launch files, configs and robots under `share/<package>/` through the ament index. This
builds a copy of the checkout with colcon (colcon-common-extensions from PyPI), checks that
layout, starts the installed executable in the environment of `install/setup.bash`, and runs
`colcon test` as the README says to in a ROS workspace.
"""

from __future__ import annotations

import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys
from xml.etree import ElementTree

from conftest import REPO
from node_fixtures import late_joiner, SAMPLE_STATIC
import pytest
from tf2_msgs.msg import TFMessage

PACKAGE = 'urdf_state_publisher'
EXECUTABLES = ('urdf_state_publisher', 'urdf_state_publisher_inspect', 'urdf_state_publisher_bag',
               'urdf_state_publisher_demo')
SHARED_FILES = ('package.xml', 'launch/urdf_state_publisher.launch.py',
                'launch/display.launch.py', 'config/urdf_state_publisher.yaml',
                'config/display.rviz', 'urdf/sample_arm.urdf', 'urdf/sample_arm.urdf.xacro')
WAIT_S = 30.0  # how long a test waits for the node, also on a loaded machine
# What a checkout holds that is no part of the package's sources.
NOT_SOURCES = ('.git', '.venv', 'build', 'install', 'log', '__pycache__', '*.egg-info',
               '.pytest_cache', '.ruff_cache', '.hypothesis')


@pytest.fixture(scope='module')
def workspace(tmp_path_factory) -> Path:
    """A workspace with this package in src/, built by `colcon build`."""
    colcon = Path(sys.executable).with_name('colcon')
    assert colcon.is_file(), f'colcon is not installed next to {sys.executable}'
    root = tmp_path_factory.mktemp('ws')
    shutil.copytree(REPO, root / 'src' / PACKAGE, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    result = subprocess.run([str(colcon), 'build', '--event-handlers', 'console_cohesion+'],
                            cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def sourced_environment(workspace: Path) -> dict[str, str]:
    """The environment after `source install/setup.bash`."""
    result = subprocess.run(
        ['bash', '-c', 'source install/setup.bash && env -0'], cwd=workspace,
        capture_output=True, check=True, timeout=60)
    return dict(item.split('=', 1) for item in result.stdout.decode().split('\0') if '=' in item)


def test_the_installed_layout_is_what_ros2_run_and_launch_expect(workspace):
    prefix = workspace / 'install' / PACKAGE
    for name in EXECUTABLES:
        executable = prefix / 'lib' / PACKAGE / name
        assert executable.is_file(), f'{executable} missing'
        assert os.access(executable, os.X_OK), f'{executable} not executable'
    for name in SHARED_FILES:
        assert (prefix / 'share' / PACKAGE / name).is_file(), f'share/{PACKAGE}/{name} missing'
    marker = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / PACKAGE
    assert marker.is_file(), 'the ament index marker is missing'


def test_the_sourced_workspace_resolves_the_package_to_the_install(workspace):
    environment = sourced_environment(workspace)
    result = subprocess.run(
        [sys.executable, '-c',
         'import urdf_state_publisher.ros.process as p; '
         'from ament_index_python.packages import get_package_share_directory as share; '
         f'print(p.__file__); print(share({PACKAGE!r}))'],
        env=environment, cwd=workspace, capture_output=True, text=True, check=True, timeout=60)
    module, share = result.stdout.split()
    install = workspace / 'install' / PACKAGE
    assert Path(module).is_relative_to(install), module
    assert Path(share) == install / 'share' / PACKAGE


def test_the_installed_executable_publishes_tf_static(workspace, probe, tmp_path):
    environment = sourced_environment(workspace)
    share = workspace / 'install' / PACKAGE / 'share' / PACKAGE
    log_path = tmp_path / 'node.log'
    with open(log_path, 'w') as log:
        process = subprocess.Popen(
            [str(workspace / 'install' / PACKAGE / 'lib' / PACKAGE / PACKAGE), '--ros-args',
             '-p', f'description_file:={share / "urdf" / "sample_arm.urdf"}',
             '-r', '__node:=colcon_installed'],
            env=environment, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        static = late_joiner(probe, TFMessage, '/tf_static', timeout=WAIT_S)
        # Every fixed joint and sensor of the installed robot, each from its parent.
        assert {t.child_frame_id: t.header.frame_id for t in static[-1].transforms} == (
            SAMPLE_STATIC)
        # A process that ended by itself would not show what SIGINT does.
        assert process.poll() is None, log_path.read_text()
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            status = process.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
    output = log_path.read_text()
    assert status == 0, output
    assert 'Traceback' not in output


def test_colcon_test_runs_the_suite_with_pytest(workspace):
    # colcon runs pytest only for a package whose setup.py declares it as a test dependency;
    # else it reports no test step. Here one file of the suite, with no switch, as the build
    # farm runs `colcon test`.
    colcon = Path(sys.executable).with_name('colcon')
    result = subprocess.run(
        [str(colcon), 'test', '--packages-select', PACKAGE, '--event-handlers',
         'console_direct+', '--pytest-args', 'test/test_release.py'],
        cwd=workspace, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    report = ElementTree.parse(workspace / 'build' / PACKAGE / 'pytest.xml').getroot()
    suite = report if report.tag == 'testsuite' else report.find('testsuite')
    cases = {case.get('name') for case in suite.iter('testcase')}
    assert (suite.get('failures'), suite.get('errors'), suite.get('skipped')) == ('0', '0', '0')
    assert 'test_one_version_in_package_xml_setup_py_the_module_and_the_changelog' in cases
