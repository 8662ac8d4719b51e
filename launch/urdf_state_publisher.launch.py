"""Start urdf_state_publisher on a robot description expanded by xacro."""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import Command, FindExecutable, LaunchConfiguration, TextSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from urdf_state_publisher.parameters import launch_arguments, LAUNCH_OVERRIDES


def declare_arguments() -> list[DeclareLaunchArgument]:
    """Return the launch arguments of this file, with their defaults (from the package)."""
    return launch_arguments(
        'Namespace of the node (and of its joint_states and robot_description).')


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
            # launch_ros converts text to value_type only from a substitution: a plain str
            # would have to be of value_type already.
            given[name] = ParameterValue(TextSubstitution(text=value), value_type=value_type)
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
                _given(context, LAUNCH_OVERRIDES),
            ],
        ),
    ]


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and start urdf_state_publisher."""
    return LaunchDescription([*declare_arguments(), OpaqueFunction(function=_launch_setup)])
