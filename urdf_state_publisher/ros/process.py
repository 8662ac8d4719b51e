"""The node as a process: it ends with status 0 on SIGINT, SIGTERM or SIGHUP at any moment.

`ros2 launch` stops its children with SIGINT, systemd and container runtimes with SIGTERM, a
closed terminal sends SIGHUP: whenever they like, also while the process is still importing or
starting. So the entry points install their handlers before anything heavy is imported (this
module imports nothing but the standard library, and the package's `__init__` is lazy), and
the handlers only record the request. Raising from a handler could cut an import, rclpy's
initialisation or a DDS call in half. rclpy's own handlers stay out: they shut the context
down under running code, which then fails with "context is not valid" wherever it happens to
be. The spin loop polls the request instead, every STOP_POLL_S. Only a teardown that hangs in
the middleware for TEARDOWN_LIMIT_S ends the process otherwise: with status 1 and its stack.
The component container (`container_main`, urdf_state_publisher_container) runs the same way:
its loaded nodes share the one executor and are destroyed with it.

`--help` (or `-h`) before any `--ros-args` prints the usage and exits 0, starting nothing;
after `--ros-args` it is rcl's, which refuses it as an unknown ROS argument (cli.wants_help).
The usage (ros.usage.node_usage) lists the ROS arguments and the parameters and says where the
parameters are documented in full.
"""

from __future__ import annotations

import faulthandler
import signal
import sys

from urdf_state_publisher.stop_signals import STOP_SIGNALS

# What the entry points import before their handlers are in place is a window for a signal:
# the standard library's built-in modules only (not even typing, a tenth of that time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from rclpy.node import Node

__all__ = ['StopRequest', 'TEARDOWN_LIMIT_S', 'container_main', 'init_ros', 'main',
           'run_node', 'spin_until_stopped']

STOP_POLL_S = 0.1  # how long a stop request may wait for the executor to wake up
# After a stop, how long ROS may take to tear the node down before the process ends anyway.
TEARDOWN_LIMIT_S = 4.0


class StopRequest:
    """Installs handlers for STOP_SIGNALS that record the first signal received.

    `requested` is a plain attribute: the spin loop reads it for every message.
    """

    def __init__(self):
        self.signal: int | None = None
        self.requested = False
        for number in STOP_SIGNALS:
            signal.signal(number, self._record)

    def _record(self, number: int, frame) -> None:
        if self.signal is None:
            self.signal = number
        self.requested = True

    def context_shut_down(self) -> None:
        """Request a stop: the ROS context was shut down (a Context.on_shutdown callback)."""
        self.requested = True


def init_ros(args: list[str] | None = None, context=None) -> None:
    """`rclpy.init` without rclpy's signal handlers (StopRequest handles the signals)."""
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    rclpy.init(args=args, context=context, signal_handler_options=SignalHandlerOptions.NO)


def spin_until_stopped(node: Node, stop: StopRequest) -> None:
    """Process `node`'s callbacks until `stop` is requested or its context shuts down."""
    from rclpy.executors import ExternalShutdownException

    from urdf_state_publisher.ros.rclpy_capabilities import make_executor

    executor = make_executor(node.context)
    executor.add_node(node)
    # A shutdown from elsewhere ends the loop too, without asking the context for every message.
    node.context.on_shutdown(stop.context_shut_down)
    try:
        while not stop.requested:
            executor.spin_once(timeout_sec=STOP_POLL_S)
    except ExternalShutdownException:
        pass
    finally:
        executor.shutdown()


def run_node(program: str, make_node: Callable[[], Node], stop: StopRequest,
             args: list[str] | None = None) -> int:
    """Start ROS and the node `make_node()` builds, spin until `stop`, then shut down.

    The exit status: 0 after a stop, 1 with a message naming `program` when ROS or the node
    cannot start (a StartupError or unusable --ros-args). A teardown that takes longer than
    TEARDOWN_LIMIT_S ends the process with status 1 and the Python stack on stderr.
    """
    import rclpy

    from urdf_state_publisher.errors import StartupError

    if stop.requested:
        return 0
    try:
        init_ros(args)
    except RuntimeError as error:  # rclpy's errors for unusable --ros-args
        print(f'{program}: cannot initialise ROS: {error}', file=sys.stderr)
        return 1
    try:
        if stop.requested:
            return 0
        try:
            node = make_node()
        except StartupError as error:
            print(f'{program}: {error}', file=sys.stderr)
            # The half-built node is destroyed; ROS's own shutdown, below, is watched as any
            # teardown is.
            faulthandler.dump_traceback_later(TEARDOWN_LIMIT_S, exit=True)
            return 1
        try:
            spin_until_stopped(node, stop)
        finally:
            # The middleware's teardown can hang: Fast DDS 2.14 (Jazzy) has deadlocked while
            # destroying the participant as a peer left at the same moment, spinning a core
            # with the GIL held. faulthandler's watchdog thread needs no GIL: past the limit
            # it prints the Python stack and ends the process with status 1.
            faulthandler.dump_traceback_later(TEARDOWN_LIMIT_S, exit=True)
            node.destroy_node()
    finally:
        rclpy.try_shutdown()
        faulthandler.cancel_dump_traceback_later()
    return 0


def main(args: list[str] | None = None) -> int:
    """Run urdf_state_publisher until a stop signal; exit status 1 if it cannot start."""
    stop = StopRequest()
    from urdf_state_publisher.cli import quiet_pipe, wants_help

    if wants_help(args):
        from urdf_state_publisher.ros.usage import node_usage

        return quiet_pipe(lambda: print(node_usage()) or 0)
    from urdf_state_publisher.ros.node import UrdfStatePublisher

    return run_node('urdf_state_publisher', UrdfStatePublisher, stop, args)


def container_main(args: list[str] | None = None) -> int:
    """Run urdf_state_publisher_container (nodes loaded on request) until a stop signal."""
    stop = StopRequest()
    from urdf_state_publisher.cli import quiet_pipe, wants_help

    if wants_help(args):
        from urdf_state_publisher.ros.usage import container_usage

        return quiet_pipe(lambda: print(container_usage()) or 0)
    from urdf_state_publisher.ros.container import ComponentContainer

    return run_node('urdf_state_publisher_container', ComponentContainer, stop, args)
