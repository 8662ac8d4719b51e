"""What every command does at the shell's edge: a stop signal, a closed pipe, the entry points.

The console scripts (setup.py) start here or in process.py, which import only the standard
library: each entry point puts its stop handlers in place first, then imports its command,
which takes a while (numpy, rclpy, rosbags). A stop at any moment from then on ends the
command without a traceback, with the status its kind of command has:

- The node, the container and the demo run until they are stopped: a stop is their normal end,
  status 0 (process.StopRequest). `ros2 launch` stops them with SIGINT.
- The inspect and bag commands do a piece of work that a stop interrupts: they end by the
  signal, as an interrupted program does (a shell reports 130 for SIGINT, 143 for SIGTERM, 129
  for SIGHUP), so that a script that runs them stops too. The bag command cleans up first
  (bag_stops); before its own handlers are in place it has nothing to clean up.

Before an entry point runs, the interpreter is starting: its site hooks run, among them
ros-wheels-bootstrapper's in an environment of ROS wheels, which executes the interpreter again
(with a library path). No code of the package runs yet, and none can handle a signal.

A pipe on stdout that its reader closed (`urdf_state_publisher_inspect robot.urdf | head`) ends
the command quietly, as it ends `cat`: by SIGPIPE (status 141 in a shell), the rest of the
output dropped.
"""

from __future__ import annotations

import os
from pathlib import Path
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

__all__ = ['bag_main', 'container_usage', 'demo_main', 'end_by', 'inspect_main', 'node_usage',
           'quiet_pipe', 'stdout_closed', 'view_main', 'wants_help']


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


_ROS_ARGUMENTS = """\
ROS arguments (after --ros-args, as rcl takes them; --help goes before --ros-args):
  -p NAME:=VALUE         set a parameter; the value is read as YAML
  --params-file FILE     parameters from a YAML file (NODE_NAME: ros__parameters: ...)
  -r FROM:=TO            remap a topic; -r __node:=NAME renames the node,
                         -r __ns:=/NAMESPACE puts it in a namespace
  --log-level LEVEL      debug, info, warn, error or fatal (or NAME:=LEVEL for one logger)"""

_STOPPING = """\
SIGINT (Ctrl-C, ros2 launch), SIGTERM or SIGHUP stop it at any moment: exit status 0.
Exit status 1: it cannot start (the reason on stderr)."""


def node_usage() -> str:
    """What `urdf_state_publisher --help` prints."""
    from urdf_state_publisher.parameters import DOCUMENTED

    lines = []
    for spec in DOCUMENTED:
        default = repr(spec.default) if isinstance(spec.default, str) else spec.default
        if isinstance(spec.default, bool):
            default = str(spec.default).lower()
        elif isinstance(spec.default, tuple):
            default = '[]' if not spec.default else list(spec.default)
        lines.append(f'  {spec.name} ({spec.type_name}, default {default})')
    return f"""\
usage: urdf_state_publisher [-h] [--ros-args [-p NAME:=VALUE] [--params-file FILE]
                            [-r FROM:=TO] [--log-level LEVEL] ...]

Publishes a robot description (the robot_description parameter or a description_file,
URDF or xacro) and the robot's state on /tf and /tf_static from the JointState messages
on joint_states: a drop-in for robot_state_publisher, with the same parameters and topics.

  ros2 run urdf_state_publisher urdf_state_publisher --ros-args \\
    -p robot_description:="$(xacro robot.urdf.xacro)"

{_ROS_ARGUMENTS}

Parameters (each in full: {parameters_page()};
on a running node: ros2 param describe /urdf_state_publisher NAME):
{chr(10).join(lines)}

{_STOPPING}"""


def container_usage() -> str:
    """What `urdf_state_publisher_container --help` prints."""
    return f"""\
usage: urdf_state_publisher_container [-h] [--ros-args [-r __node:=NAME] [-r __ns:=/NAMESPACE]
                                      [-p NAME:=VALUE] [--log-level LEVEL] ...]

A component container (rclcpp_components' protocol) for urdf_state_publisher nodes: it starts
empty, and loads the nodes that launch_ros's ComposableNodeContainer or `ros2 component load`
ask for, with their own parameters and remaps, into one process and one executor. Its node is
called ComponentManager, as rclcpp's container's is (-r __node:=NAME renames it).

  ros2 component load /ComponentManager urdf_state_publisher \\
    urdf_state_publisher::UrdfStatePublisher -p description_file:=/path/to/robot.urdf

{_ROS_ARGUMENTS}

The loaded nodes' parameters: urdf_state_publisher --help, {parameters_page()}.

{_STOPPING}"""


def parameters_page() -> str:
    """Where doc/parameters.md is: the source checkout's, else the installed package's share."""
    package = Path(__file__).resolve().parent
    pages = [package.parent / 'doc' / 'parameters.md']
    if len(package.parents) > 3:  # PREFIX/lib/pythonX.Y/site-packages/urdf_state_publisher
        pages.append(package.parents[3] / 'share' / 'urdf_state_publisher' / 'doc' /
                     'parameters.md')
    for page in pages:
        if page.is_file():
            return str(page)
    return "doc/parameters.md in urdf_state_publisher's source"


def _end_by_stop_signals() -> None:
    """A stop signal ends the process by that signal, from here on (a signal ignored stays so)."""
    for number in STOP_SIGNALS:
        if signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, lambda number, frame: end_by(number))


# The entry points of urdf_state_publisher_inspect, _bag, _demo and _view (setup.py); the
# node's and the container's are process.main and process.container_main.

def inspect_main() -> int | None:
    """urdf_state_publisher_inspect: ended by a stop signal, at any moment."""
    _end_by_stop_signals()
    from urdf_state_publisher.inspect_cli import main

    return quiet_pipe(main)


def bag_main() -> int | None:
    """urdf_state_publisher_bag: ended by a stop signal; its own handlers once it runs."""
    _end_by_stop_signals()
    from urdf_state_publisher.bag import main

    return quiet_pipe(main)


def demo_main() -> int | None:
    """urdf_state_publisher_demo: a stop signal ends it with status 0, at any moment."""
    from urdf_state_publisher.process import StopRequest

    stop = StopRequest()
    from urdf_state_publisher.demo import main

    return quiet_pipe(lambda: 0 if stop.requested else main(stop=stop))


def view_main() -> int | None:
    """urdf_state_publisher_view: a stop signal ends it with status 0, at any moment."""
    from urdf_state_publisher.process import StopRequest

    stop = StopRequest()
    from urdf_state_publisher.view.command import main

    return quiet_pipe(lambda: 0 if stop.requested else main(stop=stop))
