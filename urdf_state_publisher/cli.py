"""What every command does at the shell's edge: a stop signal, a closed pipe, its --help.

The console scripts (setup.py) start in their shell's entry module (ros/process.py,
recorded/entry.py, tools/entry.py), which imports only this module and the standard library:
each entry point puts its stop handlers in place first, then imports its command, which takes
a while (numpy, rclpy, rosbags). A stop at any moment from then on ends the
command without a traceback, with the status its kind of command has:

- The node, the container and the demo run until they are stopped: a stop is their normal end,
  status 0 (process.StopRequest). `ros2 launch` stops them with SIGINT.
- The inspect and bag commands do a piece of work that a stop interrupts: they end by the
  signal, as an interrupted program does (a shell reports 130 for SIGINT, 143 for SIGTERM, 129
  for SIGHUP), so that a script that runs them stops too. The bag command cleans up first
  (recorded.stops); before its own handlers are in place it has nothing to clean up.

Before an entry point runs, the interpreter is starting: its site hooks run, among them
ros-wheels-bootstrapper's in an environment of ROS wheels, which executes the interpreter again
(with a library path). No code of the package runs yet, and none can handle a signal.

A pipe on stdout that its reader closed (`urdf_state_publisher_inspect robot.urdf | head`) ends
the command quietly, as it ends `cat`: by SIGPIPE (status 141 in a shell), the rest of the
output dropped.
"""

from __future__ import annotations

import os
import select
import signal
import stat
import sys

from urdf_state_publisher.stop_signals import STOP_SIGNALS

# Not typing.TYPE_CHECKING: the entry points import this module before their handlers are in
# place, and typing would take a tenth of that time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

__all__ = ['end_by', 'end_by_stop_signals', 'quiet_pipe', 'stdout_closed', 'wants_help']


def end_by(number: int) -> NoReturn:
    """End as a program stopped by signal `number` does: killed by it (SIGINT: status 130).

    A shell script that runs the command then stops too; an exit status of 130 would let it go
    on. Python would end so for an uncaught KeyboardInterrupt, and does for a caught one too when
    the interrupt came inside an exec() of source text (rosbags builds its message classes and
    serializers that way): the same end every time is what a script can rely on.
    """
    sys.stderr.flush()
    signal.signal(number, signal.SIG_DFL)
    signal.raise_signal(number)
    os._exit(128 + number)  # only if this thread blocks the signal


def stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has closed it (poll reports an error on it)."""
    try:
        if not stat.S_ISFIFO(os.fstat(sys.__stdout__.fileno()).st_mode):
            return False
        poller = select.poll()
        poller.register(sys.__stdout__.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # stdout closed, detached or absent
        return False


def quiet_pipe(main: Callable[[], int | None]) -> int | None:
    """`main()`, its output flushed; a closed pipe on stdout ends the process by SIGPIPE.

    Only the command's stdout: a pipe of its own that breaks (a worker's) is an error as before.
    argparse's messages (--help) end in SystemExit, their output still in the buffer.
    """
    try:
        try:
            status = main()
        except SystemExit:
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        if not stdout_closed():
            raise
        end_by(signal.SIGPIPE)


def wants_help(argv: list[str] | None) -> bool:
    """Whether a node's command line asks for our --help (-h): before any `--ros-args`.

    What follows `--ros-args` is rcl's, and `ros2 run` passes the command line on unchanged:
    `--ros-args --help` stays rcl's own.
    """
    words = sys.argv[1:] if argv is None else argv
    if '--ros-args' in words:
        words = words[:words.index('--ros-args')]
    return '-h' in words or '--help' in words


def end_by_stop_signals() -> None:
    """A stop signal ends the process by that signal, from here on (a signal ignored stays so)."""
    for number in STOP_SIGNALS:
        if signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, lambda number, frame: end_by(number))
