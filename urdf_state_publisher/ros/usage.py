"""What `urdf_state_publisher --help` and `urdf_state_publisher_container --help` print.

The ROS arguments as rcl takes them, every parameter with its default, and where each is
documented in full. Imported by the entry points (process.py) only when --help is asked for.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ['container_usage', 'node_usage', 'parameters_page']


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
    from urdf_state_publisher.engine.parameters import DOCUMENTED

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
    package = Path(__file__).resolve().parents[1]  # urdf_state_publisher/, above ros/
    pages = [package.parent / 'doc' / 'parameters.md']
    if len(package.parents) > 3:  # PREFIX/lib/pythonX.Y/site-packages/urdf_state_publisher
        pages.append(package.parents[3] / 'share' / 'urdf_state_publisher' / 'doc' /
                     'parameters.md')
    for page in pages:
        if page.is_file():
            return str(page)
    return "doc/parameters.md in urdf_state_publisher's source"
