"""Show a robot description in RViz 2 and, with gui:=true, in a browser with joint sliders.

With gui:=true, urdf_state_publisher_view shows the robot in a browser
(http://127.0.0.1:8080) with joint sliders that publish joint_states, and RViz 2 starts beside
it where it is installed. Without gui:=true the node publishes joint_states itself (every joint
at its default), as joint_state_publisher does beside robot_state_publisher, and RViz 2 shows
the robot. Before it starts anything, this checks its arguments and that what it starts is
installed: a problem ends the launch with one line and nothing running. RViz's view follows
the node's namespace, frame_prefix and the model's root link.
"""

import os
import tempfile

from ament_index_python.packages import get_package_prefix, PackageNotFoundError
from launch import LaunchContext, LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    IncludeLaunchDescription,
    LogInfo,
    OpaqueFunction,
    RegisterEventHandler,
)
from launch.event_handlers import OnShutdown
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from urdf_state_publisher.ros.launch_support import (
    display_joint_states,
    GUI,
    install_hint,
    launch_arguments,
    LaunchArgumentError,
    missing_packages,
    NODE_NAME,
    node_namespace,
    node_setup,
    parameter_overrides,
    render_rviz_config,
    rviz_view,
    RvizView,
    VIEW_HINT,
    view_installed,
    viewer_flags,
)


def declare_arguments() -> list[DeclareLaunchArgument]:
    """Return the arguments of urdf_state_publisher.launch.py, then those of this file."""
    return [
        *launch_arguments(
            'Namespace of urdf_state_publisher and urdf_state_publisher_view.'),
        DeclareLaunchArgument(
            GUI.name, default_value='false', description=GUI.description),
        DeclareLaunchArgument(
            'rviz_config', default_value='',
            description="RViz 2 configuration file, used as it is (default: the package's "
                        'config/display.rviz, set to the namespace, frame_prefix and root link).'),
    ]


def _installed(package: str) -> bool:
    try:
        get_package_prefix(package)
    except PackageNotFoundError:
        return False
    return True


def _remove(path: str) -> None:
    if os.path.exists(path):
        os.remove(path)


def _rviz_config(context: LaunchContext, view: RvizView) -> tuple[str, list]:
    """The config RViz opens, and the actions that go with it (a note, the cleanup)."""
    given = context.launch_configurations.get('rviz_config', '').strip()
    if given:
        if not os.path.isfile(given):
            raise LaunchArgumentError(f'launch argument rviz_config: no file at {given!r}')
        return given, []
    template = os.path.join(FindPackageShare(NODE_NAME).perform(context), 'config', 'display.rviz')
    with open(template, encoding='utf-8') as template_file:
        text = render_rviz_config(template_file.read(), view)
    descriptor, path = tempfile.mkstemp(prefix='urdf_state_publisher_', suffix='.rviz')
    with os.fdopen(descriptor, 'w', encoding='utf-8') as rendered:
        rendered.write(text)
    actions = [RegisterEventHandler(OnShutdown(on_shutdown=lambda *_: _remove(path)))]
    if view.note:
        actions.append(LogInfo(msg=f'display.launch.py: {view.note}'))
    return path, actions


def _launch_setup(context: LaunchContext) -> list:
    """Check everything, then start urdf_state_publisher, RViz and the optional view.

    An exception here ends the launch before anything runs; launch prints its message.
    """
    flags = viewer_flags(context.launch_configurations)
    missing = missing_packages(flags, _installed)
    if missing:
        raise LaunchArgumentError(install_hint(missing, os.environ.get('ROS_DISTRO')))
    if flags[GUI.name] and not view_installed():
        raise LaunchArgumentError(VIEW_HINT)
    share = FindPackageShare(NODE_NAME).perform(context)
    namespace = node_namespace(context.launch_configurations)
    setup = node_setup(context.launch_configurations, namespace, share)
    given = parameter_overrides(context.launch_configurations)
    # RViz and the view follow the node's use_sim_time only when it is given: their default.
    sim_time = ([{'use_sim_time': ParameterValue(given['use_sim_time'], value_type=bool)}]
                if 'use_sim_time' in given else [])
    actions, viewers = [], []
    if _installed('rviz2'):
        rviz_config, actions = _rviz_config(context, rviz_view(setup, namespace))
        viewers.append(Node(package='rviz2', executable='rviz2', name='rviz2', output='screen',
                            arguments=['-d', rviz_config], parameters=sim_time))
    if flags[GUI.name]:
        viewers.append(Node(
            package=NODE_NAME, executable='urdf_state_publisher_view',
            name='urdf_state_publisher_view', namespace=LaunchConfiguration('namespace'),
            output='screen', parameters=sim_time))
    # Without the sliders the node publishes joint_states itself, as joint_state_publisher
    # would beside robot_state_publisher: the model shows at its defaults.
    joint_states = display_joint_states(context.launch_configurations, flags)
    publisher = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            os.path.join(share, 'launch', 'urdf_state_publisher.launch.py')),
        # Every argument of urdf_state_publisher.launch.py, as given here.
        launch_arguments=[
            (argument.name, joint_states if argument.name == 'publish_joint_states'
             else LaunchConfiguration(argument.name))
            for argument in launch_arguments('')],
    )
    return [*actions, publisher, *viewers]


def generate_launch_description() -> LaunchDescription:
    """Start urdf_state_publisher, RViz 2 and, with gui:=true, urdf_state_publisher_view."""
    return LaunchDescription([*declare_arguments(), OpaqueFunction(function=_launch_setup)])
