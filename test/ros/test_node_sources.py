"""Where the description and the first values come from; start-up failures; shutdown.

Each test starts a node of its own: these behaviours are about how a node starts and stops.
"""

import signal
import subprocess
import sys
import time

from conftest import SAMPLE_URDF, SAMPLE_XACRO
from node_fixtures import (
    assert_pose,
    by_child,
    children,
    compose,
    FIXTURES,
    joint_state,
    late_joiner,
    Link,
    MIXED_URDF,
    ns,
    prismatic,
    q_rpy,
    RELIABLE,
    revolute,
    SAMPLE_CHILD,
    sample_pose,
    SAMPLE_STATIC,
    stamp_of,
    wait_for_log,
    WARM_UP_SEC,
)
import pytest
from rclpy.qos import ReliabilityPolicy
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
import yaml

from urdf_state_publisher.ros.qos import LATCHED_QOS


def test_description_file_urdf_is_read_at_startup(start_node, probe):
    start_node({'description_file': str(SAMPLE_URDF)}, node_name='from_file')

    static = late_joiner(probe, TFMessage, '/tf_static')[0]
    description = late_joiner(probe, String, '/robot_description')[0]

    assert {t.child_frame_id: t.header.frame_id for t in static.transforms} == SAMPLE_STATIC
    assert description.data == SAMPLE_URDF.read_text()


def test_xacro_description_file_is_expanded_with_xacro_args(start_node, probe):
    node = start_node({'description_file': str(SAMPLE_XACRO),
                       'xacro_args': ['prefix:=left_', 'with_sensors:=false']},
                      node_name='from_xacro')
    link = Link(probe, node, name='from_xacro', warm_up_joint='left_torso_lift_joint')

    static = late_joiner(probe, TFMessage, '/tf_static')[0]
    message = link.publish_and_expect(link.joint_states(), joint_state(
        ns(100), ['left_shoulder_pan_joint'], [0.4]))

    assert {t.child_frame_id: t.header.frame_id for t in static.transforms} == {
        f'left_{child}': f'left_{parent}' for child, parent in SAMPLE_STATIC.items()
        if child not in ('wrist_camera', 'base_laser')}
    [stamped] = message.transforms
    assert (stamped.header.frame_id, stamped.child_frame_id) == ('left_torso_link',
                                                                 'left_shoulder_pan_link')
    assert_pose(stamped, sample_pose('shoulder_pan_joint', 0.4))


def test_frame_prefix_given_at_startup_prefixes_every_frame_id(start_node, probe):
    node = start_node({'robot_description': SAMPLE_URDF.read_text(), 'frame_prefix': 'arm1/'},
                      node_name='prefixed')
    link = Link(probe, node, name='prefixed', prefix='arm1/')

    static = late_joiner(probe, TFMessage, '/tf_static')[0]
    message = link.publish_and_expect(link.joint_states(), joint_state(
        ns(100), ['elbow_joint'], [0.1]))

    # sensors included; no separator is added: the prefix is used verbatim
    assert {t.child_frame_id: t.header.frame_id for t in static.transforms} == {
        f'arm1/{child}': f'arm1/{parent}' for child, parent in SAMPLE_STATIC.items()}
    assert [(t.header.frame_id, t.child_frame_id) for t in message.transforms] == [
        ('arm1/upper_arm_link', 'arm1/forearm_link')]


def test_topic_mode_waits_for_a_valid_description_on_the_topic(start_node, probe):
    node = start_node({'use_robot_description_topic': True}, node_name='topic_mode')
    link = Link(probe, node, name='topic_mode')
    static = probe.record(TFMessage, '/tf_static', LATCHED_QOS)
    graph = probe.node
    probe.wait_until(lambda: any(i.node_name == 'topic_mode' for i in
                                 graph.get_subscriptions_info_by_topic('/robot_description')),
                     10, 'the node to subscribe to robot_description')
    publisher = link.publisher()
    probe.wait_until(lambda: publisher.get_subscription_count() > 0, 10, 'joint_states')

    # Without a description, joint states are counted as dropped and nothing is published.
    def dropped(values):
        publisher.publish(joint_state(ns(50), ['elbow_joint'], [0.1]))
        return int(values.get('dropped: no robot description yet', '0')) > 0

    link.wait_for_diagnostics(dropped, timeout=15, what='a joint state dropped for lack of a '
                              'description')
    description = probe.node.create_publisher(String, 'robot_description', LATCHED_QOS)
    description.publish(String(data='<robot name="broken"><link name="a"/>'))
    wait_for_log(node, probe, 'ignoring the robot description received on the topic',
                 timeout=15)
    probe.spin_for(0.2)
    assert static == [] and link.tf == []
    assert not any(i.node_name == 'topic_mode' for i in
                   graph.get_publishers_info_by_topic('/robot_description'))

    description.publish(String(data=SAMPLE_URDF.read_text()))
    probe.wait_until(lambda: static, 15, '/tf_static after the valid description')
    message = link.publish_and_expect(link.joint_states(), joint_state(
        ns(100), ['elbow_joint'], [0.2]))

    assert {t.child_frame_id: t.header.frame_id for t in static[0].transforms} == SAMPLE_STATIC
    assert_pose(message.transforms[0], sample_pose('elbow_joint', 0.2))
    assert node.process.poll() is None


def test_default_positions_are_published_until_the_first_joint_state(start_node, probe):
    before = time.time_ns()  # the node stamps them with its clock: the same system clock
    node = start_node({'robot_description': SAMPLE_URDF.read_text(),
                       'publish_default_positions': True}, node_name='defaults')
    link = Link(probe, node, name='defaults')

    probe.wait_until(lambda: link.tf, 15, 'default positions on /tf')
    after = time.time_ns()
    frames = by_child(link.tf[:1])
    assert set(frames) == set(SAMPLE_CHILD.values())
    for joint, child in SAMPLE_CHILD.items():
        # 0 is inside every range; the tip mimics -10 × 0 + 0.1
        value = 0.1 if joint == 'right_finger_tip_joint' else 0.0
        assert_pose(frames[child], sample_pose(joint, value))
    assert {stamp_of(t) for t in link.tf[0].transforms} == {stamp_of(frames['torso_link'])}
    assert before <= stamp_of(frames['torso_link']) <= after
    probe.wait_until(lambda: len(link.tf) >= 3, 10, 'default positions repeated')

    link.joint_states()  # its first warm-up JointState stops the defaults
    probe.spin_for(0.4)  # 8 periods of the 20 Hz default timer

    # Only warm-ups that were still in flight when the handshake saw one: no default positions.
    assert all(children(m) == {'torso_link'} and stamp_of(m.transforms[0]) < ns(WARM_UP_SEC + 1)
               for m in link.tf), [children(m) for m in link.tf]


def test_default_positions_come_from_model_state_else_zero_or_mid_range(start_node, probe):
    node = start_node({'robot_description': MIXED_URDF.read_text(),
                       'publish_default_positions': True}, node_name='defaults_mixed')
    link = Link(probe, node, name='defaults_mixed')

    probe.wait_until(lambda: link.tf, 15, 'default positions on /tf')

    frames = by_child(link.tf[:1])
    assert set(frames) == {'body', 'cart', 'hinge_link', 'slide_link', 'spin_link', 'over_link',
                           'lead_link', 'mid_link', 'tail_link'}
    assert_pose(frames['hinge_link'], revolute((0, 1, 0), (0, 0, 0), (0, 1, 0), 1.0))
    assert_pose(frames['slide_link'], prismatic((0, -1, 0), (0, 0, 0), (1, 0, 0), 0.7))
    assert_pose(frames['spin_link'], revolute((0, 0, -1), (0, 0, 0), (0, 0, 1), 2.0))
    assert_pose(frames['over_link'], prismatic((-1, 0, 0), (0, 0, 0), (0, 0, 1), 0.2))
    assert_pose(frames['lead_link'], revolute((0, 0, 1), (0, 0, 0), (0, 0, 1), 0.0))
    assert_pose(frames['mid_link'], revolute((0.2, 0, 0), (0, 0, 0), (0, 0, 1), 0.1))
    assert_pose(frames['tail_link'], revolute((0.2, 0, 0), (0, 0, 0), (1, 0, 0), 0.2))
    # floating and planar joints at their origin
    assert_pose(frames['body'], compose(((1, 2, 3), q_rpy(0.1, 0.2, 0.5)),
                                        ((0, 0, 0), (0, 0, 0, 1))))
    assert_pose(frames['cart'], ((0.5, 0, 0.2), q_rpy(0.3, 0, 0)))


def test_joint_states_reliability_can_be_overridden_by_parameter(start_node, probe):
    node = start_node({'robot_description': SAMPLE_URDF.read_text(), 'qos_overrides': {
        '/joint_states': {'subscription': {'reliability': 'reliable'}}}},
        node_name='qos_override')
    link = Link(probe, node, name='qos_override')

    def subscription():
        infos = [i for i in probe.node.get_subscriptions_info_by_topic('/joint_states')
                 if i.node_name == 'qos_override']
        return infos[0].qos_profile if infos else None

    probe.wait_until(lambda: subscription() is not None, 10, 'the joint_states subscription')
    assert subscription().reliability == ReliabilityPolicy.RELIABLE
    message = link.publish_and_expect(link.joint_states(RELIABLE), joint_state(
        ns(100), ['elbow_joint'], [0.5]))
    assert_pose(message.transforms[0], sample_pose('elbow_joint', 0.5))


def test_integer_publish_frequency_in_a_parameters_file_is_used(start_node, probe):
    # YAML `publish_frequency: 10` is an integer; it must mean 10 Hz, not a type error.
    node = start_node({'robot_description': SAMPLE_URDF.read_text(), 'publish_frequency': 10},
                      node_name='integer_frequency')
    link = Link(probe, node, name='integer_frequency')
    publisher = link.joint_states()
    link.begin()

    link.publish_and_expect(publisher, joint_state(ns(100), ['elbow_joint'], [0.1]))
    # 50 ms later: due at 20 Hz (the default), not at 10 Hz; the torso shows it arrived.
    middle = link.publish_and_expect(publisher, joint_state(
        ns(100, 50_000_000), ['elbow_joint', 'torso_lift_joint'], [0.2, 0.1]))
    link.publish_and_expect(publisher, joint_state(ns(100, 100_000_000), ['elbow_joint'], [0.3]))

    assert children(middle) == {'torso_link'}
    assert link.stamps() == [ns(100), ns(100, 50_000_000), ns(100, 100_000_000)]


# --------------------------------------------------------------------------- start-up failures

FAILURES = {  # case: (parameters, what the message must contain)
    'malformed_urdf': ({'robot_description': '<robot name="x"><link name="a"/>'},
                       'is not closed'),
    'missing_link': ({'robot_description': '<robot name="x"><link name="a"/><joint name="j" '
                                           'type="fixed"><parent link="a"/><child link="b"/>'
                                           '</joint></robot>'}, "'b'"),
    'missing_file': ({'description_file': '/nonexistent/robot.urdf'}, '/nonexistent/robot.urdf'),
    'frequency_zero': ({'description_file': str(SAMPLE_URDF), 'publish_frequency': 0.0},
                       'publish_frequency'),
    'frequency_negative': ({'description_file': str(SAMPLE_URDF), 'publish_frequency': -5.0},
                           'publish_frequency'),
    'frequency_text': ({'description_file': str(SAMPLE_URDF), 'publish_frequency': 'fast'},
                       'publish_frequency'),
    'no_description': ({}, 'no robot description'),
    'feedback_listed': ({'description_file': str(SAMPLE_URDF), 'publish_joint_states': True,
                         'source_list': ['arm/joint_states', 'joint_states']},
                        'Remove /joint_states from source_list'),
    'source_listed_twice': ({'description_file': str(SAMPLE_URDF),
                             'source_list': ['arm/joint_states', '/arm/joint_states']},
                            'list each topic once'),
    'source_not_a_topic': ({'description_file': str(SAMPLE_URDF),
                            'source_list': ['arm joint states']}, 'not a valid topic name'),
    # joint_state_publisher's parameters that mean nothing here, or do not fit the robot
    'jsp_delta': ({'description_file': str(SAMPLE_URDF), 'delta': 0.1},
                  'delta: this node does not sweep the joints'),
    'jsp_no_default_positions': ({'description_file': str(SAMPLE_URDF),
                                  'publish_joint_states': True,
                                  'publish_default_positions': False},
                                 'publish_default_positions: false does not go with'),
    'jsp_rate_zero': ({'description_file': str(SAMPLE_URDF), 'rate': 0}, 'rate must be'),
    'zeros_unknown_joint': ({'description_file': str(SAMPLE_URDF),
                             'zeros': {'no_such_joint': 0.1}},
                            "zeros.no_such_joint: robot 'sample_arm' has no joint"),
    'dependent_cycle': ({'description_file': str(SAMPLE_URDF), 'dependent_joints': {
        'elbow_joint': {'parent': 'wrist_roll_joint'},
        'wrist_roll_joint': {'parent': 'elbow_joint', 'factor': -1.0}}},
        'dependent_joints: mimic cycle'),
    'dependent_has_mimic': ({'description_file': str(SAMPLE_URDF), 'dependent_joints': {
        'right_finger_joint': {'parent': 'elbow_joint'}}},
        "dependent_joints.right_finger_joint: joint 'right_finger_joint' already mimics"),
    'dependent_no_parent': ({'description_file': str(SAMPLE_URDF), 'dependent_joints': {
        'elbow_joint': {'factor': 2.0}}}, 'dependent_joints.elbow_joint: no parent'),
    'xacro_error': ({'description_file': str(FIXTURES / 'broken.urdf.xacro')},
                    'undefined_property'),
    'bad_xacro_args': ({'description_file': str(SAMPLE_XACRO), 'xacro_args': ['prefix']},
                       'xacro_args'),
}
# How long after its start a case may take to exit. Nine start at once, and on a loaded 2-core
# machine each imports rclpy and xacro on a share of one core: once 4 of them had not exited
# 60 s after start (both cores busy with a CPU hog and another test run). A hang never exits.
FAILURE_DEADLINE_S = 120.0


@pytest.fixture(scope='module')
def failed_starts(tmp_path_factory):
    """Every FAILURES case started at once: {case: (process, start time)}."""
    runs = {}
    for case, (parameters, _) in FAILURES.items():
        directory = tmp_path_factory.mktemp(case)
        params = directory / 'params.yaml'
        params.write_text(yaml.safe_dump({'/**': {'ros__parameters': parameters}}))
        process = subprocess.Popen(
            [sys.executable, '-m', 'urdf_state_publisher', '--ros-args', '--params-file',
             str(params)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=directory)
        runs[case] = (process, time.monotonic())
    yield runs
    for process, _ in runs.values():
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_a_node_that_cannot_start_leaves_nothing_on_the_graph():
    # In-process, real rclpy: its entities go when it raises, not when the garbage collector
    # reaches the half-built node (at exit, possibly after the context).
    import rclpy
    from rclpy.parameter import Parameter

    from urdf_state_publisher.errors import StartupError
    from urdf_state_publisher.ros.node import UrdfStatePublisher
    from urdf_state_publisher.ros.process import init_ros

    context = rclpy.Context()
    init_ros([], context=context)
    try:
        probe = rclpy.create_node('graph_probe', context=context)
        with pytest.raises(StartupError, match='publish_frequency') as failure:
            UrdfStatePublisher(context=context, parameter_overrides=[
                Parameter('description_file', value=str(SAMPLE_URDF)),
                Parameter('publish_frequency', value=0.0)])
        # The traceback in `failure` still holds the half-built node.
        assert failure.traceback
        assert 'urdf_state_publisher' not in probe.get_node_names()
        probe.destroy_node()
    finally:
        context.try_shutdown()


@pytest.mark.parametrize('case', FAILURES)
def test_startup_failure_exits_1_with_a_one_line_message(failed_starts, case):
    process, started = failed_starts[case]
    try:
        stdout, stderr = process.communicate(
            timeout=max(0.0, started + FAILURE_DEADLINE_S - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        pytest.fail(f'still running {FAILURE_DEADLINE_S} s after start; its output:\n'
                    f'{stdout[-2000:]}{stderr[-2000:]}')

    assert process.returncode == 1
    assert 'Traceback' not in stderr + stdout
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith('urdf_state_publisher: ')
    assert FAILURES[case][1] in lines[0]


# --------------------------------------------------------------------------- shutdown

@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=['SIGINT', 'SIGTERM'])
def test_signal_stops_the_node_with_status_0(start_node, probe, sig):
    node = start_node({'robot_description': SAMPLE_URDF.read_text()},
                      node_name=f'stop_{sig.name.lower()}')
    late_joiner(probe, TFMessage, '/tf_static')  # up and running

    assert node.stop(sig) == 0
    assert 'Traceback' not in node.log_file.read_text()
