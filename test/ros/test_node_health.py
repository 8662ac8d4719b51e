"""What the node tells over DDS: /diagnostics levels that mean something, a log that agrees.

Each test starts a node of its own (its log is the test's alone) and drives it with joint-state
publishers at fixed rates (`Sources`), published on schedule while the probe spins.
"""

from __future__ import annotations

from collections.abc import Callable
import math
import re
import time

from conftest import SAMPLE_URDF
from diagnostic_msgs.msg import DiagnosticStatus
from node_fixtures import (
    ARM,
    deeper,
    FIXTURES,
    joint_state,
    Link,
    ns,
    RELIABLE,
    stamp_of,
    wait_for_log,
)
import pytest
from sensor_msgs.msg import JointState

GAZEBO_ARM = FIXTURES / 'gazebo_arm.urdf'  # the sample arm as a ros2_control description
GRIPPER = ('left_finger_joint',)  # right_finger_joint and its tip mimic it
ALL = ARM + GRIPPER  # every joint of <ros2_control>, as joint_state_broadcaster sends them
# Mid-range values and amplitudes that keep every joint within its limits.
CENTRE = {'torso_lift_joint': 0.15, 'left_finger_joint': 0.02}
AMPLITUDE = {'torso_lift_joint': 0.1, 'left_finger_joint': 0.01}
PROBLEM_LINE = re.compile(r'^\[(WARN|ERROR|FATAL)\]', re.MULTILINE)


def ros2_control_state(k: int, names: tuple[str, ...], stamp_ns: int) -> JointState:
    """The k-th JointState of a ros2_control-style source: positions, velocities and efforts.

    Every third message has NaN efforts, as some hardware interfaces report for a joint
    without a torque sensor.
    """
    message = JointState()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    message.name = list(names)
    phase = 0.05 * k
    message.position = [CENTRE.get(n, 0.0) + AMPLITUDE.get(n, 0.5) * math.sin(phase)
                        for n in names]
    message.velocity = [AMPLITUDE.get(n, 0.5) * 0.05 * math.cos(phase) for n in names]
    message.effort = [math.nan if k % 3 == 0 else 1.5 for _ in names]
    return message


class Sources:
    """Joint-state publishers that each publish on their own schedule while the probe spins."""

    def __init__(self, link: Link):
        self.link = link
        self.running: dict[str, list] = {}  # key: [publisher, names, period, next due, count]

    def start(self, key: str, names: tuple[str, ...], hz: float) -> None:
        publisher = self.link.publisher(RELIABLE, key=key)
        self.link.probe.wait_until(lambda: publisher.get_subscription_count() > 0, 15,
                                   f'the node to subscribe to source {key}')
        self.running[key] = [publisher, names, 1.0 / hz, time.monotonic(), 0]

    def stop(self, key: str) -> None:
        del self.running[key]

    def pump(self, seconds: float | None = None, until: Callable[[], bool] | None = None,
             timeout: float = 10.0, what: str = 'a condition') -> None:
        """Publish on schedule for `seconds`, or until `until()` holds (failing after timeout)."""
        end = time.monotonic() + (timeout if seconds is None else seconds)
        clock = self.link.probe.node.get_clock()
        while True:
            now = time.monotonic()
            for source in self.running.values():
                publisher, names, period, due, count = source
                if now >= due:
                    publisher.publish(ros2_control_state(count, names, clock.now().nanoseconds))
                    source[3] = max(due + period, now)
                    source[4] = count + 1
            if until is not None and until():
                return
            if now > end:
                if seconds is None:
                    pytest.fail(f'timed out after {timeout} s waiting for {what}')
                return
            self.link.probe.spin(0.002)


def statuses(link: Link) -> list[DiagnosticStatus]:
    return link.diagnostic_statuses()


def values_of(status: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def first_status(link: Link, sources: Sources, predicate: Callable[[DiagnosticStatus], bool],
                 what: str, timeout: float = 10.0) -> DiagnosticStatus:
    """Pump the sources until a status for which `predicate` holds arrives (from now on)."""
    seen = len(statuses(link))
    found: list[DiagnosticStatus] = []

    def arrived() -> bool:
        found.extend(s for s in statuses(link)[seen:] if predicate(s))
        return bool(found)

    sources.pump(until=arrived, timeout=timeout, what=what)
    return found[0]


def test_a_ros2_control_stream_at_100_hz_is_ok_and_the_log_has_no_warning(start_node, probe):
    # Default parameters: publish_frequency 20 Hz decimates the 100 Hz stream.
    node = start_node({'description_file': str(GAZEBO_ARM)}, node_name='health_quiet')
    link = Link(probe, node, name='health_quiet')
    sources = Sources(link)
    sources.start('ros2_control', ALL, 100.0)

    sources.pump(seconds=5.0)
    log = node.output()  # before the stream stops: a stopped stream is a warning

    received = statuses(link)
    assert len(received) >= 3, received
    assert [(s.level, s.message) for s in received if s.level != DiagnosticStatus.OK] == []
    assert {s.hardware_id for s in received} == {'gazebo_arm'}
    last = values_of(received[-1])
    assert int(last['dropped: rate limit (publish_frequency)']) > 0  # decimated indeed
    assert int(last['tf messages published']) > 0
    assert last['joints never received'] == '' and last['stale joints'] == ''
    assert last['source 1 joints'] == ', '.join(ALL)
    assert PROBLEM_LINE.findall(log) == [], log
    assert "robot 'gazebo_arm'" in log


def test_a_stopped_gripper_source_is_a_warning_naming_its_joints_until_it_resumes(start_node,
                                                                                  probe):
    node = start_node({'robot_description': SAMPLE_URDF.read_text()}, node_name='health_two')
    link = Link(probe, node, name='health_two')
    sources = Sources(link)
    sources.start('arm', ARM, 50.0)
    sources.start('gripper', GRIPPER, 50.0)
    sources.pump(seconds=3.0)
    assert {s.level for s in statuses(link)} == {DiagnosticStatus.OK}

    sources.stop('gripper')
    stale = first_status(link, sources, lambda s: s.level == DiagnosticStatus.WARN,
                         'a warning after the gripper stopped')
    assert stale.message == 'stale joints: left_finger_joint'
    [age] = re.fullmatch(r'left_finger_joint \((\d+\.\d) s ago\)',
                         values_of(stale)['stale joints']).groups()
    # The node's own figure: a 50 Hz source is stale after 1 s of silence, and the node looks
    # once a second (2 s at most on an idle machine); 5 s leaves room for a loaded one. The
    # age is shown to a tenth of a second: 1.04 s of silence reads 1.0.
    assert 1.0 <= float(age) <= 5.0

    sources.start('gripper', GRIPPER, 50.0)
    resumed = first_status(link, sources, lambda s: s.level == DiagnosticStatus.OK,
                           'the status to be OK again')
    assert values_of(resumed)['stale joints'] == ''
    log = wait_for_log(node, probe, 'joints update again')
    started = [line for line in log.splitlines() if 'stopped updating' in line]
    ended = [line for line in log.splitlines() if 'joints update again' in line]
    assert len(started) == 1 and started[0].startswith('[WARN]'), started
    assert 'left_finger_joint' in started[0] and 'elbow_joint' not in started[0]
    assert ended == [ended[0]] and ended[0].startswith('[INFO]')
    assert ended[0].endswith('joints update again: left_finger_joint')


def test_names_with_a_prefix_the_model_lacks_are_an_error_with_the_hint(start_node, probe):
    node = start_node({'robot_description': SAMPLE_URDF.read_text()}, node_name='health_prefix')
    link = Link(probe, node, name='health_prefix')
    sources = Sources(link)
    sources.start('prefixed', tuple('robot1/' + n for n in ALL), 20.0)

    error = first_status(link, sources, lambda s: s.level == DiagnosticStatus.ERROR,
                         'an error for names that match nothing')
    assert error.message == 'no joint name matches the model'
    hint = values_of(error)['hint']
    assert hint.startswith("Hint: 6 of 6 unknown names are joints of robot 'sample_arm' without "
                           "the prefix 'robot1/'")
    log = wait_for_log(node, probe, 'Hint:')
    [line] = [line for line in log.splitlines() if 'Hint:' in line]
    assert line.startswith('[ERROR]') and line.endswith(hint)

    sources.stop('prefixed')
    sources.start('fixed', ALL, 20.0)
    first_status(link, sources, lambda s: s.level == DiagnosticStatus.OK,
                 'the status to be OK with the right names')
    wait_for_log(node, probe, "JointStates name joints of robot 'sample_arm' again")


def test_nan_and_clamps_in_states_that_are_not_published_are_reported(start_node, probe):
    """With the default publish_frequency most states are not published: the node decides that
    from their stamps before it computes anything, and checks their values later. A NaN or a
    clamped value in one of them is reported all the same, within the next period."""
    name = 'health_unpublished'
    node = start_node({'robot_description': SAMPLE_URDF.read_text(),
                       # Lossless: this test counts every state it sends.
                       'qos_overrides': {f'/{name}/joint_states': {'subscription': {
                           'reliability': 'reliable', 'depth': 100}}}}, node_name=name)
    link = Link(probe, node, name=name, source_qos=deeper(RELIABLE, 100))
    publisher = link.joint_states()
    names = ['shoulder_pan_joint', 'elbow_joint', 'torso_lift_joint']
    # 10 ms apart: only the first is due at 20 Hz. The third has a NaN elbow, the fourth a
    # torso beyond its upper limit of 0.3.
    positions = [[0.1, 0.2, 0.1], [0.1, 0.2, 0.1], [0.1, math.nan, 0.1], [0.1, 0.2, 0.5],
                 [0.1, 0.2, 0.1]]
    stamps = [ns(500) + k * 10_000_000 for k in range(len(positions))]
    for stamp, values in zip(stamps, positions):
        publisher.publish(joint_state(stamp, names, values))

    def reported(status: DiagnosticStatus) -> bool:
        values = values_of(status)
        return values.get('dropped: NaN or infinite position') == '1' \
            and values.get('joints clamped') == 'torso_lift_joint'

    probe.wait_until(lambda: any(reported(s) for s in statuses(link)), 15,
                     'a status reporting the NaN and the clamp')
    log = wait_for_log(node, probe, 'joint values outside their limits were clamped')
    assert re.search(r'\[WARN\].*NaN or infinite positions \(ignored\) for.*elbow_joint', log), log
    assert re.search(r'\[WARN\].*clamped.*torso_lift_joint', log), log
    # Of the five, only the first reached /tf (waited for: the status can come first).
    def on_tf() -> set[int]:
        return {stamp_of(t) for message in link.tf for t in message.transforms} & set(stamps)

    probe.wait_until(lambda: stamps[0] in on_tf(), 15, 'the first state on /tf')
    assert on_tf() == {stamps[0]}
