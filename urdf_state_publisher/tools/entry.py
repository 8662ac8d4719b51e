"""The entry points of urdf_state_publisher_inspect and _demo (setup.py): stop handlers first.

Each imports only the standard library and cli.py (the demo also ros/process.py) before its
handlers are in place, then its command (numpy, rclpy).
"""

from urdf_state_publisher.cli import end_by_stop_signals, quiet_pipe

__all__ = ['demo_main', 'inspect_main']


def inspect_main() -> int | None:
    """urdf_state_publisher_inspect: ended by a stop signal, at any moment."""
    end_by_stop_signals()
    from urdf_state_publisher.tools.inspect import main

    return quiet_pipe(main)


def demo_main() -> int | None:
    """urdf_state_publisher_demo: a stop signal ends it with status 0, at any moment."""
    from urdf_state_publisher.ros.process import StopRequest

    stop = StopRequest()
    from urdf_state_publisher.tools.demo import main

    return quiet_pipe(lambda: 0 if stop.requested else main(stop=stop))
