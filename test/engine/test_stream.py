"""The joint-state stream without ROS: which joints go out on /tf, when, and what is reported.

Most tests are scripts: a list of messages, each with the joints expected to go out from it.
"""

from __future__ import annotations

import math
from pathlib import Path
from xml.etree import ElementTree

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from reference_math import homogeneous, quaternion_matrix, rodrigues

from urdf_state_publisher.engine.health import (
    CLAMPED,
    DUPLICATED,
    JointStateHealth,
    LENGTH_MISMATCH,
    NAMES_KEPT,
    NON_FINITE,
    NOT_SCALAR,
    TIME_BACKWARDS,
    UNKNOWN,
    UNUSABLE_POSE,
    ZERO_STAMP,
)
from urdf_state_publisher.engine.stream import JointStream
from urdf_state_publisher.geometry import quaternion_from_rpy
from urdf_state_publisher.kinematics.model import RobotModel

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

REPO = Path(__file__).resolve().parents[2]
SAMPLE_PATH = REPO / 'urdf' / 'sample_arm.urdf'
MIXED_PATH = REPO / 'test' / 'fixtures' / 'mixed_joints.urdf'
RELIABILITY_PATH = REPO / 'test' / 'fixtures' / 'reliability_robot.urdf'
SAMPLE = RobotModel.from_file(SAMPLE_PATH)
MIXED = RobotModel.from_file(MIXED_PATH)
RELIABILITY = RobotModel.from_file(RELIABILITY_PATH)
GRIPPER = {'left_finger_joint', 'right_finger_joint', 'right_finger_tip_joint'}
MS = 1_000_000
S = 1_000_000_000
IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
RECEIPT_NS = 777 * S + 5  # what the fake clock says


def ns(sec: float) -> int:
    return round(sec * S)


def stamp(stamp_ns: int) -> tuple[int, int]:
    return divmod(stamp_ns, S)


def make_stream(model: RobotModel = SAMPLE, report: JointStateHealth | None = None, *,
                frequency: float = 20.0, ignore_timestamp: bool = False,
                prefix: str = '') -> JointStream:
    return JointStream(model, report=JointStateHealth() if report is None else report,
                       clock=lambda: stamp(RECEIPT_NS), frame_prefix=prefix,
                       publish_interval_ns=round(1e9 / frequency),
                       ignore_timestamp=ignore_timestamp)


def js(stamp_ns: int, values: dict[str, float]) -> tuple:
    """A JointState step."""
    return ('js', list(values), [float(v) for v in values.values()], stamp_ns)


def md(stamp_ns: int, poses: dict[str, tuple[float, ...]]) -> tuple:
    """A MultiDOFJointState step: joint name -> (x, y, z, qx, qy, qz, qw)."""
    return ('md', list(poses), np.array(list(poses.values()), dtype=float).reshape(-1, 7),
            stamp_ns)


def send(stream: JointStream, step: tuple):
    kind, names, values, stamp_ns = step
    if kind == 'js':
        return stream.joint_state(names, values, stamp(stamp_ns))
    return stream.multi_dof_joint_state(names, values, stamp(stamp_ns))


def out(stream: JointStream, publication) -> set[str]:
    return set() if publication is None else {stream.joints[i] for i in publication.index}


def stamp_of(publication) -> int:
    return publication.sec * S + publication.nanosec


def run(stream: JointStream, script: list[tuple]) -> list[set[str]]:
    return [out(stream, send(stream, step)) for step in script]


def kinds(report: JointStateHealth) -> list[str]:
    """The kinds of problem noted in the current period."""
    return list(report.events)


def row_matrix(row) -> np.ndarray:
    row = np.asarray(row)
    return homogeneous(row[:3], quaternion_matrix(row[3:]))


def rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    return (rodrigues((0, 0, 1), yaw) @ rodrigues((0, 1, 0), pitch)
            @ rodrigues((1, 0, 0), roll))


def rows_by_joint(stream: JointStream, publication) -> dict[str, np.ndarray]:
    return {stream.joints[i]: row for i, row in zip(publication.index, publication.rows)}


# --------------------------------------------------------------------------- reference
# What the stream must publish, from the URDF text read with the standard library and the
# rotations of reference_math: never from the model the stream is built on.

def xml_joints(path: Path) -> dict[str, ElementTree.Element]:
    """The <joint> elements of a URDF, by name."""
    return {joint.get('name'): joint for joint in ElementTree.parse(path).getroot().iter('joint')}


SAMPLE_XML, MIXED_XML, RELIABILITY_XML = map(xml_joints,
                                             (SAMPLE_PATH, MIXED_PATH, RELIABILITY_PATH))


def attribute_numbers(element: ElementTree.Element | None, name: str,
                      default: str) -> np.ndarray:
    text = None if element is None else element.get(name)
    return np.array((default if text is None else text).split(), dtype=float)


def reference_matrix(joints: dict[str, ElementTree.Element], name: str,
                     value: float = 0.0) -> np.ndarray:
    """Joint `name` at `value` (a pose joint: with no motion): its origin, then its motion."""
    joint = joints[name]
    origin = joint.find('origin')
    matrix = homogeneous(attribute_numbers(origin, 'xyz', '0 0 0'),
                         rpy(*attribute_numbers(origin, 'rpy', '0 0 0')))
    axis = attribute_numbers(joint.find('axis'), 'xyz', '1 0 0')
    axis /= np.linalg.norm(axis)
    if joint.get('type') in ('revolute', 'continuous'):
        return matrix @ homogeneous((0, 0, 0), rodrigues(axis, value))
    if joint.get('type') == 'prismatic':
        return matrix @ homogeneous(axis * value, np.eye(3))
    return matrix


def movable(joints: dict[str, ElementTree.Element]) -> set[str]:
    return {name for name, joint in joints.items() if joint.get('type') != 'fixed'}


def frames_of(joints: dict[str, ElementTree.Element], name: str) -> tuple[str, str]:
    """(parent link, child link) of joint `name`."""
    return (joints[name].find('parent').get('link'), joints[name].find('child').get('link'))


def driven(joints: dict[str, ElementTree.Element], names) -> set[str]:
    """`names` and every joint that mimics one of them, directly or along a chain."""
    leader = {name: joint.find('mimic').get('joint') for name, joint in joints.items()
              if joint.find('mimic') is not None}
    result = set(names)
    while grown := {f for f, lead in leader.items() if lead in result} - result:
        result |= grown
    return result


# --------------------------------------------------------------------------- rate and time

E, T, L = 'elbow_joint', 'torso_lift_joint', 'left_finger_joint'
F, P, Z = 'float_joint', 'planar_joint', 'z_lead'
ELBOW, TORSO = {E}, {T}
NOTHING: set[str] = set()

# case: (model, stream options, [(step, joints expected out)])
SCRIPTS = {
    'same_stamp_twice': (SAMPLE, {}, [
        (js(ns(10), {E: 0.1}), ELBOW),
        (js(ns(10), {E: 0.2}), NOTHING),
    ]),
    'exactly_at_the_interval_is_due': (SAMPLE, {}, [
        (js(ns(10), {E: 0.1}), ELBOW),
        (js(ns(10) + 50 * MS, {E: 0.2}), ELBOW),
        (js(ns(10) + 100 * MS - 1, {E: 0.3}), NOTHING),
        (js(ns(10) + 100 * MS, {E: 0.4}), ELBOW),
    ]),
    'interval_not_truncated_to_ms_300hz': (SAMPLE, {'frequency': 300.0}, [
        (js(ns(10), {E: 0.1}), ELBOW),
        (js(ns(10) + 3_333_332, {E: 0.2}), NOTHING),
        (js(ns(10) + 3_333_333, {E: 0.3}), ELBOW),
    ]),
    '2000hz': (SAMPLE, {'frequency': 2000.0}, [
        (js(ns(10), {E: 0.1}), ELBOW),
        (js(ns(10) + 250_000, {E: 0.2}), NOTHING),
        (js(ns(10) + 500_000, {E: 0.3}), ELBOW),
    ]),
    'each_joint_on_its_own': (SAMPLE, {}, [
        (js(ns(280), {E: 0.1}), ELBOW),
        (js(ns(280) + 10 * MS, {E: 0.2, T: 0.05}), TORSO),
        (js(ns(280) + 50 * MS, {T: 0.06, E: 0.3}), ELBOW),
    ]),
    'time_back_resets_the_limit': (SAMPLE, {}, [
        (js(ns(400), {E: 0.1}), ELBOW),
        (js(ns(350), {E: 0.2}), ELBOW),
        (js(ns(350) + 10 * MS, {E: 0.3}), NOTHING),
        (js(ns(350) + 50 * MS, {E: 0.4}), ELBOW),
    ]),
    'time_back_resets_only_the_joints_it_went_back_for': (SAMPLE, {}, [
        (js(ns(400), {E: 0.1}), ELBOW),
        (js(ns(300), {T: 0.1}), TORSO),
        # back for the elbow (published again), not for the torso (rate limited)
        (js(ns(300) + 10 * MS, {E: 0.2, T: 0.2}), ELBOW),
    ]),
    'mimic_followers_share_their_leaders_stamp': (SAMPLE, {}, [
        (js(ns(10), {L: 0.01}), GRIPPER),
        (js(ns(10) + 10 * MS, {'right_finger_joint': 0.02}), NOTHING),
        (js(ns(10) + 50 * MS, {'right_finger_joint': 0.02}),
         {'right_finger_joint', 'right_finger_tip_joint'}),
    ]),
    'ignore_timestamp_publishes_every_state': (SAMPLE, {'ignore_timestamp': True}, [
        (js(ns(10), {E: 0.1}), ELBOW),
        (js(ns(10), {E: 0.2}), ELBOW),
        (js(ns(10) + 1, {E: 0.3}), ELBOW),
        (js(ns(5), {E: 0.4}), ELBOW),
    ]),
    'pose_same_stamp_twice': (MIXED, {}, [
        (md(ns(10), {F: IDENTITY}), {F}),
        (md(ns(10), {F: IDENTITY}), NOTHING),
        (md(ns(10) + 50 * MS, {F: IDENTITY, P: IDENTITY}), {F, P}),
        (md(ns(10) + 60 * MS, {F: IDENTITY, P: IDENTITY}), NOTHING),
        (md(ns(10) + 100 * MS - 1, {F: IDENTITY}), NOTHING),
        (md(ns(10) + 100 * MS, {F: IDENTITY}), {F}),
    ]),
    'pose_time_back_resets_the_limit': (MIXED, {}, [
        (md(ns(400), {F: IDENTITY}), {F}),
        (md(ns(350), {F: IDENTITY}), {F}),
        (md(ns(350) + 10 * MS, {F: IDENTITY}), NOTHING),
        (md(ns(350) + 50 * MS, {F: IDENTITY}), {F}),
    ]),
    'pose_ignore_timestamp': (MIXED, {'ignore_timestamp': True}, [
        (md(ns(10), {P: IDENTITY}), {P}),
        (md(ns(10), {P: IDENTITY}), {P}),
    ]),
    'mixed_stream_scalar_and_pose_joints_each_limited_on_their_own': (MIXED, {}, [
        (js(ns(10), {Z: 0.1}), {Z, 'm_mid', 'a_tail'}),
        (md(ns(10), {F: IDENTITY}), {F}),
        (md(ns(10) + 10 * MS, {F: IDENTITY}), NOTHING),
        (js(ns(10) + 10 * MS, {Z: 0.1, 'hinge': 1.0}), {'hinge'}),
        (md(ns(10) + 50 * MS, {F: IDENTITY, P: IDENTITY}), {F, P}),
        (js(ns(10) + 50 * MS, {Z: 0.2}), {Z, 'm_mid', 'a_tail'}),
    ]),
    'mixed_stream_pose_clock_offset_does_not_reset_scalars': (MIXED, {}, [
        (js(ns(100), {Z: 0.1}), {Z, 'm_mid', 'a_tail'}),
        (md(ns(50), {F: IDENTITY}), {F}),  # another clock: not "back" for z_lead
        (js(ns(100) + 10 * MS, {Z: 0.1}), NOTHING),
        (md(ns(50) + 10 * MS, {F: IDENTITY}), NOTHING),
    ]),
}


@pytest.mark.parametrize('case', SCRIPTS)
def test_script_publishes_the_due_joints(case):
    model, options, script = SCRIPTS[case]
    stream = make_stream(model, **options)

    assert run(stream, [step for step, _ in script]) == [joints for _, joints in script]


@pytest.mark.parametrize('case, backwards', [
    ('same_stamp_twice', []),
    ('time_back_resets_the_limit', [[E]]),
    ('time_back_resets_only_the_joints_it_went_back_for', [[E]]),
    ('ignore_timestamp_publishes_every_state', [[E]]),
    ('pose_time_back_resets_the_limit', [[F]]),
    ('mixed_stream_pose_clock_offset_does_not_reset_scalars', []),
])
def test_time_going_backwards_is_reported_naming_its_joints(case, backwards):
    model, options, script = SCRIPTS[case]
    stream = make_stream(model, **options)
    run(stream, [step for step, _ in script])

    assert list(stream.report.events.get(TIME_BACKWARDS, ())) == [
        joint for joints in backwards for joint in joints]


@pytest.mark.parametrize('case, rate_limited', [
    ('same_stamp_twice', 1),
    ('each_joint_on_its_own', 0),  # partly due: nothing dropped as a whole
    ('exactly_at_the_interval_is_due', 1),
    ('pose_same_stamp_twice', 3),
    ('ignore_timestamp_publishes_every_state', 0),
])
def test_only_states_with_nothing_due_count_as_rate_limited(case, rate_limited):
    model, options, script = SCRIPTS[case]
    stream = make_stream(model, **options)
    run(stream, [step for step, _ in script])

    assert stream.report.dropped.get('rate limit (publish_frequency)', 0) == rate_limited


def test_two_sources_with_offset_clocks_keep_their_own_rate_limit():
    stream = make_stream()
    base = ns(500)
    arm, gripper = [], []
    for k in range(11):
        arm.append(out(stream, send(stream, js(base + k * 10 * MS, {E: 0.01 * k}))))
        gripper.append(out(stream, send(stream, js(base + k * 10 * MS - 5 * MS,
                                                   {L: 0.001 * k}))))

    assert [k for k, joints in enumerate(arm) if joints] == [0, 5, 10]
    assert [k for k, joints in enumerate(gripper) if joints] == [0, 5, 10]
    assert TIME_BACKWARDS not in kinds(stream.report)


def test_rate_limit_change_applies_to_the_next_state_and_keeps_the_memory():
    stream = make_stream()
    assert run(stream, [js(ns(10), {E: 0.1})]) == [ELBOW]
    stream.limit_rate(publish_interval_ns=10 * MS, ignore_timestamp=False)
    assert run(stream, [js(ns(10) + 9 * MS, {E: 0.1}), js(ns(10) + 10 * MS, {E: 0.1})]) == [
        NOTHING, ELBOW]
    stream.limit_rate(publish_interval_ns=10 * MS, ignore_timestamp=True)
    assert run(stream, [js(ns(10) + 10 * MS, {E: 0.1})]) == [ELBOW]
    stream.limit_rate(publish_interval_ns=10 * MS, ignore_timestamp=False)
    # ignored timestamps were still remembered as published
    assert run(stream, [js(ns(10) + 19 * MS, {E: 0.1})]) == [NOTHING]


def test_a_faster_rate_applies_to_a_source_already_held_back():
    """A state held back under the old rate does not keep the next one waiting for it."""
    stream = make_stream(frequency=20.0)
    assert run(stream, [js(ns(10), {E: 0.1}), js(ns(10) + 8 * MS, {T: 0.1}),
                        js(ns(10) + 9 * MS, {E: 0.1})]) == [ELBOW, TORSO, NOTHING]
    stream.limit_rate(publish_interval_ns=10 * MS, ignore_timestamp=False)
    # Due again 10 ms after its own publication, though torso's was more recent.
    assert run(stream, [js(ns(10) + 12 * MS, {E: 0.1})]) == [ELBOW]


# The sample's joints a source drives: movable, no mimic.
SAMPLE_LEADERS = sorted(n for n in movable(SAMPLE_XML) if SAMPLE_XML[n].find('mimic') is None)


class ReferenceLimiter:
    """The per-joint rules, written plainly: a dict per joint, one joint at a time."""

    def __init__(self, interval_ns: int, ignore_timestamp: bool):
        self.interval_ns, self.ignore_timestamp = interval_ns, ignore_timestamp
        self.seen: dict[str, int] = {}
        self.published: dict[str, int] = {}

    def due(self, joints, stamp_ns: int) -> tuple[set[str], set[str]]:
        """(joints published, joints whose time went back)."""
        back = {j for j in joints if stamp_ns < self.seen.get(j, stamp_ns)}
        for joint in joints:
            if joint in back:
                del self.published[joint]
            self.seen[joint] = stamp_ns
        due = {j for j in joints if self.ignore_timestamp or j not in self.published
               or stamp_ns >= self.published[j] + self.interval_ns}
        self.published.update(dict.fromkeys(due, stamp_ns))
        return due, back


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sets(st.sampled_from(SAMPLE_LEADERS), min_size=1),
                          st.integers(0, 12)), max_size=25),
       st.booleans())
def test_rate_limit_and_time_match_the_per_joint_rules(steps, ignore_timestamp):
    # Stamps on a 10 ms grid around a 50 ms interval: equal stamps, jumps back, exact bounds.
    stream = make_stream(ignore_timestamp=ignore_timestamp)
    reference = ReferenceLimiter(50 * MS, ignore_timestamp)
    for names, tick in steps:
        names = sorted(names)
        stamp_ns = ns(100) + tick * 10 * MS
        expected, back = reference.due(driven(SAMPLE_XML, names), stamp_ns)
        stream.report.end_period()

        assert out(stream, send(stream, js(stamp_ns, dict.fromkeys(names, 0.01)))) == expected
        assert set(stream.report.events.get(TIME_BACKWARDS, ())) == back


# --------------------------------------------------------------------------- stamps

@pytest.mark.parametrize('step', [js(0, {E: 0.1}), md(0, {F: IDENTITY})], ids=['js', 'md'])
def test_zero_stamp_is_replaced_by_the_time_of_receipt_and_reported(step):
    stream = make_stream(MIXED if step[0] == 'md' else SAMPLE)

    first = send(stream, step)
    second = send(stream, step)  # the same receipt time: rate limited

    assert stamp_of(first) == RECEIPT_NS
    assert second is None
    assert stream.report.events == {ZERO_STAMP: dict.fromkeys([step[1][0]])}


def test_zero_stamp_uses_the_receipt_time_for_rate_limiting():
    times = iter([ns(100), ns(100) + 10 * MS, ns(100) + 60 * MS])
    stream = JointStream(SAMPLE, report=JointStateHealth(), clock=lambda: stamp(next(times)))

    assert run(stream, [js(0, {E: 0.1})] * 3) == [ELBOW, NOTHING, ELBOW]


def test_a_state_with_nothing_usable_does_not_ask_the_clock():
    def clock():
        raise AssertionError('the clock was read')

    stream = JointStream(SAMPLE, report=JointStateHealth(), clock=clock)
    assert stream.joint_state(['ghost'], [0.1], (0, 0)) is None
    assert kinds(stream.report) == [UNKNOWN]  # the unknown name, not the zero stamp


@pytest.mark.parametrize('stamp_ns', [1, S - 1, S, 2**31 * S - 1])
def test_the_stamp_goes_out_unchanged(stamp_ns):
    publication = send(make_stream(), js(stamp_ns, {E: 0.1}))
    assert stamp_of(publication) == stamp_ns
    assert (publication.sec, publication.nanosec) == divmod(stamp_ns, S)


# --------------------------------------------------------------------------- bad input

PAN = 'shoulder_pan_joint'
# case: (names, positions, joints out with their values, drops, problems noted with their names)
BAD_STATES = {
    'names_longer': ([T, PAN, E], [0.15, 0.25], {T: 0.15, PAN: 0.25},
                     {'names and positions differ in length': 1},
                     {LENGTH_MISMATCH: ['3 names but 2 positions, ignoring the joints without a '
                                        f'position: {E}']}),
    'positions_longer': ([T, PAN], [0.15, 0.25, 0.35], {T: 0.15, PAN: 0.25},
                         {'names and positions differ in length': 1},
                         {LENGTH_MISMATCH: ['2 names but 3 positions, ignoring the 1 positions '
                                            'without a name']}),
    'empty_positions': ([T, E], [], {}, {'names and positions differ in length': 1},
                        {LENGTH_MISMATCH: ['2 names but 0 positions, ignoring the joints without '
                                           f'a position: {T}, {E}']}),
    'nan': ([T, L, PAN], [math.nan, math.nan, 0.25], {PAN: 0.25},
            {'NaN or infinite position': 2}, {NON_FINITE: [T, L]}),
    'inf': ([E, 'wrist_roll_joint', PAN], [math.inf, -math.inf, 0.25], {PAN: 0.25},
            {'NaN or infinite position': 2}, {NON_FINITE: [E, 'wrist_roll_joint']}),
    'duplicates': ([E, PAN, E], [0.1, 0.25, 0.3], {PAN: 0.25},
                   {'duplicated joint names': 1}, {DUPLICATED: [E]}),
    'unknown': (['ghost_joint', PAN], [1.0, 0.25], {PAN: 0.25}, {}, {UNKNOWN: ['ghost_joint']}),
    'fixed_joint': (['base_joint', PAN], [0.5, 0.25], {PAN: 0.25},
                    {'value for a fixed, floating or planar joint': 1},
                    {NOT_SCALAR: ['base_joint']}),
    'clamped': ([E, T, PAN], [3.0, -0.5, 10.0], {E: 2.3, T: 0.0, PAN: 10.0}, {},
                {CLAMPED: [E, T]}),
    'follower_clamped': ([L], [0.035], {L: 0.035, 'right_finger_joint': 0.035,
                                        'right_finger_tip_joint': -0.2}, {},
                         {CLAMPED: ['right_finger_tip_joint']}),
    'empty_message': ([], [], {}, {}, {}),
}


@pytest.mark.parametrize('case', BAD_STATES)
def test_bad_joint_state_publishes_its_usable_part_and_reports_the_rest(case):
    names, positions, published, drops, problems = BAD_STATES[case]
    stream = make_stream()

    publication = stream.joint_state(names, positions, stamp(ns(100)))

    assert out(stream, publication) == set(published)
    if published:
        rows = rows_by_joint(stream, publication)
        for joint, value in published.items():
            assert row_matrix(rows[joint]) == pytest.approx(
                reference_matrix(SAMPLE_XML, joint, value), abs=1e-12)
        assert np.isfinite(publication.rows).all()
    assert stream.report.dropped == drops
    assert {kind: list(found) for kind, found in stream.report.events.items()} == problems
    assert stream.report.clamped == set(problems.get(CLAMPED, ()))
    assert stream.report.received == 1


@pytest.mark.filterwarnings('ignore::RuntimeWarning')
def test_finite_values_that_overflow_in_a_follower_are_dropped_as_non_finite():
    stream = make_stream(RELIABILITY)
    publication = stream.joint_state(['wheel_joint', 'arm_joint'], [1.7e308, 0.1], stamp(ns(1)))

    assert out(stream, publication) == {'arm_joint'}
    assert row_matrix(rows_by_joint(stream, publication)['arm_joint']) == pytest.approx(
        reference_matrix(RELIABILITY_XML, 'arm_joint', 0.1), abs=1e-12)
    assert stream.report.dropped == {'NaN or infinite position': 1}
    assert stream.report.events == {NON_FINITE: {'wheel_joint': None}}


def test_pose_joint_in_a_joint_state_is_not_a_scalar_value():
    stream = make_stream(MIXED)
    publication = stream.joint_state([F, 'hinge'], [0.5, 1.0], stamp(ns(1)))

    assert out(stream, publication) == {'hinge'}
    assert stream.report.dropped == {'value for a fixed, floating or planar joint': 1}
    assert kinds(stream.report) == [NOT_SCALAR]


def test_a_problem_repeated_in_a_period_is_noted_once_and_counted_each_time():
    stream = make_stream()
    for k in range(3):
        stream.joint_state([E, E], [0.1, 0.2], stamp(ns(10 + k)))
    assert stream.report.events == {DUPLICATED: {E: None}}
    assert stream.report.dropped == {'duplicated joint names': 3}


def test_clean_states_leave_no_notice_and_drop_nothing():
    stream = make_stream()
    for k in range(5):
        stream.joint_state([E, L], [0.1, 0.01], stamp(ns(10) + k * 50 * MS))
    report = stream.report
    assert report.events == {} and report.dropped == {}
    assert report.received == report.period_received == 5
    assert report.last_receipt is not None


# --------------------------------------------------------------------------- unknown names

def test_unknown_names_are_reported_once_each():
    stream = make_stream()
    stream.joint_state(['ghost_a', E], [1, 0.1], stamp(ns(1)))
    stream.joint_state(['ghost_a', E], [1, 0.1], stamp(ns(2)))
    stream.joint_state(['ghost_b', 'ghost_a'], [1, 1], stamp(ns(3)))

    assert stream.report.events == {UNKNOWN: dict.fromkeys(['ghost_a', 'ghost_b'])}
    assert stream.report.unknown == {'ghost_a', 'ghost_b'}
    assert stream.report.dropped == {}


@pytest.mark.parametrize('batches, reported, overflow', [
    ([10, 10], 20, 0),
    ([NAMES_KEPT], NAMES_KEPT, 0),
    ([NAMES_KEPT + 10], NAMES_KEPT, 10),
    ([45, 10], NAMES_KEPT, 5),
    ([45, 10, 7], NAMES_KEPT, 12),  # beyond the cap: counted
    ([2000], NAMES_KEPT, 1950),
])
def test_unknown_names_beyond_the_cap_are_only_counted(batches, reported, overflow):
    stream = make_stream()
    first = 0
    for k, size in enumerate(batches):
        names = [f'ghost_{i}' for i in range(first, first + size)]
        first += size
        stream.joint_state(names + [E], [0.0] * size + [0.1], stamp(ns(k + 1)))

    report = stream.report
    assert len(report.unknown) == reported
    assert report.unknown_overflow == overflow
    assert len(report.events[UNKNOWN]) == reported  # the period keeps as many


# --------------------------------------------------------------------------- values

def test_mimic_followers_are_multiplier_times_leader_plus_offset():
    stream = make_stream()
    rows = rows_by_joint(stream, stream.joint_state([L], [0.015], stamp(ns(1))))

    assert set(rows) == GRIPPER
    for joint, value in ((L, 0.015), ('right_finger_joint', 0.015),
                         ('right_finger_tip_joint', -10 * 0.015 + 0.1)):
        assert row_matrix(rows[joint]) == pytest.approx(
            reference_matrix(SAMPLE_XML, joint, value), abs=1e-12)


def test_an_explicit_value_for_a_mimic_follower_wins():
    stream = make_stream()
    rows = rows_by_joint(stream, stream.joint_state(
        [L, 'right_finger_joint'], [0.02, 0.01], stamp(ns(1))))

    assert set(rows) == GRIPPER
    assert row_matrix(rows['right_finger_joint']) == pytest.approx(
        reference_matrix(SAMPLE_XML, 'right_finger_joint', 0.01), abs=1e-12)
    assert row_matrix(rows['right_finger_tip_joint']) == pytest.approx(
        reference_matrix(SAMPLE_XML, 'right_finger_tip_joint', 0.0), abs=1e-12)


FLOAT_ORIGIN = homogeneous((1, 2, 3), rpy(0.1, 0.2, 0.5))
PLANAR_ORIGIN = homogeneous((0.5, 0, 0.2), rpy(0.3, 0, 0))


@pytest.mark.parametrize('joint, motion, expected', [
    (F, (0.3, -0.2, 0.5, *quaternion_from_rpy(0.4, -0.1, 0.7)),
     FLOAT_ORIGIN @ homogeneous((0.3, -0.2, 0.5), rpy(0.4, -0.1, 0.7))),
    # not normalised: the same rotation
    (F, (0, 0, 0, 0, 0, 0, 5.0), FLOAT_ORIGIN),
    (F, (0, 0, 0, *(2 * np.array(quaternion_from_rpy(0, 0, 1.0)))),
     FLOAT_ORIGIN @ homogeneous((0, 0, 0), rpy(0, 0, 1.0))),
    # planar: only the translation normal to its z axis and the rotation about it
    (P, (0.3, -0.2, 0.9, *quaternion_from_rpy(0.2, 0, 0.4)),
     PLANAR_ORIGIN @ homogeneous((0.3, -0.2, 0), rodrigues((0, 0, 1), 0.4))),
], ids=['floating', 'floating_unnormalised', 'floating_scaled_quaternion', 'planar'])
def test_pose_joint_rows_are_origin_times_motion(joint, motion, expected):
    stream = make_stream(MIXED)
    publication = stream.multi_dof_joint_state([joint], np.array([motion]), stamp(ns(1)))

    [row] = publication.rows
    assert row_matrix(row) == pytest.approx(expected, abs=1e-9)
    assert np.linalg.norm(row[3:]) == pytest.approx(1.0)
    assert stream.frames[publication.index[0]] == frames_of(MIXED_XML, joint)


BIG = 1.7e308
# case: (poses by name, joints out, names reported as ignored)
BAD_POSES = {
    'unknown': ({'ghost_joint': IDENTITY, F: IDENTITY}, {F}, ['ghost_joint']),
    'scalar_joint': ({Z: IDENTITY, F: IDENTITY}, {F}, [Z]),
    'fixed_joint': ({'camera_mount_joint': IDENTITY, F: IDENTITY}, {F}, ['camera_mount_joint']),
    'zero_quaternion': ({P: (0.1, 0, 0, 0, 0, 0, 0), F: IDENTITY}, {F}, [P]),
    'nan_translation': ({P: (math.nan, 0, 0, 0, 0, 0, 1), F: IDENTITY}, {F}, [P]),
    'inf_rotation': ({F: (0, 0, 0, math.inf, 0, 0, 1), P: IDENTITY}, {P}, [F]),
    'overflow_on_the_origin': ({F: (BIG, BIG, BIG, 0, 0, 0, 1), P: IDENTITY}, {P}, [F]),
    'duplicated': ({F: IDENTITY, P: IDENTITY, 'again': None}, {P}, [F, F]),
    'all_bad': ({'ghost_joint': IDENTITY}, set(), ['ghost_joint']),
}


@pytest.mark.parametrize('case', BAD_POSES)
def test_unusable_multi_dof_entries_are_ignored_and_the_rest_published(case):
    poses, published, ignored = BAD_POSES[case]
    names = [F if n == 'again' else n for n in poses]
    rows = np.array([IDENTITY if p is None else p for p in poses.values()], dtype=float)
    model, joints = (RELIABILITY, RELIABILITY_XML) if case == 'fixed_joint' else (MIXED, MIXED_XML)
    stream = make_stream(model)

    publication = stream.multi_dof_joint_state(names, rows, stamp(ns(1)))

    assert out(stream, publication) == published
    for joint in published:  # each sent with no motion: at its origin
        assert row_matrix(rows_by_joint(stream, publication)[joint]) == pytest.approx(
            reference_matrix(joints, joint), abs=1e-12)
    assert stream.report.dropped == {'unusable MultiDOFJointState entry': len(ignored)}
    assert stream.report.events == {UNUSABLE_POSE: dict.fromkeys(ignored)}


def test_multi_dof_names_and_poses_of_different_lengths_use_the_common_part():
    stream = make_stream(MIXED)
    poses = np.array([IDENTITY, IDENTITY])
    assert out(stream, stream.multi_dof_joint_state([F, P, 'ghost'], poses, stamp(ns(1)))) \
        == {F, P}
    assert out(stream, stream.multi_dof_joint_state([F], poses, stamp(ns(2)))) == {F}
    assert out(stream, stream.multi_dof_joint_state([], np.empty((0, 7)), stamp(ns(3)))) \
        == set()
    assert stream.report.events == {}


def test_multi_dof_states_are_not_counted_as_joint_states():
    stream = make_stream(MIXED)
    stream.multi_dof_joint_state([F], np.array([IDENTITY]), stamp(ns(1)))
    assert stream.report.received == 0 and stream.report.last_receipt is None


# --------------------------------------------------------------------------- output shape

def test_frames_cover_every_movable_joint_once_with_the_prefix():
    stream = make_stream(MIXED, prefix='robot1/')
    assert sorted(stream.joints) == sorted(movable(MIXED_XML))
    assert stream.frames == tuple(tuple('robot1/' + link for link in frames_of(MIXED_XML, n))
                                  for n in stream.joints)


def test_scalar_and_pose_joints_share_one_index_space():
    stream = make_stream(MIXED, ignore_timestamp=True)
    scalar = stream.joint_state(['hinge'], [1.0], stamp(ns(1)))
    pose = stream.multi_dof_joint_state([P], np.array([IDENTITY]), stamp(ns(1)))

    assert stream.joints[scalar.index[0]] == 'hinge' and stream.joints[pose.index[0]] == P
    assert scalar.rows.shape == pose.rows.shape == (1, 7)
    assert scalar.index.dtype == pose.index.dtype == np.intp


def test_one_key_always_means_one_index():
    stream = make_stream(MIXED)
    publications = [
        stream.joint_state([Z, 'hinge'], [0.1, 1.0], stamp(ns(1))),
        stream.joint_state([Z, 'hinge'], [0.2, 1.1], stamp(ns(2))),
        stream.joint_state([Z, 'hinge'], [0.2, 1.1], stamp(ns(2) + 10 * MS)),  # none due
        stream.joint_state([Z], [0.2], stamp(ns(3))),
        stream.joint_state([Z, 'hinge'], [0.2, 1.1], stamp(ns(3) + 10 * MS)),  # hinge only
        stream.joint_state([Z], [0.2], stamp(ns(4))),
        stream.joint_state([Z, 'hinge'], [0.2, 1.1], stamp(ns(4) + 10 * MS)),  # hinge only
        stream.multi_dof_joint_state([F, P], np.array([IDENTITY] * 2), stamp(ns(1))),
        stream.multi_dof_joint_state([F, P], np.array([IDENTITY] * 2), stamp(ns(2))),
        stream.multi_dof_joint_state([P], np.array([IDENTITY]), stamp(ns(3))),
    ]
    index_of: dict = {}
    for publication in filter(None, publications):
        hash(publication.key)
        index_of.setdefault(publication.key, []).append(publication.index.tolist())
    assert all(len({tuple(i) for i in indexes}) == 1 for indexes in index_of.values())
    # the repeated full and partial name lists hit the same key
    assert publications[0].key == publications[1].key
    assert publications[4].key == publications[6].key != publications[1].key
    assert publications[7].key == publications[8].key


# --------------------------------------------------------------------------- reload

def test_a_reload_keeps_the_counts_and_forgets_what_the_new_model_makes_stale():
    first = make_stream(SAMPLE)
    first.joint_state(['z_lead', 'ghost', E], [0.1, 0.1, 3.0], stamp(ns(1)))
    first.joint_state(['right_finger_joint', 'right_finger_joint'], [0, 0], stamp(ns(2)))
    report = first.report
    assert report.unknown == {'z_lead', 'ghost'} and report.clamped == {E}

    second = make_stream(MIXED, report)

    assert second.report is report
    assert report.unknown == {'ghost'}  # z_lead is a joint of the new model
    assert report.clamped == set()
    assert report.received == 2
    assert report.dropped == {'duplicated joint names': 1}
    second.joint_state(['ghost', 'E_none'], [0, 0], stamp(ns(3)))
    assert report.unknown == {'ghost', 'E_none'}


@pytest.mark.parametrize('model, reported', [(SAMPLE, False), (MIXED, True)],
                         ids=['names_still_unknown', 'names_now_joints'])
def test_a_reload_restarts_the_unknown_count_and_reports_names_while_there_is_room(model,
                                                                                   reported):
    first = make_stream(SAMPLE)
    names = [f'ghost_{i}' for i in range(NAMES_KEPT - 2)] + [Z, F, P, 'hinge']
    first.joint_state(names, [0.0] * len(names), stamp(ns(1)))
    assert first.report.unknown_overflow == 2

    second = make_stream(model, first.report)
    assert second.report.unknown_overflow == 0
    second.joint_state(['brand_new'], [0.0], stamp(ns(2)))

    report = second.report
    assert ('brand_new' in report.unknown) == reported
    assert report.unknown_overflow == (0 if reported else 1)


def test_a_reload_starts_the_rate_limit_and_time_afresh():
    first = make_stream()
    assert run(first, [js(ns(10), {E: 0.1})]) == [ELBOW]
    second = make_stream(SAMPLE, first.report)
    assert run(second, [js(ns(10), {E: 0.1}), js(ns(5), {E: 0.1})]) == [ELBOW, ELBOW]
    assert kinds(second.report) == [TIME_BACKWARDS]


def test_zero_stamps_are_noted_with_their_joints_across_reloads():
    first = make_stream()
    send(first, js(0, {E: 0.1}))
    second = make_stream(SAMPLE, first.report)
    send(second, js(0, {T: 0.1}))
    assert second.report.events == {ZERO_STAMP: dict.fromkeys([E, T])}


# --------------------------------------------------------------------------- report

def test_end_period_forgets_the_period_and_keeps_the_counts():
    stream = make_stream()
    stream.joint_state([E, E], [0.1, 0.1], stamp(ns(1)))
    report = stream.report

    assert report.events == {DUPLICATED: {E: None}}
    report.end_period()
    assert report.period_received == 0 and report.events == {}
    assert report.received == 1 and report.dropped == {'duplicated joint names': 1}


def test_a_joint_state_without_a_model_is_counted_and_dropped():
    report = JointStateHealth()
    report.received_without_model()
    assert report.received == 1
    assert report.dropped == {'no robot description yet': 1}
    assert report.events == {}  # /diagnostics says there is no description


# --------------------------------------------------------------------------- anything goes

NAMES = st.sampled_from([*sorted(movable(MIXED_XML)), 'ghost', 'float_joint', ''])
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0.0, 1e308, -1e308, 5e-324]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.just('js'), st.lists(NAMES, max_size=6), st.lists(NUMBERS, max_size=6),
              st.integers(0, 2**62)),
    st.tuples(st.just('md'), st.lists(NAMES, max_size=4),
              st.lists(st.lists(NUMBERS, min_size=7, max_size=7), max_size=4),
              st.integers(0, 2**62))), max_size=8),
    st.booleans())
def test_nothing_a_sender_does_raises_or_publishes_non_finite_rows(steps, ignore_timestamp):
    stream = make_stream(MIXED, ignore_timestamp=ignore_timestamp)
    for kind, names, values, stamp_ns in steps:
        if kind == 'md':
            values = np.array(values, dtype=float).reshape(-1, 7)
        publication = send(stream, (kind, names, values, stamp_ns))
        if publication is not None:
            assert np.isfinite(publication.rows).all()
            assert np.allclose(np.linalg.norm(publication.rows[:, 3:], axis=1), 1.0)
            assert len(publication.rows) == len(publication.index) > 0
            assert len(set(publication.index.tolist())) == len(publication.index)
    # Whatever came before, a valid state later than every stamp above still goes out, right.
    publication = stream.joint_state(['hinge'], [1.0], stamp(2**62 + S))
    assert out(stream, publication) == {'hinge'}
    assert row_matrix(publication.rows[0]) == pytest.approx(
        reference_matrix(MIXED_XML, 'hinge', 1.0), abs=1e-12)

