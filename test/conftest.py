"""The test environment (an isolated DDS domain per run, paths) and the node tests' fixtures.

The helpers behind the fixtures are in node_fixtures.py. That module imports rclpy, so it is
imported inside the fixtures only: without ROS, the ROS-free tests still load this file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import os
from pathlib import Path

import pytest

# `--run-slow` (test/pytest_slow.py), the tests whose oracle rosdep does not install and
# `--require-oracles` (test/pytest_oracles.py), and the skips a run may make
# (test/pytest_skip_policy.py).
pytest_plugins = ['pytest_slow', 'pytest_oracles', 'pytest_skip_policy']

# Every test run gets its own DDS domain so that parallel runs (two checkouts, CI next to a
# developer) never see each other's topics. Set before rclpy is imported anywhere.
os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')

REPO = Path(__file__).resolve().parent.parent
SAMPLE_URDF = REPO / 'urdf' / 'sample_arm.urdf'
SAMPLE_XACRO = REPO / 'urdf' / 'sample_arm.urdf.xacro'


@pytest.fixture
def start_node(tmp_path) -> Iterator[Callable]:
    """Start node processes (node_fixtures.NodeProcess); all are stopped after the test."""
    from node_fixtures import NodeProcess, stop_all

    started: list[NodeProcess] = []

    def start(parameters: dict, ros_args: tuple[str, ...] = (), **kwargs) -> NodeProcess:
        node = NodeProcess(tmp_path, parameters, ros_args, **kwargs)
        started.append(node)
        return node

    yield start
    stop_all(started)


@pytest.fixture
def probe() -> Iterator:
    """A test-side node (node_fixtures.Probe), closed after the test."""
    from node_fixtures import Probe

    p = Probe()
    yield p
    p.close()


@pytest.fixture(scope='module')
def module_probe() -> Iterator:
    """A test-side node shared by the tests of a module."""
    from node_fixtures import Probe

    p = Probe('module_probe')
    yield p
    p.close()
