"""A container's load request as node arguments, without ROS (composition.node_arguments).

Expected values are written by hand from rclcpp_components' ComponentManager (its
create_node_options: the request's remap rules, then `__node` and `__ns`, no global arguments)
and composition_interfaces/LoadNode.
"""

from __future__ import annotations

import pytest

from urdf_state_publisher.ros.composition import (
    LoadRequest,
    LoadRequestError,
    logger_name,
    node_arguments,
)

pytestmark = pytest.mark.ros_free

OURS = ('urdf_state_publisher', 'urdf_state_publisher::UrdfStatePublisher')
RSP = ('robot_state_publisher', 'robot_state_publisher::RobotStatePublisher')


def request(plugin=OURS, **values) -> LoadRequest:
    return LoadRequest(package_name=plugin[0], plugin_name=plugin[1], **values)


def test_name_namespace_and_remaps_become_ros_args_in_rclcpps_order():
    arguments = node_arguments(request(
        node_name='rsp', node_namespace='/left', remap_rules=('joint_states:=arm/js', 'a:=b')))
    assert arguments.cli_args == ('--ros-args', '-r', 'joint_states:=arm/js', '-r', 'a:=b',
                                  '-r', '__node:=rsp', '-r', '__ns:=/left')
    assert (arguments.node_name, arguments.namespace) == ('rsp', '/left')


@pytest.mark.parametrize(('plugin', 'name'), [(OURS, 'urdf_state_publisher'),
                                              (RSP, 'robot_state_publisher')])
def test_a_request_without_a_name_gets_the_plugins_default_name_at_the_root(plugin, name):
    arguments = node_arguments(request(plugin))
    assert arguments.cli_args == ('--ros-args', '-r', f'__node:={name}', '-r', '__ns:=/')
    assert arguments.plugin.name == plugin[1]


def test_a_relative_namespace_is_taken_from_the_root():
    assert node_arguments(request(node_namespace='robot1/arm')).namespace == '/robot1/arm'


def test_parameters_pass_through_and_global_arguments_stay_out():
    parameters = (object(), object())
    arguments = node_arguments(request(parameters=parameters))
    assert arguments.parameters == parameters
    assert dict(arguments.node_keywords) == {'use_global_arguments': False}
    assert arguments.notes == ()


@pytest.mark.parametrize('plugin', [
    ('robot_state_publisher', 'robot_state_publisher::JointStatePublisher'),
    ('urdf_state_publisher', 'robot_state_publisher::RobotStatePublisher'),  # wrong package
    ('composition', 'composition::Talker'),
])
def test_an_unknown_plugin_is_refused_naming_what_the_container_loads(plugin):
    with pytest.raises(LoadRequestError) as refused:
        node_arguments(request(plugin))
    message = str(refused.value)
    assert f"'{plugin[1]}'" in message and f"'{plugin[0]}'" in message
    assert "'urdf_state_publisher::UrdfStatePublisher' (package 'urdf_state_publisher')" in message
    assert ("'robot_state_publisher::RobotStatePublisher' (package 'robot_state_publisher')"
            in message)
    assert '\n' not in message


def test_intra_process_comms_is_accepted_and_said_once_what_it_means_here():
    arguments = node_arguments(request(extra_arguments=(('use_intra_process_comms', True),)))
    assert len(arguments.notes) == 1
    assert 'intra-process' in arguments.notes[0]
    assert dict(arguments.node_keywords) == {'use_global_arguments': False}
    unasked = node_arguments(request(extra_arguments=(('use_intra_process_comms', False),)))
    assert unasked.notes == ()


def test_extra_arguments_that_rclpy_has_set_the_nodes_arguments():
    arguments = node_arguments(request(extra_arguments=(
        ('forward_global_arguments', True), ('enable_rosout', False),
        ('start_parameter_services', False), ('enable_logger_service', True))))
    assert dict(arguments.node_keywords) == {
        'use_global_arguments': True, 'enable_rosout': False, 'start_parameter_services': False,
        'enable_logger_service': True}


@pytest.mark.parametrize(('extra', 'words'), [
    (('use_intra_process_comms', 1), ("'use_intra_process_comms'", 'boolean')),
    (('enable_rosout', 'true'), ("'enable_rosout'", 'boolean')),
    (('forward_global_arguments', None), ("'forward_global_arguments'", 'boolean')),
    (('use_multithreaded_executor', True), ("'use_multithreaded_executor'", 'not supported')),
])
def test_an_unusable_extra_argument_is_refused_by_name(extra, words):
    with pytest.raises(LoadRequestError) as refused:
        node_arguments(request(extra_arguments=(extra,)))
    assert all(word in str(refused.value) for word in words)


@pytest.mark.parametrize('level', [0, 10, 20, 30, 40, 50])
def test_the_log_levels_of_rcl_interfaces_log_are_taken(level):
    assert node_arguments(request(log_level=level)).log_level == level


@pytest.mark.parametrize('level', [1, 25, 255])
def test_a_log_level_that_is_none_is_refused(level):
    with pytest.raises(LoadRequestError, match=f'log_level {level} '):
        node_arguments(request(log_level=level))


@pytest.mark.parametrize(('name', 'namespace', 'expected'), [
    ('rsp', '/', 'rsp'),
    ('rsp', '/left', 'left.rsp'),
    ('rsp', '/fleet/r7', 'fleet.r7.rsp'),
])
def test_logger_name_is_rcls(name, namespace, expected):
    assert logger_name(name, namespace) == expected
