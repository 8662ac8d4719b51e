"""The node's topics and their QoS, seen from other processes: one sample-robot node for all."""

from conftest import SAMPLE_URDF
from node_fixtures import (
    assert_pose,
    BEST_EFFORT,
    by_child,
    children,
    joint_state,
    late_joiner,
    node_link_fixture,
    ns,
    q_rpy,
    RELIABLE,
    SAMPLE_CHILD,
    sample_pose,
    SAMPLE_STATIC,
)
import pytest
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

NAME = 'iface'

module_link = node_link_fixture(NAME, {'robot_description': SAMPLE_URDF.read_text()},
                                fixture='module_link')


@pytest.fixture
def link(module_link):
    module_link.begin()
    return module_link


def endpoints(graph, kind: str, topic: str) -> list:
    """The node's publishers (kind 'publishers') or subscriptions on `topic`, as discovered."""
    infos = getattr(graph, f'get_{kind}_info_by_topic')(topic)
    return [i for i in infos if i.node_name == NAME]


def test_topics_have_the_qos_of_robot_state_publisher(link):
    graph = link.probe.node
    wanted = {'joint_states': ('subscriptions', '/joint_states'),
              'multi_dof': ('subscriptions', '/multi_dof_joint_states'),
              'tf': ('publishers', '/tf'), 'tf_static': ('publishers', '/tf_static'),
              'description': ('publishers', '/robot_description')}
    # Discovery announces a node's endpoints one by one: wait for all of them.
    link.probe.wait_until(
        lambda: all(endpoints(graph, *where) for where in wanted.values()), 20,
        "the node's five endpoints on the graph")
    qos = {}
    for name, where in wanted.items():
        [info] = endpoints(graph, *where)
        qos[name] = info.qos_profile
    joint_states, multi_dof, tf, tf_static, description = qos.values()

    assert joint_states.reliability == ReliabilityPolicy.BEST_EFFORT
    assert joint_states.durability == DurabilityPolicy.VOLATILE
    assert multi_dof.reliability == ReliabilityPolicy.BEST_EFFORT
    assert (tf.reliability, tf.durability) == (ReliabilityPolicy.RELIABLE,
                                               DurabilityPolicy.VOLATILE)
    for latched in (tf_static, description):
        assert (latched.reliability, latched.durability) == (
            ReliabilityPolicy.RELIABLE, DurabilityPolicy.TRANSIENT_LOCAL)


@pytest.mark.parametrize('qos, sec', [(BEST_EFFORT, 100), (RELIABLE, 110)],
                         ids=['best_effort', 'reliable'])
def test_joint_state_publisher_of_either_reliability_is_heard(link, qos, sec):
    publisher = link.joint_states(qos)
    stamp = ns(sec, 250_000_000)
    values = {'shoulder_pan_joint': 0.5 + sec / 1000, 'elbow_joint': -0.7}

    message = link.publish_and_expect(publisher, joint_state(stamp, values))

    assert children(message) == {SAMPLE_CHILD[j] for j in values}
    frames = by_child([message])
    for joint, value in values.items():
        assert_pose(frames[SAMPLE_CHILD[joint]], sample_pose(joint, value))
    assert frames['forearm_link'].header.frame_id == 'upper_arm_link'
    assert all((t.header.stamp.sec, t.header.stamp.nanosec) == (sec, 250_000_000)
               for t in message.transforms)


def test_late_tf_static_subscriber_gets_every_fixed_frame_and_sensor_in_one_message(link):
    received = late_joiner(link.probe, TFMessage, '/tf_static')

    first = received[0]
    assert {t.child_frame_id: t.header.frame_id for t in first.transforms} == SAMPLE_STATIC
    assert len(first.transforms) == len(SAMPLE_STATIC)
    frames = by_child([first])
    assert_pose(frames['base_link'], ((0, 0, 0.1), (0, 0, 0, 1)))
    assert_pose(frames['laser_link'], ((0.22, 0, 0.17), (0, 0, 0, 1)))
    assert_pose(frames['tool0'], ((0.06, 0, 0), (0, 0, 0, 1)))
    assert_pose(frames['gripper_base_link'], ((0, 0, 0), (0, 0, 0, 1)))
    assert_pose(frames['camera_link'], ((0.01, 0, 0.045), q_rpy(0, 0.25, 0)))


def test_sensor_frames_are_static_children_of_their_links(link):
    frames = by_child(late_joiner(link.probe, TFMessage, '/tf_static'))

    camera, laser = frames['wrist_camera'], frames['base_laser']
    assert camera.header.frame_id == 'camera_link'
    assert_pose(camera, ((0.01, 0, 0), (0, 0, 0, 1)))
    assert laser.header.frame_id == 'laser_link'
    assert_pose(laser, ((0, 0, 0.03), (0, 0, 0, 1)))


def test_late_robot_description_subscriber_gets_the_text(link):
    received = late_joiner(link.probe, String, '/robot_description')

    assert received[0].data == SAMPLE_URDF.read_text()
