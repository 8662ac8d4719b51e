"""Start urdf_state_publisher on a robot description: a .urdf, or a .xacro expanded by xacro."""

from typing import Any, List

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.logging import get_logger
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from urdf_state_publisher.ros.launch_support import (
    launch_arguments,
    NODE_NAME,
    node_namespace,
    node_setup,
)


def declare_arguments() -> list[DeclareLaunchArgument]:
    """Return the launch arguments of this file, with their defaults (from the package)."""
    return launch_arguments(
        'Namespace of the node (and of its joint_states and robot_description).')


def _typed(parameters: dict[str, Any]) -> dict[str, ParameterValue]:
    """Each value with its type: launch_ros would read a plain str as YAML ('1' a number)."""
    return {name: ParameterValue(value, value_type=List[str] if isinstance(value, list)
                                 else type(value))
            for name, value in parameters.items()}


def _launch_setup(context: LaunchContext) -> list[Node]:
    """Check the arguments, then build the node (nothing starts if an argument is wrong).

    Later entries of `parameters` win: the params file, then what the arguments given set
    (ros.launch_support.node_setup decides which).
    """
    setup = node_setup(context.launch_configurations,
                       node_namespace(context.launch_configurations),
                       FindPackageShare(NODE_NAME).perform(context))
    # What the node cannot see: it is given the expanded text (an xacro argument not taken).
    for warning in setup.warnings:
        get_logger('urdf_state_publisher.launch.py').warning(warning)
    return [
        Node(
            package=NODE_NAME,
            executable=NODE_NAME,
            name=NODE_NAME,
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            parameters=[*setup.params_files, _typed(setup.parameters)],
        ),
    ]


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and start urdf_state_publisher."""
    return LaunchDescription([*declare_arguments(), OpaqueFunction(function=_launch_setup)])
