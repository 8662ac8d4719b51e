"""Show a robot description in RViz 2, published by urdf_state_publisher."""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, TextSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from urdf_state_publisher.parameters import launch_arguments


def declare_arguments() -> list[DeclareLaunchArgument]:
    """Return the arguments of urdf_state_publisher.launch.py, then those of this file."""
    return [
        *launch_arguments(
            'Namespace of urdf_state_publisher and joint_state_publisher_gui.'),
        DeclareLaunchArgument(
            'gui',
            default_value='false',
            description='Start joint_state_publisher_gui; otherwise bring your own joint_states.'),
        DeclareLaunchArgument(
            'rviz_config',
            default_value=PathJoinSubstitution(
                [FindPackageShare('urdf_state_publisher'), 'config', 'display.rviz']),
            description='RViz 2 configuration file.'),
    ]


def _sim_time(context: LaunchContext) -> list[dict]:
    """Return use_sim_time for RViz and the sliders: as given, else nothing (their default)."""
    value = context.launch_configurations['use_sim_time'].strip()
    if not value:
        return []
    # launch_ros converts text to bool only from a substitution, not from a plain str.
    return [{'use_sim_time': ParameterValue(TextSubstitution(text=value), value_type=bool)}]


def _viewers(context: LaunchContext) -> list[Node]:
    """RViz 2 and, with gui:=true, joint_state_publisher_gui."""
    joint_sliders = Node(
        package='joint_state_publisher_gui',
        executable='joint_state_publisher_gui',
        name='joint_state_publisher_gui',
        namespace=LaunchConfiguration('namespace'),
        output='screen',
        parameters=_sim_time(context),
        condition=IfCondition(LaunchConfiguration('gui')),
    )
    rviz = Node(
        package='rviz2',
        executable='rviz2',
        name='rviz2',
        output='screen',
        arguments=['-d', LaunchConfiguration('rviz_config')],
        parameters=_sim_time(context),
    )
    return [joint_sliders, rviz]


def generate_launch_description() -> LaunchDescription:
    """Start urdf_state_publisher, RViz 2 and, with gui:=true, joint_state_publisher_gui."""
    publisher = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution(
                [FindPackageShare('urdf_state_publisher'), 'launch',
                 'urdf_state_publisher.launch.py'])),
        # Every argument of urdf_state_publisher.launch.py, as given here.
        launch_arguments=[
            (argument.name, LaunchConfiguration(argument.name))
            for argument in launch_arguments('')],
    )
    return LaunchDescription(
        [*declare_arguments(), publisher, OpaqueFunction(function=_viewers)])
