"""Show a robot description in RViz 2, published by urdf_state_publisher."""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def declare_arguments() -> list[DeclareLaunchArgument]:
    """Return the arguments of urdf_state_publisher.launch.py, then those of this file."""
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
            description='Namespace of urdf_state_publisher and joint_state_publisher_gui.'),
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
            description='Optional YAML file of urdf_state_publisher parameters; the arguments '
                        'above that are given override it.'),
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
    return [{'use_sim_time': ParameterValue(value, value_type=bool)}] if value else []


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
        launch_arguments={
            'model': LaunchConfiguration('model'),
            'xacro_args': LaunchConfiguration('xacro_args'),
            'namespace': LaunchConfiguration('namespace'),
            'frame_prefix': LaunchConfiguration('frame_prefix'),
            'use_sim_time': LaunchConfiguration('use_sim_time'),
            'publish_frequency': LaunchConfiguration('publish_frequency'),
            'params_file': LaunchConfiguration('params_file'),
        }.items(),
    )
    return LaunchDescription(
        [*declare_arguments(), publisher, OpaqueFunction(function=_viewers)])
