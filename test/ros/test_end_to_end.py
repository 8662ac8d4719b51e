"""The node in its own process on the sample robot, driven over real DDS."""

import math
import signal

from conftest import SAMPLE_URDF
from node_fixtures import by_child, joint_state, ns, numbers
import pytest
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.ros.qos import LATCHED_QOS, TF_QOS


@pytest.fixture
def sample_node(start_node):
    return start_node({'robot_description': SAMPLE_URDF.read_text()})


def test_static_frames_and_joint_transforms(sample_node, probe):
    static = probe.record(TFMessage, '/tf_static', LATCHED_QOS)
    tf = probe.record(TFMessage, '/tf', TF_QOS)
    probe.wait_until(lambda: static, 20, 'the /tf_static message')

    frames = by_child(static)
    # Fixed joints and both URDF <sensor> frames, in one complete message.
    assert len(static[-1].transforms) == len(frames)
    assert {'base_link', 'laser_link', 'tool0', 'gripper_base_link', 'camera_link',
            'wrist_camera', 'base_laser'} == set(frames)
    assert frames['base_link'].header.frame_id == 'base_footprint'
    assert numbers(frames['base_link']) == ((0.0, 0.0, 0.1), (0.0, 0.0, 0.0, 1.0))
    assert frames['wrist_camera'].header.frame_id == 'camera_link'

    publisher = probe.node.create_publisher(JointState, 'joint_states', 10)
    state = joint_state(ns(100), ['shoulder_pan_joint', 'torso_lift_joint', 'left_finger_joint'],
                        [0.5, 0.2, 0.02])
    probe.wait_until(lambda: publisher.get_subscription_count() > 0, 10, 'the node to subscribe')
    probe.wait_until(lambda: (publisher.publish(state) or tf), 10, 'a /tf message')

    moved = by_child(tf)
    # The named joints and the mimic followers they drive, nothing else.
    assert set(moved) == {'shoulder_pan_link', 'torso_link', 'left_finger_link',
                          'right_finger_link', 'right_finger_tip_link'}
    assert all(t.header.stamp.sec == 100 for t in moved.values())
    assert moved['shoulder_pan_link'].header.frame_id == 'torso_link'
    translation, rotation = numbers(moved['shoulder_pan_link'])
    # origin yaw 0.3 plus joint angle 0.5 about the same z axis
    assert translation == pytest.approx((0.0, 0.0, 0.4), abs=1e-12)
    assert rotation == pytest.approx((0.0, 0.0, math.sin(0.4), math.cos(0.4)), abs=1e-12)
    assert numbers(moved['torso_link'])[0] == pytest.approx((-0.1, 0.0, 0.35), abs=1e-12)
    # right finger mirrors the left one along -y; its tip mimics it with ×-10 + 0.1 = -0.1 rad
    assert numbers(moved['right_finger_link'])[0] == pytest.approx((0.03, -0.03, 0.0), abs=1e-12)
    assert numbers(moved['right_finger_tip_link'])[1] == pytest.approx(
        (0.0, 0.0, math.sin(-0.05), math.cos(-0.05)), abs=1e-12)


def test_sigterm_exits_cleanly(sample_node, probe):
    static = probe.record(TFMessage, '/tf_static', LATCHED_QOS)
    probe.wait_until(lambda: static, 20, 'the node to start')
    # stop() signals only a running process: one that ended by itself proves nothing here.
    assert sample_node.running(), sample_node.output()
    assert sample_node.stop(signal.SIGTERM) == 0, sample_node.output()
    assert 'Traceback' not in sample_node.output()
