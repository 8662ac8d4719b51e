"""One node instead of two: source_list merging and the resolved joint_states, over DDS.

The node reads an arm driver's and a gripper driver's topics (source_list) and publishes the
resolved state on joint_states (publish_joint_states), as joint_state_publisher did next to
robot_state_publisher. Each node runs in a namespace of its own, so its topics are its own.
Expected values are computed here from the sample robot's URDF numbers: the gripper's
right_finger_joint mimics left_finger_joint (×1 + 0) and right_finger_tip_joint mimics
right_finger_joint (×-10 + 0.1) within [-0.2, 0.1].
"""

from __future__ import annotations

import math
import time

from conftest import SAMPLE_URDF
from diagnostic_msgs.msg import DiagnosticStatus
from node_fixtures import (
    ARM,
    assert_pose,
    deeper,
    Link,
    NodeProcess,
    ns,
    Probe,
    RELIABLE,
    sample_pose,
    set_stamp,
    stamp_of,
)
import pytest
from rclpy.qos import ReliabilityPolicy
from sensor_msgs.msg import JointState

pytestmark = pytest.mark.timeout(180)

# Every single-value joint of the sample robot, in its order: the resolved state's names.
SAMPLE_JOINTS = [*ARM, 'left_finger_joint', 'right_finger_joint', 'right_finger_tip_joint']
GRIPPER = ['left_finger_joint']
MERGING = {'robot_description': SAMPLE_URDF.read_text(),
           'source_list': ['arm/joint_states', 'gripper/joint_states'],
           'publish_joint_states': True}


def state(stamp_ns: int, names, positions, velocities=(), efforts=()) -> JointState:
    message = JointState(name=list(names), position=[float(p) for p in positions],
                         velocity=[float(v) for v in velocities],
                         effort=[float(e) for e in efforts])
    set_stamp(message.header, stamp_ns)
    return message


class Merger:
    """A merging node in namespace `namespace`: its two sources and its outputs."""

    def __init__(self, probe: Probe, tmp_path, namespace: str, parameters: dict = MERGING):
        self.probe = probe
        self.namespace = f'/{namespace}'
        self.name = namespace  # /diagnostics names statuses by node name alone
        self.process = NodeProcess(tmp_path, parameters, ('-r', f'__ns:={self.namespace}'),
                                   node_name=namespace)
        self.arm = probe.node.create_publisher(JointState, f'{self.namespace}/arm/joint_states',
                                               10)
        self.gripper = probe.node.create_publisher(
            JointState, f'{self.namespace}/gripper/joint_states', 10)
        self.resolved = probe.record(JointState, f'{self.namespace}/joint_states',
                                     deeper(RELIABLE, 100))
        # Its /tf and /diagnostics, recorded and read as for every node of the tests.
        self.link = Link(probe, self.process, name=namespace, namespace=self.namespace)
        self.tf, self.diagnostics = self.link.tf, self.link.diagnostics

    def wait_subscribed(self) -> None:
        self.probe.wait_until(
            lambda: self.arm.get_subscription_count() and self.gripper.get_subscription_count()
            and self.probe.node.count_publishers(f'{self.namespace}/joint_states'),
            30, f'the merger in {self.namespace} to start ({self.process.output()[-500:]})')

    def send_until_resolved(self, stamp_ns: int, arm: JointState | None,
                            gripper: JointState | None, timeout: float = 15.0) -> JointState:
        """The resolved state after `gripper` (if given), then `arm` 60 ms of stamps later.

        Each is a publish interval (50 ms) past the one before, so each gives a resolved state,
        stamped with its own stamp: the last one holds both. A best-effort subscription may lose
        a message, so each attempt starts 0.2 s of stamps after the last one, from `stamp_ns`.
        """
        deadline = time.monotonic() + timeout
        attempt_ns = stamp_ns
        while True:
            sent = []
            for publisher, message in ((self.gripper, gripper), (self.arm, arm)):
                if message is not None:
                    set_stamp(message.header, attempt_ns + 60_000_000 * len(sent))
                    publisher.publish(message)
                    sent.append(stamp_of(message))
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                self.probe.spin(0.02)
                stamps = {stamp_of(m) for m in self.resolved}
                if all(stamp in stamps for stamp in sent):
                    return next(m for m in self.resolved if stamp_of(m) == sent[-1])
            if time.monotonic() > deadline:
                pytest.fail(f'no resolved state stamped {sent} within {timeout} s; node log:'
                            f'\n{self.process.output()[-2000:]}')
            attempt_ns += 200_000_000

    def diagnostic_values(self, predicate, timeout: float = 10.0) -> dict:
        """The KeyValues (with '_level' and '_message') of the first new status that fits."""
        return self.link.wait_for_diagnostics(predicate, timeout, 'a matching status')


@pytest.fixture(scope='module')
def merger(module_probe, tmp_path_factory):
    node = Merger(module_probe, tmp_path_factory.mktemp('merger'), 'merging')
    try:
        node.wait_subscribed()
        yield node
    finally:
        node.process.stop()


def by_name(message: JointState, field: str) -> dict:
    return dict(zip(message.name, getattr(message, field)))


def test_arm_and_gripper_merge_into_one_resolved_state_with_the_mimic_finger(merger):
    arm = state(0, ARM, [0.1, 0.2, 0.3, 0.4, 0.5], velocities=[1.0, 1.1, 1.2, 1.3, 1.4])
    gripper = state(0, GRIPPER, [0.005], velocities=[0.02], efforts=[3.0])

    resolved = merger.send_until_resolved(ns(100), arm, gripper)

    assert list(resolved.name) == SAMPLE_JOINTS
    positions, velocities = by_name(resolved, 'position'), by_name(resolved, 'velocity')
    assert [positions[j] for j in ARM] == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert positions['left_finger_joint'] == 0.005
    assert positions['right_finger_joint'] == 1 * 0.005 + 0
    assert positions['right_finger_tip_joint'] == pytest.approx(-10 * 0.005 + 0.1, abs=1e-15)
    assert [velocities[j] for j in ARM] == [1.0, 1.1, 1.2, 1.3, 1.4]
    assert velocities['right_finger_joint'] == 0.02
    assert velocities['right_finger_tip_joint'] == pytest.approx(-10 * 0.02, abs=1e-15)
    # Efforts: the gripper's, its followers' (the leader's), NaN where no source gave one.
    efforts = by_name(resolved, 'effort')
    assert [efforts[j] for j in GRIPPER + ['right_finger_joint', 'right_finger_tip_joint']] \
        == [3.0, 3.0, 3.0]
    assert all(math.isnan(efforts[j]) for j in ARM)


def test_a_clamped_value_is_published_clamped_as_on_tf(merger):
    # torso_lift_joint stops at 0.3; the tip follower at -0.2 (-10 × 0.04 + 0.1 = -0.3).
    arm = state(0, ARM, [0.45, 0.0, 0.0, 0.0, 0.0])
    gripper = state(0, GRIPPER, [0.04])

    resolved = merger.send_until_resolved(ns(200), arm, gripper)

    positions = by_name(resolved, 'position')
    assert positions['torso_lift_joint'] == 0.3
    assert positions['right_finger_tip_joint'] == -0.2
    # No source gave a velocity or effort for these states: empty arrays, no made-up zeros.
    assert list(resolved.velocity) == [] and list(resolved.effort) == []
    stamp = stamp_of(resolved)
    merger.probe.wait_until(lambda: any(
        t.child_frame_id == 'torso_link' and stamp_of(t) == stamp
        for m in merger.tf for t in m.transforms), 10, 'the clamped torso on /tf')
    torso = next(t for m in merger.tf for t in m.transforms
                 if t.child_frame_id == 'torso_link' and stamp_of(t) == stamp)
    assert_pose(torso, sample_pose('torso_lift_joint', 0.3))


def test_the_resolved_state_follows_publish_frequency_on_stamps(merger):
    # 100 Hz of arm states over 1 s of stamps: at the default 20 Hz, one resolved state per
    # 50 ms of stamps, each with the stamp and the values of the state that made it due.
    start = ns(300)
    merger.send_until_resolved(start, state(0, ARM, [0.0] * 5), None)
    merger.resolved.clear()
    began = time.monotonic()  # sent in real time: a burst would overrun the node's queue
    for k in range(1, 101):
        merger.arm.publish(state(start + k * 10_000_000, ARM, [0.001 * k] * 5))
        merger.probe.spin_for(max(0.0, began + k * 0.01 - time.monotonic()))
    # One more, 0.2 s of stamps later (again until one arrives): whatever was lost, it is due.
    merger.send_until_resolved(start + ns(1) + 200_000_000, state(0, ARM, [0.0] * 5), None)
    resolved = [m for m in merger.resolved if start < stamp_of(m) <= start + ns(1)]
    stamps = [stamp_of(m) for m in resolved]
    assert all(b - a >= 50_000_000 for a, b in zip(stamps, stamps[1:])), stamps
    assert 15 <= len(stamps) <= 20, stamps  # a best-effort source may lose a few
    for message in resolved:
        k = (stamp_of(message) - start) // 10_000_000
        assert by_name(message, 'position')['elbow_joint'] == pytest.approx(0.001 * k)


def statuses_of(merger: Merger) -> list[dict]:
    """The KeyValues (with '_level' and '_message') of every status of `merger` received."""
    return [{**{kv.key: kv.value for kv in status.values}, '_level': status.level,
             '_message': status.message} for status in merger.link.diagnostic_statuses()]


def test_each_source_is_shown_with_its_topic_and_a_stopped_one_is_named(merger):
    namespace = merger.namespace
    arm_topic, gripper_topic = (f'{namespace}/{s}/joint_states' for s in ('arm', 'gripper'))
    start = ns(400)
    merger.diagnostics.clear()
    # Both at 50 Hz, in real time, for 3 s, then the arm alone until the gripper is reported.
    # What the node says before the gripper stops is left out of what it says after: an earlier
    # test may have left the gripper silent long enough to be reported stopped already.
    began = time.monotonic()
    for k in range(500):
        stamp = start + k * 20_000_000
        merger.arm.publish(state(stamp, ARM, [0.0] * 5))
        if k < 150:
            merger.gripper.publish(state(stamp, GRIPPER, [0.01]))
        elif k == 150:
            statuses_before, log_before = len(statuses_of(merger)), len(merger.process.output())
        merger.probe.spin_for(max(0.0, began + (k + 1) * 0.02 - time.monotonic()))
        if k >= 150 and any(v.get('stopped sources')
                            for v in statuses_of(merger)[statuses_before:]):
            break
    statuses = statuses_of(merger)
    healthy = [v for v in statuses[:statuses_before] if v['_level'] == DiagnosticStatus.OK
               and {v.get('source 1 topic'), v.get('source 2 topic')} == {arm_topic,
                                                                          gripper_topic}]
    assert healthy, [v['_message'] for v in statuses]
    assert max(float(v['source 1 rate (Hz)']) for v in healthy) > 30
    reported = [v for v in statuses[statuses_before:] if v.get('stopped sources')]
    assert reported, [v['_message'] for v in statuses]
    stopped = reported[0]
    assert stopped['_level'] == DiagnosticStatus.WARN
    assert stopped['stopped sources'].startswith(f'{gripper_topic} (')
    assert 'left_finger_joint' in stopped['stopped sources']
    assert gripper_topic in stopped['_message']
    merger.probe.wait_until(
        lambda: 'joint-state sources stopped' in merger.process.output()[log_before:], 5,
        'the stopped source in the node log')
    [line] = [line for line in merger.process.output()[log_before:].splitlines()
              if 'joint-state sources stopped' in line]
    assert '[WARN]' in line and gripper_topic in line and 'left_finger_joint' in line


def test_defaults_are_published_until_a_source_sends_and_marked_in_diagnostics(
        module_probe, tmp_path):
    node = Merger(module_probe, tmp_path, 'merging_defaults')
    try:
        node.wait_subscribed()
        module_probe.wait_until(lambda: len(node.resolved) >= 3, 10, 'default positions')
        defaults = node.resolved[-1]
        assert list(defaults.name) == SAMPLE_JOINTS
        # 0 within each range; the tip follower of a finger at 0: -10 × 0 + 0.1.
        assert by_name(defaults, 'position') == {**{j: 0.0 for j in SAMPLE_JOINTS},
                                                 'right_finger_tip_joint': 0.1}
        assert list(defaults.velocity) == [] and list(defaults.effort) == []
        values = node.diagnostic_values(lambda v: 'joint_states output' in v)
        assert values['joint_states output'] == 'default positions (no joint state yet)'
        assert values['joint_states at default position'] == 'all'
        assert values['_level'] == DiagnosticStatus.OK

        arm_only = node.send_until_resolved(ns(100), state(0, ARM, [0.2] * 5), None)
        assert by_name(arm_only, 'position')['left_finger_joint'] == 0.0
        values = node.diagnostic_values(lambda v: v.get('joint_states output', '').startswith(
            'merged'))
        assert values['joint_states at default position'] == (
            'left_finger_joint, right_finger_joint, right_finger_tip_joint')
        # The defaults stop once a source has sent: no stale republishing on a timer.
        count = len(node.resolved)
        module_probe.spin_for(0.5)
        assert len(node.resolved) == count
    finally:
        node.process.stop()


def test_each_source_topic_takes_qos_overrides_like_joint_states(module_probe, tmp_path):
    parameters = {**MERGING, 'qos_overrides': {
        '/merging_qos/gripper/joint_states': {'subscription': {'reliability': 'reliable'}}}}
    node = Merger(module_probe, tmp_path, 'merging_qos', parameters)
    try:
        node.wait_subscribed()
        infos = {topic: module_probe.node.get_subscriptions_info_by_topic(topic)
                 for topic in ('/merging_qos/arm/joint_states',
                               '/merging_qos/gripper/joint_states')}
        reliability = {topic: [i.qos_profile.reliability for i in found]
                       for topic, found in infos.items()}
        assert reliability == {'/merging_qos/arm/joint_states': [ReliabilityPolicy.BEST_EFFORT],
                               '/merging_qos/gripper/joint_states': [ReliabilityPolicy.RELIABLE]}
    finally:
        node.process.stop()


def test_with_the_defaults_the_node_reads_joint_states_and_publishes_no_joint_states(
        start_node, probe):
    start_node({'robot_description': SAMPLE_URDF.read_text()}, ('-r', '__ns:=/plain'),
               node_name='plain')
    probe.wait_until(lambda: probe.node.count_subscribers('/plain/joint_states')
                     and ('plain', '/plain') in probe.node.get_node_names_and_namespaces(), 30,
                     'the plain node to subscribe to joint_states')
    assert probe.node.count_publishers('/plain/joint_states') == 0
    publishers = dict(probe.node.get_publisher_names_and_types_by_node('plain', '/plain'))
    assert '/plain/joint_states' not in publishers
