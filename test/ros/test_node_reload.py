"""Runtime parameter changes over /<node>/set_parameters: reloads, frame_prefix, validation.

One sample-robot node for the module; each test starts from the sample description with no
frame prefix and puts them back afterwards.
"""

import math
import re

from conftest import SAMPLE_URDF
from node_fixtures import (
    assert_pose,
    by_child,
    children,
    GRIPPER_CHILDREN,
    joint_state,
    late_joiner,
    node_link_fixture,
    ns,
    sample_pose,
    SAMPLE_STATIC,
)
import pytest
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.ros.qos import LATCHED_QOS

NAME = 'reload'
SAMPLE = SAMPLE_URDF.read_text()


def without(text: str, tag: str, name: str) -> str:
    """`text` without the element <tag name="name" ...>...</tag>."""
    pattern = rf'<{tag} name="{name}"[^>]*>.*?</{tag}>'
    assert re.search(pattern, text, re.DOTALL), (tag, name)
    return re.sub(pattern, '', text, count=1, flags=re.DOTALL)


# The sample robot without its laser (link, joint and sensor) and with a mast and a head.
RELOADED = without(without(without(SAMPLE, 'sensor', 'base_laser'), 'joint', 'laser_joint'),
                   'link', 'laser_link').replace('</robot>', """
  <link name="mast_link"/>
  <joint name="mast_joint" type="fixed">
    <parent link="base_link"/>
    <child link="mast_link"/>
    <origin xyz="0.1 0.2 0.5" rpy="0 0 0"/>
  </joint>
  <link name="head_link"/>
  <joint name="head_pan_joint" type="continuous">
    <parent link="mast_link"/>
    <child link="head_link"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
  </joint>
</robot>""")


module_link = node_link_fixture(NAME, {'robot_description': SAMPLE}, fixture='module_link')


@pytest.fixture
def link(module_link):
    module_link.begin()
    module_link.joint_states()
    yield module_link
    results = module_link.set_parameters(robot_description=SAMPLE, frame_prefix='')
    assert all(r.successful for r in results), [r.reason for r in results]


def test_valid_description_swaps_the_model_and_republishes_everything(link):
    descriptions = link.probe.record(String, '/robot_description', LATCHED_QOS)
    link.probe.wait_until(lambda: descriptions, 10, 'the first robot_description')

    [result] = link.set_parameters(robot_description=RELOADED)

    assert result.successful, result.reason
    link.probe.wait_until(lambda: descriptions[-1].data == RELOADED, 5,
                          'the new robot_description for a subscriber already there')
    assert late_joiner(link.probe, String, '/robot_description')[0].data == RELOADED
    static = late_joiner(link.probe, TFMessage, '/tf_static')[0]
    frames = {t.child_frame_id: t.header.frame_id for t in static.transforms}
    expected = {k: v for k, v in SAMPLE_STATIC.items() if k not in ('laser_link', 'base_laser')}
    assert frames == {**expected, 'mast_link': 'base_link'}
    assert_pose(by_child([static])['mast_link'], ((0.1, 0.2, 0.5), (0, 0, 0, 1)))
    message = link.publish_and_expect(link.joint_states(), joint_state(
        ns(100), ['head_pan_joint', 'elbow_joint'], [0.3, 0.4]))
    assert children(message) == {'head_link', 'forearm_link'}
    assert_pose(by_child([message])['head_link'], ((0, 0, 0.1), (0, 0, math.sin(0.15),
                                                                  math.cos(0.15))))


def test_unknown_joint_names_are_those_of_the_current_model(link):
    publisher = link.joint_states()
    link.publish_and_expect(publisher, joint_state(ns(105), ['head_pan_joint', 'elbow_joint'],
                                                   [0.1, 0.1]))
    before = link.wait_for_diagnostics(lambda v: 'head_pan_joint' in v['unknown joint names'])

    [result] = link.set_parameters(robot_description=RELOADED)
    assert result.successful, result.reason
    link.publish_and_expect(publisher, joint_state(ns(106), ['head_pan_joint'], [0.2]))

    # A status that counts the state sent after the reload, not one still on its way from
    # before it.
    received = int(before['joint_states received'])
    values = link.wait_for_diagnostics(lambda v: int(v['joint_states received']) > received)
    assert 'head_pan_joint' not in values['unknown joint names']


def test_mimic_joints_work_after_a_reload(link):
    [result] = link.set_parameters(robot_description=RELOADED)
    assert result.successful, result.reason

    message = link.publish_and_expect(link.joint_states(), joint_state(
        ns(110), ['left_finger_joint'], [0.015]))

    assert children(message) == GRIPPER_CHILDREN
    assert_pose(by_child([message])['right_finger_tip_link'],
                sample_pose('right_finger_tip_joint', -0.05))


@pytest.mark.parametrize('sec, description, problem', [
    (200, SAMPLE.replace('</robot>', ''), 'is not closed'),
    (210, SAMPLE.replace('<child link="tool0"/>', '<child link="ghost_link"/>'),
     "'ghost_link'"),
    (220, SAMPLE.replace('<mimic joint="left_finger_joint"',
                         '<mimic joint="right_finger_tip_joint"'), 'mimic cycle'),
    (230, SAMPLE.replace('</robot>', '<link name="orphan_link"/></robot>'), "'orphan_link'"),
    (240, '', 'empty'),
], ids=['malformed', 'missing_link', 'mimic_cycle', 'two_roots', 'empty'])
def test_invalid_description_is_rejected_and_the_old_model_keeps_running(link, sec, description,
                                                                         problem):
    [result] = link.set_parameters(robot_description=description)

    assert not result.successful
    assert problem in result.reason
    message = link.publish_and_expect(link.joint_states(), joint_state(
        ns(sec), ['elbow_joint', 'left_finger_joint'], [-0.3, 0.02]))
    assert children(message) == {'forearm_link'} | GRIPPER_CHILDREN
    assert_pose(by_child([message])['forearm_link'], sample_pose('elbow_joint', -0.3))
    static = late_joiner(link.probe, TFMessage, '/tf_static')[0]
    assert {t.child_frame_id for t in static.transforms} == set(SAMPLE_STATIC)
    assert late_joiner(link.probe, String, '/robot_description')[0].data == SAMPLE


def test_frame_prefix_change_republishes_tf_static_with_the_prefix(link):
    live = link.probe.record(TFMessage, '/tf_static', LATCHED_QOS)
    link.probe.wait_until(lambda: live, 10, 'the current /tf_static')

    [result] = link.set_parameters(frame_prefix='robot_a/')

    assert result.successful, result.reason
    link.probe.wait_until(
        lambda: live[-1].transforms[0].child_frame_id.startswith('robot_a/'), 5,
        'the prefixed /tf_static for a subscriber already there')
    static = late_joiner(link.probe, TFMessage, '/tf_static')[0]
    assert {t.child_frame_id: t.header.frame_id for t in static.transforms} == {
        f'robot_a/{child}': f'robot_a/{parent}' for child, parent in SAMPLE_STATIC.items()}
    message = link.publish_and_expect(link.joint_states(), joint_state(
        ns(1300), ['shoulder_pan_joint', 'left_finger_joint'], [0.1, 0.01]))
    assert {(t.header.frame_id, t.child_frame_id) for t in message.transforms} == {
        ('robot_a/torso_link', 'robot_a/shoulder_pan_link'),
        ('robot_a/gripper_base_link', 'robot_a/left_finger_link'),
        ('robot_a/gripper_base_link', 'robot_a/right_finger_link'),
        ('robot_a/right_finger_link', 'robot_a/right_finger_tip_link')}


# rclpy's reasons: out of range names the parameter; a wrong type names the expected type, as
# 'Type.DOUBLE' (Humble, Jazzy) or its number, '3' (Kilted on: its enum prints as the number).
OUT_OF_RANGE = 'Parameter publish_frequency out of range'
# The values the module's node runs with (the fixture puts back the two it changes).
STARTING_VALUES = {'publish_frequency': 20.0, 'frame_prefix': '', 'ignore_timestamp': False,
                   'use_smallest_joint_limits': False, 'description_file': '',
                   'use_robot_description_topic': False, 'xacro_args': []}


def wrong_type(expected: str, number: int) -> tuple[str, ...]:
    return (f"Wrong parameter type, expected 'Type.{expected}'",
            f"Wrong parameter type, expected '{number}'")


@pytest.mark.parametrize('sec, name, value, reasons', [
    (1400, 'publish_frequency', 0.0, (OUT_OF_RANGE,)),
    (1410, 'publish_frequency', -2.0, (OUT_OF_RANGE,)),
    (1420, 'publish_frequency', math.nan, (OUT_OF_RANGE,)),
    (1430, 'publish_frequency', math.inf, (OUT_OF_RANGE,)),
    (1440, 'publish_frequency', 'fast', wrong_type('DOUBLE', 3)),
    (1450, 'frame_prefix', 3, wrong_type('STRING', 4)),
    (1460, 'ignore_timestamp', 'yes', wrong_type('BOOL', 1)),
    (1470, 'use_smallest_joint_limits', 1, wrong_type('BOOL', 1)),
])
def test_unusable_runtime_values_are_rejected_with_a_reason(link, sec, name, value, reasons):
    [result] = link.set_parameters(**{name: value})

    assert not result.successful
    assert result.reason.startswith(reasons), result.reason
    assert link.get_parameter(name) == STARTING_VALUES[name]
    # Still running with the old values: 20 Hz, timestamps not ignored, no prefix. The state
    # 10 ms after the first also moves the shoulder, which is due: it comes out on /tf alone,
    # which shows the elbow was received in it and held back by the rate limit, not lost.
    publisher = link.joint_states()
    link.publish_and_expect(publisher, joint_state(ns(sec), ['elbow_joint'], [0.1]))
    held_back = link.publish_and_expect(publisher, joint_state(
        ns(sec, 10_000_000), ['elbow_joint', 'shoulder_pan_joint'], [0.2, 0.2]))
    message = link.publish_and_expect(publisher, joint_state(ns(sec, 50_000_000), ['elbow_joint'],
                                                             [0.3]))
    assert link.stamps() == [ns(sec), ns(sec, 10_000_000), ns(sec, 50_000_000)]
    assert children(held_back) == {'shoulder_pan_link'}
    assert children(message) == {'forearm_link'}


# rclpy refuses before the node's callback runs, with this reason.
READ_ONLY = 'Trying to set a read-only parameter: {}.'


@pytest.mark.parametrize('name, value', [
    ('description_file', str(SAMPLE_URDF)),
    ('use_robot_description_topic', True),
    ('xacro_args', ['prefix:=x_']),
])
def test_read_only_parameters_cannot_be_set_at_runtime(link, name, value):
    """Each value would be usable at startup: only the read-only flag refuses it."""
    [result] = link.set_parameters(**{name: value})

    assert not result.successful
    assert result.reason == READ_ONLY.format(name)
    assert link.get_parameter(name) == STARTING_VALUES[name]
