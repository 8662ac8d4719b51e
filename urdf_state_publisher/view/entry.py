"""The entry point of urdf_state_publisher_view (setup.py): its stop handlers first.

Imports only the standard library, cli.py and ros/process.py before the handlers are in
place, then the view (viser, numpy, rclpy).
"""

from urdf_state_publisher.cli import quiet_pipe

__all__ = ['main']


def main() -> int | None:
    """urdf_state_publisher_view: a stop signal ends it with status 0, at any moment."""
    from urdf_state_publisher.ros.process import StopRequest

    stop = StopRequest()
    from urdf_state_publisher.view.command import main

    return quiet_pipe(lambda: 0 if stop.requested else main(stop=stop))
