"""Shared fixtures: an isolated DDS domain per test run, the node in its own process, probes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

import pytest

# `--run-slow`: the long fuzzing and big-input variants (see test/pytest_slow.py).
pytest_plugins = ['pytest_slow']

# Every test run gets its own DDS domain so that parallel runs (two checkouts, CI next to a
# developer) never see each other's topics. Set before rclpy is imported anywhere.
os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')

REPO = Path(__file__).resolve().parent.parent
SAMPLE_URDF = REPO / 'urdf' / 'sample_arm.urdf'
SAMPLE_XACRO = REPO / 'urdf' / 'sample_arm.urdf.xacro'


def wait_until(predicate: Callable[[], bool], timeout: float, spin: Callable[[], None],
               what: str) -> None:
    """Spin until `predicate()` holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f'timed out after {timeout} s waiting for {what}')
        spin()


class NodeProcess:
    """`python -m urdf_state_publisher` in its own process, with a parameters file."""

    def __init__(self, tmp_path: Path, parameters: dict, ros_args: tuple[str, ...] = (),
                 node_name: str = 'urdf_state_publisher'):
        import yaml

        self.params_file = tmp_path / f'{node_name}_params.yaml'
        self.params_file.write_text(yaml.safe_dump({'/**': {'ros__parameters': parameters}}))
        self.log_file = tmp_path / f'{node_name}.log'
        self._log = open(self.log_file, 'w')
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'urdf_state_publisher', '--ros-args',
             '--params-file', str(self.params_file), '-r', f'__node:={node_name}', *ros_args],
            stdout=self._log, stderr=subprocess.STDOUT, cwd=tmp_path)

    def output(self) -> str:
        """Everything the process printed so far (also after it stopped)."""
        if not self._log.closed:
            self._log.flush()
        return self.log_file.read_text()

    def stop(self, sig: int = signal.SIGINT, timeout: float = 10.0) -> int:
        """Send `sig`, wait for exit, return the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        finally:
            self._log.close()


@pytest.fixture
def start_node(tmp_path) -> Iterator[Callable[..., NodeProcess]]:
    """Start node processes; each is stopped with SIGINT at the end of the test."""
    started: list[NodeProcess] = []

    def start(parameters: dict, ros_args: tuple[str, ...] = (), **kwargs) -> NodeProcess:
        node = NodeProcess(tmp_path, parameters, ros_args, **kwargs)
        started.append(node)
        return node

    yield start
    for node in started:
        if node.process.poll() is None:
            node.stop()


class Probe:
    """A test-side rclpy node in its own context: publishers, recorders and spinning."""

    def __init__(self, name: str = 'probe'):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin(self, seconds: float = 0.05) -> None:
        """Process whatever arrives within `seconds`."""
        self.executor.spin_once(timeout_sec=seconds)

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 10.0,
                   what: str = 'a condition') -> None:
        """Spin until `predicate()` holds (fails the test after `timeout`)."""
        wait_until(predicate, timeout, self.spin, what)

    def spin_for(self, seconds: float) -> None:
        """Spin for `seconds`, processing everything that arrives."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.spin(0.02)

    def record(self, message_type, topic: str, qos) -> list:
        """A list that collects every message received on `topic`."""
        received: list = []
        self.node.create_subscription(message_type, topic, received.append, qos)
        return received

    def close(self) -> None:
        """Destroy the node and shut the context down."""
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def probe() -> Iterator[Probe]:
    """A test-side node, closed after the test."""
    p = Probe()
    yield p
    p.close()


@pytest.fixture(scope='module')
def module_probe() -> Iterator[Probe]:
    """A test-side node shared by the tests of a module."""
    p = Probe('module_probe')
    yield p
    p.close()
