"""Start urdf_state_publisher on a robot description expanded by xacro."""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import (
    Command,
    FindExecutable,
    LaunchConfiguration,
    PathJoinSubstitution,
)
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def declare_arguments() -> list[DeclareLaunchArgument]:
    """Return the launch arguments of this file, with their defaults."""
    return [
        DeclareLaunchArgument(
            'model',
            default_value=PathJoinSubstitution(
                [FindPackageShare('urdf_state_publisher'), 'urdf', 'sample_arm.urdf.xacro']),
            description='Robot description: a .urdf or .xacro file (expanded with xacro).'),
        DeclareLaunchArgument(
            'xacro_args',
            default_value='',
            description="Space-separated 'name:=value' arguments for a .xacro model."),
        DeclareLaunchArgument(
            'namespace',
            default_value='',
            description='Namespace of the node (and of its joint_states and robot_description).'),
        DeclareLaunchArgument(
            'frame_prefix',
            default_value='',
            description='Prepended verbatim to every frame id published on /tf and /tf_static.'),
        DeclareLaunchArgument(
            'use_sim_time',
            default_value='false',
            description='Use the /clock topic as the time source.'),
        DeclareLaunchArgument(
            'publish_frequency',
            default_value='20.0',
            description='Maximum rate (Hz) of /tf updates per joint.'),
        DeclareLaunchArgument(
            'params_file',
            default_value='',
            description='Optional YAML file of node parameters (launch arguments win).'),
    ]


def _params_files(context: LaunchContext) -> list[str]:
    """Return the params file given in 'params_file' as a one-element list, or no file."""
    params_file = LaunchConfiguration('params_file').perform(context).strip()
    return [params_file] if params_file else []


def _launch_setup(context: LaunchContext) -> list[Node]:
    """Build the node once the launch arguments are known.

    The params file comes first so that the launch arguments override what it sets.
    """
    robot_description = ParameterValue(
        Command([
            FindExecutable(name='xacro'), ' ',
            LaunchConfiguration('model'), ' ',
            LaunchConfiguration('xacro_args'),
        ]),
        value_type=str)
    return [
        Node(
            package='urdf_state_publisher',
            executable='urdf_state_publisher',
            name='urdf_state_publisher',
            namespace=LaunchConfiguration('namespace'),
            output='screen',
            parameters=[
                *_params_files(context),
                {
                    'robot_description': robot_description,
                    'frame_prefix': ParameterValue(
                        LaunchConfiguration('frame_prefix'), value_type=str),
                    'use_sim_time': ParameterValue(
                        LaunchConfiguration('use_sim_time'), value_type=bool),
                    'publish_frequency': ParameterValue(
                        LaunchConfiguration('publish_frequency'), value_type=float),
                },
            ],
        ),
    ]


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and start urdf_state_publisher."""
    return LaunchDescription([*declare_arguments(), OpaqueFunction(function=_launch_setup)])
