"""The entry point of urdf_state_publisher_bag (setup.py): its stop handlers first.

Imports only the standard library and cli.py before the handlers are in place, then the
command (rosbags, numpy), which puts its own handlers in place once it runs (recorded.stops).
"""

from urdf_state_publisher.cli import end_by_stop_signals, quiet_pipe

__all__ = ['main']


def main() -> int | None:
    """urdf_state_publisher_bag: ended by a stop signal; its own handlers once it runs."""
    end_by_stop_signals()
    from urdf_state_publisher.recorded.command import main

    return quiet_pipe(main)
