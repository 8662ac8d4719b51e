"""The resolved joint state without ROS: what joint_states gets from merged sources, and when.

The reference for every value is the stream itself with every message computed on arrival
(ignore_timestamp): the default configuration holds most states back unchecked, and its
resolved state must be the same as if none had been.
"""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from xcdr import joint_state_bytes

from urdf_state_publisher.engine.health import (
    JointStateHealth,
    Level,
    LogLine,
    STOPPED_TOPICS,
    UNHEARD_TOPICS,
)
from urdf_state_publisher.engine.stream import JointStream
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.kinematics.resolved import ResolvedFields, ResolvedState
from urdf_state_publisher.wire.joint_state import JointStateReader, velocity_and_effort

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

REPO = Path(__file__).resolve().parents[2]
SAMPLE = RobotModel.from_file(REPO / 'urdf' / 'sample_arm.urdf')
ARM = ('torso_lift_joint', 'shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
       'wrist_roll_joint')
FINGERS = ('left_finger_joint', 'right_finger_joint', 'right_finger_tip_joint')
MS = 1_000_000
S = 1_000_000_000


def stamp(stamp_ns: int) -> tuple[int, int]:
    return divmod(stamp_ns, S)


class Clock:
    """The health's clock, moved by hand (seconds)."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_stream(*, ignore_timestamp: bool = False, report: JointStateHealth | None = None,
                resolved: ResolvedState | None = None, model: RobotModel = SAMPLE
                ) -> tuple[JointStream, list[ResolvedFields]]:
    emitted: list[ResolvedFields] = []
    stream = JointStream(model, report=report or JointStateHealth(),
                         clock=lambda: stamp(777 * S), ignore_timestamp=ignore_timestamp,
                         resolved=resolved or ResolvedState(model),
                         on_resolved=emitted.append)
    return stream, emitted


def cdr(names, positions, velocities=(), efforts=(), stamp_ns: int = 0,
        big_endian: bool = False) -> bytes:
    """A plain-CDR JointState (test/xcdr.py, checked against rclpy's serializer)."""
    return joint_state_bytes(*stamp(stamp_ns), '', names, positions, velocities, efforts,
                             big_endian=big_endian)


def fields_equal(a: ResolvedFields, b: ResolvedFields) -> bool:
    def same(x, y):
        if x is None or y is None:
            return x is None and y is None
        return np.array_equal(x, y, equal_nan=True) and x.tobytes() == y.tobytes()

    return ((a.sec, a.nanosec, a.names) == (b.sec, b.nanosec, b.names)
            and same(a.positions, b.positions) and same(a.velocities, b.velocities)
            and same(a.efforts, b.efforts))


# --------------------------------------------------------------------------- values

def test_starts_at_the_default_positions_with_no_velocity_or_effort():
    fields = ResolvedState(SAMPLE).fields((5, 6))
    defaults = SAMPLE.default_positions()
    assert fields.names == SAMPLE.scalar_joints == ARM + FINGERS
    assert fields.positions.tolist() == [defaults[n] for n in fields.names]
    assert fields.positions[-1] == pytest.approx(0.1)  # the tip follows a finger at 0
    assert (fields.sec, fields.nanosec) == (5, 6)
    assert fields.velocities is None and fields.efforts is None
    assert ResolvedState(SAMPLE).defaulted() == fields.names


def test_sources_merge_and_followers_take_the_leaders_velocity_times_the_multiplier():
    stream, emitted = make_stream(ignore_timestamp=True)
    stream.joint_state(ARM, [0.1, 0.2, 0.3, 0.4, 0.5], stamp(10 * S), 'arm',
                       velocities=[1, 2, 3, 4, 5])
    stream.joint_state(['left_finger_joint'], [0.005], stamp(10 * S + MS), 'gripper',
                       velocities=[0.02], efforts=[3.0])
    fields = emitted[-1]
    assert fields.positions.tolist() == pytest.approx(
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.005, 0.005, -10 * 0.005 + 0.1], abs=1e-15)
    assert fields.velocities.tolist() == pytest.approx([1, 2, 3, 4, 5, 0.02, 0.02, -0.2])
    efforts = fields.efforts.tolist()
    assert all(math.isnan(e) for e in efforts[:5]) and efforts[5:] == [3.0, 3.0, 3.0]
    assert (fields.sec, fields.nanosec) == stamp(10 * S + MS)  # the newest input's
    assert stream.resolved.defaulted() == ()


def test_positions_are_clamped_as_on_tf_and_nan_keeps_the_last_value():
    stream, emitted = make_stream(ignore_timestamp=True)
    stream.joint_state(['torso_lift_joint', 'left_finger_joint'], [0.2, 0.04], stamp(S))
    assert emitted[-1].positions[[0, 5, 6, 7]].tolist() == [0.2, 0.04, 0.04, -0.2]
    stream.joint_state(['torso_lift_joint', 'left_finger_joint'], [9.0, math.nan],
                       stamp(2 * S), velocities=[math.inf, 1.0])
    fields = emitted[-1]
    assert fields.positions[[0, 5]].tolist() == [0.3, 0.04]  # clamped; NaN ignored
    # An infinite velocity is no measurement: NaN. A joint with a NaN position keeps all it
    # had (no velocity yet): no joint has a velocity.
    assert fields.velocities is None
    stream.joint_state(['left_finger_joint'], [0.01], stamp(3 * S), velocities=[0.5])
    stream.joint_state(['left_finger_joint'], [math.nan], stamp(4 * S), velocities=[9.0])
    assert emitted[-1].velocities[5] == 0.5 and emitted[-1].positions[5] == 0.01


def test_a_joint_whose_latest_state_gave_no_velocity_has_nan():
    stream, emitted = make_stream(ignore_timestamp=True)
    stream.joint_state(ARM, [0.0] * 5, stamp(S), velocities=[1.0] * 5)
    stream.joint_state(ARM[:2], [0.0] * 2, stamp(2 * S))  # no velocities
    velocities = emitted[-1].velocities.tolist()
    assert all(math.isnan(v) for v in velocities[:2]) and velocities[2:5] == [1.0] * 3
    stream.joint_state(ARM, [0.0] * 5, stamp(3 * S), velocities=[1.0, 2.0])  # wrong length
    assert emitted[-1].velocities is None


def test_a_reload_keeps_the_values_of_joints_of_the_same_name_within_new_limits():
    old = ResolvedState(SAMPLE)
    stream, _ = make_stream(ignore_timestamp=True, resolved=old)
    stream.joint_state(['torso_lift_joint', 'elbow_joint'], [0.25, 1.0], stamp(S),
                       velocities=[0.5, 0.6])
    narrower = RobotModel.from_urdf(
        (REPO / 'urdf' / 'sample_arm.urdf').read_text().replace(
            'lower="0.0" upper="0.3" velocity="0.1"', 'lower="0.0" upper="0.2" velocity="0.1"'))
    new = ResolvedState(narrower, old)
    fields = new.fields()
    assert fields.positions[[0, 3]].tolist() == [0.2, 1.0]
    assert fields.velocities[[0, 3]].tolist() == [0.5, 0.6]
    assert (fields.sec, fields.nanosec) == stamp(S)
    assert new.defaulted() == ('shoulder_pan_joint', 'shoulder_lift_joint',
                               'wrist_roll_joint') + FINGERS


# --------------------------------------------------------------------------- when

def test_the_resolved_state_goes_out_once_per_publish_interval_of_stamps():
    stream, emitted = make_stream()
    for k in range(100):  # 1 s of 100 Hz
        stream.joint_state(ARM, [0.001 * k] * 5, stamp(S + k * 10 * MS))
    stamps = [f.sec * S + f.nanosec for f in emitted]
    assert stamps == [S + k * 50 * MS for k in range(20)]
    assert emitted[-1].positions[0] == pytest.approx(0.095)


def test_time_going_backwards_restarts_the_resolved_rate_and_stamp():
    stream, emitted = make_stream()
    stream.joint_state(ARM, [0.0] * 5, stamp(50 * S))
    stream.joint_state(ARM, [0.1] * 5, stamp(2 * S))  # a simulation reset
    assert [f.sec for f in emitted] == [50, 2]
    stream.joint_state(ARM, [0.1] * 5, stamp(2 * S + 10 * MS))
    assert len(emitted) == 2


def test_with_ignore_timestamp_every_state_goes_out_whatever_its_clock():
    stream, emitted = make_stream(ignore_timestamp=True)
    stream.joint_state(ARM, [0.0] * 5, stamp(100 * S), 'arm')
    stream.joint_state(['left_finger_joint'], [0.01], stamp(40 * S), 'gripper')  # behind
    stream.joint_state(['left_finger_joint'], [0.02], stamp(40 * S + MS), 'gripper')
    assert [f.positions[5] for f in emitted] == [0.0, 0.01, 0.02]
    assert {f.sec for f in emitted} == {100}  # the newest input's stamp


def test_without_a_resolved_state_nothing_is_kept():
    stream = JointStream(SAMPLE, report=JointStateHealth(), clock=lambda: (0, 0))
    stream.joint_state(ARM, [0.0] * 5, stamp(S))
    assert stream.resolved is None


# One step of a stream: (topic, names, positions, velocities, stamp offset in ms).
_names = st.sampled_from([ARM, ('left_finger_joint',), ARM[2:] + ('left_finger_joint',),
                          ('right_finger_joint', 'left_finger_joint'), ('elbow_joint',)])
# Mostly within every limit (so that states are held and admitted together), sometimes not.
_value = st.integers(0, 5).flatmap(lambda k: st.floats(0.0, 0.03) if k else st.one_of(
    st.floats(-0.5, 0.5), st.sampled_from([math.nan, math.inf, 5.0, -5.0])))


@st.composite
def _steps(draw):
    steps = []
    for _ in range(draw(st.integers(1, 60))):
        names = draw(_names)
        positions = [draw(_value) for _ in names]
        velocities = draw(st.sampled_from([None, [0.5] * len(names), [math.nan] * len(names)]))
        jump = draw(st.sampled_from([0, 3, 10, 10, 10, 25, 60, -400]))
        steps.append((draw(st.sampled_from(['arm', 'gripper'])), names, positions,
                      velocities, jump))
    return steps


@settings(max_examples=150, deadline=None)
# A source held back three times, then another's state due: the last held value counts.
@example([('arm', ARM, [0.01] * 5, None, 0)]
         + [('gripper', ('left_finger_joint',), [v], [v], 10) for v in (0.01, 0.02, 0.03)]
         + [('arm', ARM, [0.02] * 5, None, 30)])
# Held states of two plans at one stamp: the last one's values count where they overlap.
@example([('arm', ARM, [0.0] * 5, None, 0), ('arm', ARM, [0.0] * 5, None, 0),
          ('arm', ARM[2:] + FINGERS[:1], [0.0] * 4, None, 0), ('arm', ARM, [0.0] * 5, None, 0),
          ('arm', ARM[2:] + FINGERS[:1], [0.0] * 4, None, 0),
          ('arm', ARM, [0.0, 0.0, 0.0, 0.0, 0.5], None, 0)])
@given(_steps())
def test_held_states_resolve_as_if_each_were_computed_on_arrival(steps):
    """Raw bytes through the default configuration, which holds most states unchecked, give
    at each emission the state that computing every one on arrival has at that moment."""
    held, emitted = make_stream()
    reference, _ = make_stream(ignore_timestamp=True)
    readers = {'arm': JointStateReader(), 'gripper': JointStateReader()}
    stamp_ns = 100 * S
    for topic, names, positions, velocities, jump in steps:
        stamp_ns += jump * MS
        data = cdr(names, positions, velocities or (), stamp_ns=stamp_ns)
        at, read_names, offset, count, double = readers[topic].locate(data)
        before = len(emitted)
        held.joint_state_at(read_names, data, offset, count, double, at, topic)
        reference.joint_state(names, positions, at, topic, velocities=velocities)
        if len(emitted) > before:
            expected = reference.resolved.fields()
            assert fields_equal(emitted[-1], ResolvedFields(
                emitted[-1].sec, emitted[-1].nanosec, *expected[2:]))
    held.check_held()
    assert fields_equal(held.resolved.fields(), reference.resolved.fields())


# --------------------------------------------------------------------------- the wire

@pytest.mark.parametrize('big_endian', [False, True], ids=['little-endian', 'big-endian'])
@pytest.mark.parametrize('velocities, efforts', [
    ((), ()), ((1.0, 2.0), ()), ((), (3.0, 4.0)), ((1.0, 2.0), (3.0, 4.0)), ((1.0,), ())])
def test_velocities_and_efforts_are_read_after_the_positions(velocities, efforts, big_endian):
    data = cdr(['a', 'bcd'], [0.5, 0.6], velocities, efforts, stamp_ns=S, big_endian=big_endian)
    _, _, offset, count, double = JointStateReader().locate(data)
    found = velocity_and_effort(data, offset, count, double)
    assert [f.tolist() for f in found] == [list(velocities), list(efforts)]


def test_velocities_that_do_not_fit_are_none():
    data = cdr(['a'], [0.5], [1.0], [2.0])
    _, _, offset, count, double = JointStateReader().locate(data)
    assert velocity_and_effort(data[:-12], offset, count, double)[1] is None
    assert velocity_and_effort(data[:offset + 8], offset, count, double) == (None, None)


# --------------------------------------------------------------------------- health

def test_velocities_or_efforts_of_the_wrong_length_are_reported_once_by_field():
    health = JointStateHealth(clock=Clock())
    stream, emitted = make_stream(ignore_timestamp=True, report=health)
    health.assess()
    for k in range(3):  # said once, however many messages carry it
        stream.joint_state(ARM[:3], [0.0] * 3, stamp((k + 1) * S), velocities=[1.0, 2.0],
                           efforts=[1.0, 2.0, 3.0])
    assert emitted[-1].velocities is None and emitted[-1].efforts.tolist()[:3] == [1, 2, 3]
    assessment = health.assess()
    assert assessment.level is Level.WARN
    assert assessment.log == (LogLine(Level.WARN, (
        'JointState velocity or effort has neither one value per name nor none, so '
        'joint_states gets NaN for those joints: velocity: 2 for 3 names '
        '(torso_lift_joint, shoulder_pan_joint, shoulder_lift_joint)')),)
    assert 'velocity or effort of the wrong length' in assessment.message
    stream.joint_state(ARM[:3], [0.0] * 3, stamp(9 * S), velocities=[1.0, 2.0, 3.0],
                       efforts=[])  # empty: not measured, as the convention has it
    assessment = health.assess()
    assert assessment.level is Level.OK
    assert assessment.log == (LogLine(Level.OK, 'JointState velocities and efforts fit their '
                                                'names again'),)
    stream.joint_state(ARM[:2], [0.0] * 2, stamp(10 * S), efforts=[5.0])
    assert [line.text.rsplit(': ', 2)[1:] for line in health.assess().log] == [
        ['effort', '1 for 2 names (torso_lift_joint, shoulder_pan_joint)']]


def test_diagnostics_show_each_topic_and_name_a_stopped_one():
    clock = Clock()
    health = JointStateHealth(clock=clock, publishes_defaults=True)
    health.topics = ('/arm/joint_states', '/gripper/joint_states', '/wheels/joint_states')
    stream, _ = make_stream(report=health)
    health.assess()
    for k in range(600):  # 6 s of 100 Hz; the gripper stops after 2 s
        clock.now += 0.01
        stream.joint_state(ARM, [0.0] * 5, stamp(S + k * 10 * MS), '/arm/joint_states')
        if k < 200:
            stream.joint_state(['left_finger_joint'], [0.01], stamp(S + k * 10 * MS),
                               '/gripper/joint_states')
        if k % 100 == 99:
            assessment = health.assess()
            values = dict(assessment.values)
            if k == 199:
                assert values['source 1 topic'] == '/arm/joint_states'
                assert values['source 2 topic'] == '/gripper/joint_states'
                assert values['joint_states output'] == 'merged from the sources'
                assert values['joint_states at default position'] == ''
    assert values[STOPPED_TOPICS].startswith('/gripper/joint_states (4.0 s ago: ')
    assert values[UNHEARD_TOPICS] == '/wheels/joint_states'
    assert 'stopped: /gripper/joint_states' in assessment.message
    assert 'stale joints' not in assessment.message  # said once, by topic
    assert 'no message on /wheels/joint_states' in assessment.message
    clock.now += 3.0  # the arm stops too
    silent = [line.text for line in health.assess().log if 'every source' in line.text]
    assert silent == ['no joint_states for 3.0 s: every source has stopped (/arm/joint_states, '
                      '/gripper/joint_states, /wheels/joint_states)']
