"""URDF 1.2 over DDS: a node started on a 1.2 description publishes its tf; a node on a 1.1
description reloads a 1.2 one.

The 1.2 sample is the sample arm declaring version="1.2", with acceleration, deceleration and
jerk on its limits: its frames are the sample's, whose poses node_fixtures computes by hand.
"""

import math
import re

from conftest import SAMPLE_URDF
from node_fixtures import (
    assert_pose,
    by_child,
    children,
    joint_state,
    late_joiner,
    node_link_fixture,
    ns,
    sample_pose,
    SAMPLE_STATIC,
)
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.ros.qos import LATCHED_QOS

SAMPLE = SAMPLE_URDF.read_text()


def declared(text: str, version: str) -> str:
    """`text` (a <robot> without a version attribute) declaring URDF `version`."""
    assert text.count('<robot name=') == 1
    return text.replace('<robot name=', f'<robot version="{version}" name=', 1)


SAMPLE_1_1 = declared(SAMPLE, '1.1')
# Every <limit> with acceleration and jerk, and a deceleration on the elbow's.
SAMPLE_1_2 = declared(re.sub(r'<limit ', '<limit acceleration="3" jerk="50" ', SAMPLE), '1.2')
SAMPLE_1_2 = SAMPLE_1_2.replace('<limit acceleration="3" jerk="50" effort="40.0"',
                                '<limit acceleration="3" deceleration="6" jerk="50" '
                                'effort="40.0"', 1)
assert SAMPLE_1_2.count('deceleration="6"') == 1
# The 1.1 sample reloaded as 1.2 with what only 1.2 accepts: a head joint whose <limit> has
# only a jerk, and a torso limit without effort and velocity.
TORSO_LIMIT = '<limit effort="500.0" lower="0.0" upper="0.3" velocity="0.1"/>'
assert SAMPLE.count(TORSO_LIMIT) == 1
RELOADED_1_2 = declared(SAMPLE.replace(TORSO_LIMIT, '<limit lower="0.0" upper="0.3"/>'),
                        '1.2').replace('</robot>', """
  <link name="head_link"/>
  <joint name="head_pan_joint" type="continuous">
    <parent link="base_link"/>
    <child link="head_link"/>
    <origin xyz="0 0 0.7" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
    <limit jerk="20"/>
  </joint>
</robot>""")


# One node at a time: each is used by one class and stopped when its class is done (both
# publish the sample's frames on /tf and /tf_static and read the same joint_states).
started_1_2 = node_link_fixture('urdf_1_2', {'robot_description': SAMPLE_1_2},
                                fixture='started_1_2', scope='class')
started_1_1 = node_link_fixture('urdf_1_1', {'robot_description': SAMPLE_1_1},
                                fixture='started_1_1', scope='class')


class TestStartedOnUrdf12:

    def test_a_node_started_on_a_1_2_description_publishes_its_tf(self, started_1_2):
        link = started_1_2
        link.begin()
        static = late_joiner(link.probe, TFMessage, '/tf_static')[0]
        assert {t.child_frame_id: t.header.frame_id for t in static.transforms} == SAMPLE_STATIC
        message = link.publish_and_expect(link.joint_states(), joint_state(
            ns(100), ['elbow_joint', 'torso_lift_joint'], [0.4, 0.2]))
        assert children(message) == {'forearm_link', 'torso_link'}
        assert_pose(by_child([message])['forearm_link'], sample_pose('elbow_joint', 0.4))
        assert_pose(by_child([message])['torso_link'], sample_pose('torso_lift_joint', 0.2))
        # A healthy 1.2 bringup: no WARN nor ERROR line.
        assert not re.search(r'^\[(WARN|ERROR)\]', link.log(), re.MULTILINE), link.log()


class TestReloadFromUrdf11To12:

    def test_a_reload_from_1_1_to_1_2_swaps_the_model(self, started_1_1):
        link = started_1_1
        link.begin()
        link.joint_states()
        descriptions = link.probe.record(String, '/robot_description', LATCHED_QOS)
        [result] = link.set_parameters(robot_description=RELOADED_1_2)
        assert result.successful, result.reason
        link.probe.wait_until(lambda: descriptions and descriptions[-1].data == RELOADED_1_2,
                              5, 'the 1.2 robot_description')
        message = link.publish_and_expect(link.joint_states(), joint_state(
            ns(200), ['head_pan_joint', 'torso_lift_joint'], [0.3, 0.25]))
        assert children(message) == {'head_link', 'torso_link'}
        assert_pose(by_child([message])['head_link'],
                    ((0, 0, 0.7), (0, 0, math.sin(0.15), math.cos(0.15))))
        assert_pose(by_child([message])['torso_link'], sample_pose('torso_lift_joint', 0.25))
        static = late_joiner(link.probe, TFMessage, '/tf_static')[0]
        assert {t.child_frame_id: t.header.frame_id for t in static.transforms} == SAMPLE_STATIC
