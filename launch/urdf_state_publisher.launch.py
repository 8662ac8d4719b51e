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
        # The three below set the node parameter of the same name only when given: left empty,
        # the params_file's value, else the node's default, stands.
        DeclareLaunchArgument(
            'frame_prefix',
            default_value='',
            description='Prepended verbatim to every frame id published on /tf and /tf_static '
                        "(default: the params_file's, else none)."),
        DeclareLaunchArgument(
            'use_sim_time',
            default_value='',
            description="Use the /clock topic as the time source: true or false (default: the "
                        "params_file's, else false)."),
        DeclareLaunchArgument(
            'publish_frequency',
            default_value='',
            description="Maximum rate (Hz) of /tf updates per joint (default: the params_file's, "
                        'else 20.0).'),
        DeclareLaunchArgument(
            'params_file',
            default_value='',
            description='Optional YAML file of node parameters; the arguments above that are '
                        'given override it.'),
    ]


def _params_files(context: LaunchContext) -> list[str]:
    """Return the params file given in 'params_file' as a one-element list, or no file."""
    params_file = LaunchConfiguration('params_file').perform(context).strip()
    return [params_file] if params_file else []


def _given(context: LaunchContext, types: dict[str, type]) -> dict[str, ParameterValue]:
    """Return the parameters among `types` whose launch argument was given a value.

    An argument left at its default, empty, is not passed at all, so that it cannot override
    the params file with a default the user never asked for.
    """
    given = {}
    for name, value_type in types.items():
        value = context.launch_configurations[name].strip()
        if value:
            given[name] = ParameterValue(value, value_type=value_type)
    return given


def _launch_setup(context: LaunchContext) -> list[Node]:
    """Build the node once the launch arguments are known.

    Later entries of `parameters` win: the params file, then the description from `model`,
    then the parameter arguments that were given.
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
                {'robot_description': robot_description},
                _given(context, {
                    'frame_prefix': str,
                    'use_sim_time': bool,
                    'publish_frequency': float,
                }),
            ],
        ),
    ]


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and start urdf_state_publisher."""
    return LaunchDescription([*declare_arguments(), OpaqueFunction(function=_launch_setup)])
