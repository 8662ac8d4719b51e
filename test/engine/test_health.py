"""What the node tells about its joint-state inputs, without ROS: a fake clock drives it.

A `Rig` is a JointStream on a model, reporting to a JointStateHealth whose clock is the rig's
millisecond counter. Sources send on a 10 ms grid; the health is assessed on every whole second,
as the node's 1 Hz diagnostics timer does.
"""

from __future__ import annotations

import math
from pathlib import Path
import random
import re

import numpy as np
import pytest

from urdf_state_publisher.engine.health import (
    EventTally,
    GRACE_S,
    JointStateHealth,
    Level,
    LogLine,
    MAX_SOURCES,
    NAMES_KEPT,
    WAIT_S,
)
from urdf_state_publisher.engine.health_names import prefix_change, PrefixChange
from urdf_state_publisher.engine.stream import JointStream
from urdf_state_publisher.kinematics.model import RobotModel

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

REPO = Path(__file__).resolve().parents[2]
SAMPLE_TEXT = (REPO / 'urdf' / 'sample_arm.urdf').read_text()
SAMPLE = RobotModel.from_urdf(SAMPLE_TEXT)
MIXED = RobotModel.from_file(REPO / 'test' / 'fixtures' / 'mixed_joints.urdf')
S, MS = 1_000_000_000, 1_000_000
T, PAN, E = 'torso_lift_joint', 'shoulder_pan_joint', 'elbow_joint'
ARM = (T, PAN, 'shoulder_lift_joint', E, 'wrist_roll_joint')
GRIPPER = ('left_finger_joint',)  # the other two gripper joints mimic it
ALL = ARM + GRIPPER
IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def prefixed(text: str, prefix: str) -> RobotModel:
    """The sample arm with `prefix` before every joint name."""
    return RobotModel.from_urdf(re.sub(r'((?:<joint name|<mimic joint)=")', r'\1' + prefix, text))


class Rig:
    """A JointStream and its JointStateHealth on a fake clock that counts milliseconds."""

    def __init__(self, model: RobotModel = SAMPLE, *, defaults: bool = False,
                 frequency: float = 20.0, **options):
        self.ms = 0
        self.health = JointStateHealth(clock=lambda: self.ms / 1000,
                                       publishes_defaults=defaults, **options)
        self.stream = self.stream_of(model, frequency)
        self.assessments: list = []

    def stream_of(self, model: RobotModel, frequency: float = 20.0) -> JointStream:
        """A new stream (as on a reload) reporting to the same health."""
        self.stream = JointStream(model, report=self.health, clock=self.stamp,
                                  publish_interval_ns=round(1e9 / frequency))
        return self.stream

    def stamp(self) -> tuple[int, int]:
        """Stamps follow the clock, from second 1000."""
        return divmod(1000 * S + self.ms * MS, S)

    def send(self, names: tuple[str, ...], positions=None, stamp=None):
        positions = np.zeros(len(names)) if positions is None else np.array(positions, float)
        return self.stream.joint_state(names, positions, self.stamp() if stamp is None else stamp)

    def run(self, seconds: float, *sources: tuple[tuple[str, ...], int]) -> list:
        """Advance the clock; each source (names, every so many ms) sends on its grid.

        Returns the assessments made meanwhile, one per whole second.
        """
        made = []
        for _ in range(round(seconds * 100)):
            self.ms += 10
            for names, every in sources:
                if self.ms % every == 0:
                    self.send(names)
            if self.ms % 1000 == 0:
                made.append(self.health.assess())
        self.assessments += made
        return made


def log_of(assessments) -> list[LogLine]:
    return [line for a in assessments for line in a.log]


def values(assessment) -> dict[str, str]:
    return dict(assessment.values)


def levels(assessments) -> list[Level]:
    return [a.level for a in assessments]


# --------------------------------------------------------------------------- healthy streams

def test_a_decimated_stream_is_ok_and_its_figures_are_values():
    rig = Rig()
    made = rig.run(10, (ALL, 10))  # 100 Hz, published at 20 Hz

    assert levels(made) == [Level.OK] * 10
    assert {a.message for a in made} == {'publishing'}
    assert log_of(made) == []
    last = values(made[-1])
    assert last['joint_states received'] == '1000'
    assert last['joint_states rate (Hz)'] == '100.0'
    assert last['tf messages published'] == '200'  # one state in five
    assert last['dropped: rate limit (publish_frequency)'] == '800'
    assert last['sources'] == '1'
    assert last['source 1 joints'] == ', '.join(ALL)
    assert last['source 1 rate (Hz)'] == '100.0'
    assert last['source 1 age (s)'] == '0.000'
    assert last['joints never received'] == last['stale joints'] == last['hint'] == ''


def test_the_first_seconds_are_ok_while_waiting_for_joint_states():
    rig = Rig()
    made = rig.run(WAIT_S)
    assert levels(made) == [Level.OK] * int(WAIT_S)
    assert {a.message for a in made} == {'waiting for joint_states'}
    assert log_of(made) == []

    [late] = rig.run(1)
    assert late.level == Level.WARN
    assert late.message == 'no joint_states in 30 s'
    assert late.log == (LogLine(Level.WARN, (
        'no joint_states received in the 30 s since the robot description was loaded: the '
        'moving joints have no transform on /tf (is the joint-state source running and '
        'publishing on joint_states?)')),)

    [arrived] = rig.run(1, (ALL, 10))
    assert arrived.level == Level.OK and arrived.message == 'publishing'
    assert arrived.log == (LogLine(Level.OK, 'joint_states are arriving'),)


def test_default_positions_make_waiting_for_joint_states_no_problem():
    rig = Rig(defaults=True)
    made = rig.run(WAIT_S + 5)
    assert levels(made) == [Level.OK] * int(WAIT_S + 5)
    assert {a.message for a in made} == {'publishing default positions until joint_states arrive'}
    assert log_of(made) == []


def test_a_slow_source_next_to_a_fast_one_is_not_stale():
    rig = Rig()
    made = rig.run(20, (ARM, 10), (GRIPPER, 1000))  # the gripper at 1 Hz
    assert levels(made) == [Level.OK] * 20 and log_of(made) == []

    # Stopped, it is reported after five of its own intervals, not after one second.
    made = rig.run(8, (ARM, 10))
    assert levels(made) == [Level.OK] * 5 + [Level.WARN] * 3
    assert values(made[5])['stale joints'] == 'left_finger_joint (6.0 s ago)'


# --------------------------------------------------------------------------- sources

def test_a_source_that_stops_while_another_goes_on_is_named_until_it_resumes():
    rig = Rig()
    rig.run(3.5, (ARM, 10), (GRIPPER, 10))
    made = rig.run(2.5, (ARM, 10))  # assessed at 4, 5 and 6 s; the gripper stopped at 3.5 s

    assert levels(made) == [Level.OK, Level.WARN, Level.WARN]
    assert made[1].message == 'stale joints: left_finger_joint'
    assert values(made[1])['stale joints'] == 'left_finger_joint (1.5 s ago)'
    assert values(made[2])['stale joints'] == 'left_finger_joint (2.5 s ago)'
    assert log_of(made) == [LogLine(Level.WARN, (
        'joint values stopped updating while other joints go on (has their source stopped?): '
        'left_finger_joint (1.5 s ago)'))]
    assert values(made[2])['source 2 joints'] == 'left_finger_joint'
    assert values(made[2])['source 2 rate (Hz)'] == '0.0'
    assert values(made[2])['source 2 age (s)'] == '2.500'

    made = rig.run(2, (ARM, 10), (GRIPPER, 10))
    assert levels(made) == [Level.OK, Level.OK]
    assert values(made[0])['stale joints'] == ''
    assert log_of(made) == [LogLine(Level.OK, 'joints update again: left_finger_joint')]

    # Its interval was measured again after the stop: a second stop is found as fast.
    rig.run(0.5, (ARM, 10), (GRIPPER, 10))
    made = rig.run(2.5, (ARM, 10))
    assert levels(made) == [Level.OK, Level.WARN, Level.WARN]


def test_joints_another_source_still_carries_are_not_stale():
    rig = Rig()
    rig.run(2, (ALL, 10), (GRIPPER, 10))
    made = rig.run(5, (ALL, 10))  # the gripper-only list stopped; the full one goes on
    assert levels(made) == [Level.OK] * 5 and log_of(made) == []


def test_when_every_source_stops_joint_states_have_stopped_and_nothing_is_stale():
    rig = Rig()
    rig.run(3.5, (ARM, 10), (GRIPPER, 20))
    made = rig.run(2.5)
    assert levels(made) == [Level.OK, Level.WARN, Level.WARN]
    assert made[1].message == 'no joint_states for 1.5 s'
    assert values(made[1])['stale joints'] == ''
    assert log_of(made) == [LogLine(Level.WARN, 'no joint_states for 1.5 s: every source has '
                                                'stopped')]
    made = rig.run(1, (ARM, 10), (GRIPPER, 20))
    assert made[0].level == Level.OK
    assert made[0].log == (LogLine(Level.OK, 'joint_states are arriving again'),)


def test_a_stopped_source_stays_stale_when_the_others_stop_later():
    rig = Rig()
    rig.run(2.5, (ARM, 10), (GRIPPER, 10))
    rig.run(3, (ARM, 10))  # the gripper stopped at 2.5 s
    made = rig.run(3)  # the arm at 5.5 s
    assert [a.message for a in made] == [
        'stale joints: left_finger_joint', 'no joint_states for 1.5 s; stale joints: '
        'left_finger_joint', 'no joint_states for 2.5 s; stale joints: left_finger_joint']
    made = rig.run(1, (ARM, 10))
    assert made[0].message == 'stale joints: left_finger_joint'
    assert made[0].log == (LogLine(Level.OK, 'joint_states are arriving again'),)


def test_joints_no_message_has_carried_are_named_after_the_grace_period():
    rig = Rig()
    made = rig.run(GRACE_S + 3, (ARM, 10))
    # First JointState at 0.01 s, noticed at the assessment of 1 s: judged from 6 s on.
    assert levels(made) == [Level.OK] * 5 + [Level.WARN] * 3
    assert made[5].message == 'joints never received: left_finger_joint'
    assert values(made[5])['joints never received'] == 'left_finger_joint'
    assert log_of(made) == [LogLine(Level.WARN, (
        'no JointState or MultiDOFJointState has given a value to these moving joints, so '
        'they have no transform on /tf: left_finger_joint'))]

    made = rig.run(1, (ARM, 10), (GRIPPER, 10))
    assert made[0].level == Level.OK
    assert made[0].log == (LogLine(Level.OK, 'every moving joint has received a value'),)


def test_joints_held_by_zeros_are_passive_on_purpose_not_never_received():
    rig = Rig(held=frozenset({'left_finger_joint'}))
    made = rig.run(GRACE_S + 3, (ARM, 10))
    assert levels(made) == [Level.OK] * len(made) and log_of(made) == []
    assert made[-1].message == 'publishing'
    assert values(made[-1])['joints never received'] == ''
    assert values(made[-1])['joints held by zeros (named by no source)'] == 'left_finger_joint'

    made = rig.run(1, (ARM, 10), (GRIPPER, 10))  # a source names it: the source's now
    assert values(made[-1])['joints held by zeros (named by no source)'] == ''


def test_without_a_joint_state_topic_the_defaults_are_ok_and_said_so():
    rig = Rig(MIXED, defaults=True, reads_joint_states=False)
    made = rig.run(WAIT_S + GRACE_S + 2)
    assert levels(made) == [Level.OK] * len(made) and log_of(made) == []
    assert made[-1].message == 'publishing default positions: no joint-state source is configured'
    # A MultiDOFJointState source: its pose joints are expected, the others are defaults.
    pose = np.array([IDENTITY])
    for _ in range(round((GRACE_S + 2) * 100)):
        rig.ms += 10
        rig.stream.multi_dof_joint_state(['float_joint'], pose, rig.stamp())
        if rig.ms % 1000 == 0:
            made.append(rig.health.assess())
    assert made[-1].message == 'joints never received: planar_joint'


def test_a_long_list_of_joints_never_received_is_cut():
    model = RobotModel.from_urdf(
        '<robot name="long">' + ''.join(f'<link name="l{i}"/>' for i in range(41))
        + ''.join(f'<joint name="j{i}" type="continuous"><parent link="l{i}"/>'
                  f'<child link="l{i + 1}"/></joint>' for i in range(40)) + '</robot>')
    rig = Rig(model)
    made = rig.run(GRACE_S + 1, (('j0',), 10))

    listed = ', '.join(f'j{i}' for i in range(1, 11)) + ', ... and 29 more'
    assert values(made[-1])['joints never received'] == listed
    assert made[-1].message == 'joints never received: j1, j2, j3 and 36 more'
    assert log_of(made)[0].text.endswith(f'on /tf: {listed}')


def test_a_reload_restarts_the_grace_period_and_keeps_the_sources():
    rig = Rig()
    rig.run(3, (ARM, 10), (GRIPPER, 10))
    rig.stream_of(prefixed(SAMPLE_TEXT, ''))  # the same joints, a new model
    made = rig.run(GRACE_S + 2, (ARM, 10), (GRIPPER, 10))
    assert levels(made) == [Level.OK] * int(GRACE_S + 2)
    assert values(made[-1])['sources'] == '2'
    assert values(made[-1])['source 1 joints'] == ', '.join(ARM)
    assert values(made[-1])['source 2 joints'] == 'left_finger_joint'

    rig.ms = 10_000
    rig.stream_of(MIXED)  # activated at 10 s: its joints are judged from 15 s on
    made = rig.run(GRACE_S + 1, (('z_lead',), 10))
    assert levels(made) == [Level.OK] * 4 + [Level.WARN] * 2
    never = values(made[-1])['joints never received'].split(', ')
    assert set(never) == set(MIXED.independent_joints) - {'z_lead'}


# --------------------------------------------------------------------------- problems

def send_nan(rig):
    rig.send((T, PAN), [math.nan, 0.1])


def send_multi_dof(rig):
    rig.stream.multi_dof_joint_state(['ghost'], np.array([IDENTITY]), rig.stamp())


# case: (what the bad input is, its level, the status message, the start and the end line)
PROBLEMS = {
    'nan': (send_nan, Level.WARN, 'NaN or infinite positions: torso_lift_joint',
            'JointState has NaN or infinite positions (ignored) for: torso_lift_joint',
            'JointState positions are finite again'),
    'clamped': (lambda rig: rig.send((E,), [3.0]), Level.WARN, 'joints clamped: elbow_joint',
                'joint values outside their limits were clamped: elbow_joint',
                'joint values are within their limits again'),
    'duplicated': (lambda rig: rig.send((E, E), [0.1, 0.2]), Level.WARN,
                   'duplicated joint names: elbow_joint',
                   'JointState names these joints more than once, so their values are '
                   'ambiguous and ignored: elbow_joint', 'JointStates name each joint once again'),
    'not_scalar': (lambda rig: rig.send(('base_joint',), [0.1]), Level.WARN,
                   'values for fixed, floating or planar joints: base_joint',
                   'JointState gives a value to joints without a single position (fixed joints '
                   'take none; drive floating and planar joints with MultiDOFJointState on '
                   'multi_dof_joint_states); ignored: base_joint',
                   'JointStates give no value to fixed, floating or planar joints any more'),
    'length': (lambda rig: rig.send((T, E), [0.1]), Level.WARN,
               'names and positions differ in length',
               'JointState names and positions differ in length: 2 names but 1 positions, '
               'ignoring the joints without a position: elbow_joint',
               'JointStates have as many positions as names again'),
    'unknown': (lambda rig: rig.send(('ghost', E), [0.0, 0.1]), Level.WARN,
                'unknown joint names: ghost',
                "JointState names joints that robot 'sample_arm' does not have (ignored): ghost",
                "JointStates name only joints of robot 'sample_arm' again"),
    'time': (lambda rig: rig.send((E,), stamp=(999, 0)), Level.WARN,
             'time moved backwards: elbow_joint',
             'joint state time moved backwards (simulation reset, bag loop or a restarted '
             'source?); publishing these joints again from the new time: elbow_joint',
             'joint state time moves forward again'),
    'zero_stamp': (lambda rig: rig.send((E,), stamp=(0, 0)), Level.WARN,
                   'zero stamps: elbow_joint',
                   'JointStates with a zero stamp are published with the time of receipt (stamp '
                   'joint states at their source); joints: elbow_joint',
                   'JointStates are stamped again'),
    'malformed': (lambda rig: rig.health.received_malformed('truncated JointState (30 bytes)'),
                  Level.WARN, 'malformed JointState bytes',
                  'ignoring a JointState: truncated JointState (30 bytes)',
                  'JointState bytes are readable again'),
    'internal_error': (lambda rig: rig.health.internal_error(
        "failed to process a JointState: ValueError('x')"), Level.ERROR, 'internal error',
        "internal error while processing joint states: failed to process a JointState: "
        "ValueError('x')", 'joint states processed without internal errors again'),
    'multi_dof': (send_multi_dof, Level.WARN, 'unusable MultiDOFJointState entries: ghost',
                  'MultiDOFJointState entries ignored (not a floating or planar joint of the '
                  'model, a duplicated name, or a non-finite or zero transform): ghost',
                  'MultiDOFJointState entries are usable again'),
}


@pytest.mark.parametrize('case', PROBLEMS)
def test_a_problem_is_a_warning_while_it_happens_logged_when_it_starts_and_ends(case):
    bad_input, level, message, start, end = PROBLEMS[case]
    rig = Rig()
    rig.run(1.5, (ALL, 10))
    bad_input(rig)
    made = rig.run(2.5, (ALL, 10))  # assessed at 2 s (the bad input), 3 s and 4 s

    assert levels(made) == [level, Level.OK, Level.OK]
    assert made[0].message == message
    assert [a.log for a in made] == [(LogLine(level, start),), (LogLine(Level.OK, end),), ()]


def test_a_lasting_problem_is_logged_once_and_again_only_for_new_joints():
    rig = Rig()
    rig.run(3, (ALL, 10))
    made = []
    for _ in range(30):  # a second source sends the elbow too far, 10 times a second
        rig.send((E,), [3.0])
        made += rig.run(0.1, (ALL, 10))
    for _ in range(20):
        rig.send((E, T), [3.0, -1.0])
        made += rig.run(0.1, (ALL, 10))
    made += rig.run(2, (ALL, 10))

    assert levels(made) == [Level.WARN] * 5 + [Level.OK] * 2
    assert log_of(made) == [
        LogLine(Level.WARN, 'joint values outside their limits were clamped: elbow_joint'),
        LogLine(Level.WARN, 'joint values outside their limits were clamped, now also: '
                            'torso_lift_joint'),
        LogLine(Level.OK, 'joint values are within their limits again'),
    ]
    assert values(made[-1])['joints clamped'] == 'elbow_joint, torso_lift_joint'  # since start


# --------------------------------------------------------------------------- names

def test_names_that_match_nothing_are_an_error_with_the_prefix_that_would_match():
    rig = Rig()
    names = tuple('robot1/' + n for n in ALL)
    made = rig.run(2, (names, 10))

    assert levels(made) == [Level.ERROR, Level.ERROR]
    assert made[0].message == 'no joint name matches the model'
    hint = ("Hint: 6 of 6 unknown names are joints of robot 'sample_arm' without the prefix "
            "'robot1/' ('robot1/torso_lift_joint' is 'torso_lift_joint'): give the joint-state "
            'source and the description the same joint names (the prefix argument of the xacro '
            "description, the joints in the controllers' configuration); frame_prefix renames "
            'frames, not joints')
    assert values(made[0])['hint'] == hint
    assert log_of(made) == [LogLine(Level.ERROR, (
        "no name in the JointStates is a joint of robot 'sample_arm', so nothing moves; they "
        f"name: {', '.join(names)}. {hint}"))]
    assert values(made[0])['source 1 joints'] == f'none of the model ({", ".join(names)})'

    made = rig.run(1, (ALL, 10))
    assert made[0].log == (LogLine(Level.OK, "JointStates name joints of robot 'sample_arm' "
                                             'again'),)
    assert made[0].level == Level.OK


@pytest.mark.parametrize('model, received, how', [
    (SAMPLE, '/ns/{}', "without the prefix '/ns/'"),
    (SAMPLE, 'left_{}', "without the prefix 'left_'"),
    (SAMPLE, 'robot1_{}', "without the prefix 'robot1_'"),
    (prefixed(SAMPLE_TEXT, 'left_'), '{}', "with the prefix 'left_' added"),
    (prefixed(SAMPLE_TEXT, 'arm/'), '{}', "with the prefix 'arm/' added"),
    (prefixed(SAMPLE_TEXT, 'left_'), 'right_{}', "with the prefix 'right_' replaced by 'left_'"),
    (prefixed(SAMPLE_TEXT, 'robot2/'), 'robot1/{}',
     "with the prefix 'robot1/' replaced by 'robot2/'"),
], ids=['namespace', 'side', 'robot', 'add_side', 'add_namespace', 'swap_side', 'swap_robot'])
def test_the_hint_names_the_prefix_change(model, received, how):
    rig = Rig(model)
    [made] = rig.run(1, (tuple(received.format(n) for n in ALL), 10))
    assert made.level == Level.ERROR
    assert values(made)['hint'].startswith(
        f"Hint: 6 of 6 unknown names are joints of robot 'sample_arm' {how} (")


def test_names_that_match_nothing_by_any_prefix_get_no_hint():
    rig = Rig()
    [made] = rig.run(1, (('alpha', 'beta_gamma', 'delta/epsilon'), 10))
    assert made.level == Level.ERROR and values(made)['hint'] == ''
    assert made.log[0].text.endswith('they name: alpha, beta_gamma, delta/epsilon')


def test_some_unknown_names_next_to_known_ones_are_a_warning_with_the_hint():
    rig = Rig()
    [made] = rig.run(1, (ARM, 10), (('gripper/left_finger_joint',), 10))
    assert made.level == Level.WARN
    assert made.message == 'unknown joint names: gripper/left_finger_joint'
    assert "without the prefix 'gripper/'" in made.log[0].text


@pytest.mark.parametrize('names, joints, change', [
    (['ns/a_joint', 'ns/b_joint'], ['a_joint', 'b_joint'],
     PrefixChange('ns/', '', 2, 2, ('ns/a_joint', 'a_joint'))),
    (['a', 'b'], ['x:a', 'x:b', 'y:c'], PrefixChange('', 'x:', 2, 2, ('a', 'x:a'))),
    (['l.a', 'l.b', 'l.c'], ['r.a', 'r.b', 'r.c'], PrefixChange('l.', 'r.', 3, 3, ('l.a', 'r.a'))),
    (['p_a', 'zzz', 'qqq'], ['a'], None),  # one name of three: not enough
    (['a_x', 'b_y'], ['c_x'], None),  # a replacement that explains a single name of two
    # One name replaced or added to is a guess: 'elbow_joint' is not 'torso_lift_joint'.
    (['gripper_finger'], ['left_finger'], None),
    (['elbow_joint'], ['torso_lift_joint', 'elbow_jiont'], None),
    (['ghost_joint'], ['elbow_joint'], None),
    (['joint'], ['a_joint', 'b_joint'], None),
    (['a_x', 'b_x'], ['c_x'], None),  # two names, one joint: no renaming explains both
    (['ns/a_joint'], ['a_joint'], PrefixChange('ns/', '', 1, 1, ('ns/a_joint', 'a_joint'))),
    (['a', 'b'], ['a', 'b'], None),  # nothing unknown
])
def test_prefix_change(names, joints, change):
    assert prefix_change(names, joints) == change


# --------------------------------------------------------------------------- bounds

def test_a_flood_of_random_names_keeps_memory_and_log_bounded():
    rig = Rig()
    chooser = random.Random(19)
    made = []
    for _ in range(10):
        for _ in range(100):
            names = tuple(f'junk_{chooser.getrandbits(40):x}' for _ in range(20))
            rig.send(names)
            rig.ms += 1
        made += rig.run(1 - 0.1)

    assert len(rig.health.sources) <= MAX_SOURCES
    assert levels(made) == [Level.ERROR] * 10
    assert all(len(a.message) < 200 for a in made)
    logged = [name for line in log_of(made) for name in re.findall(r'junk_[0-9a-f]+', line.text)]
    assert len(logged) <= 2 * NAMES_KEPT  # each name in one line, its hint the only other
    assert len(log_of(made)) <= 1 + NAMES_KEPT
    assert all(len(v) < 2000 for _, v in made[-1].values)


def test_sources_beyond_the_limit_forget_the_one_heard_least_recently():
    rig = Rig()
    for k in range(MAX_SOURCES + 5):
        rig.send(ALL[:1 + k % len(ALL)] + tuple(f'extra_{k}_{i}' for i in range(k // 6)))
        rig.ms += 10
    assert len(rig.health.sources) == MAX_SOURCES
    assert len(rig.health.source_of_plan) == MAX_SOURCES
    [made] = rig.run(1, (ALL, 10))
    assert values(made)['sources'] == str(MAX_SOURCES)

    # More lists than the model caches plans for, and the full list between them: its plan is
    # made again, and found to be the same source.
    full = rig.health.sources[('JointState', '', ALL)]
    count = full.count
    for k in range(300):
        rig.send((E, f'extra_{k}'))
        rig.send(ALL)
        rig.ms += 10
    assert rig.health.sources[('JointState', '', ALL)] is full and full.count == count + 300
    assert len(rig.health.sources) == len(rig.health.source_of_plan) == MAX_SOURCES


def test_joint_states_rclpy_deserialized_are_counted_per_encapsulation_and_no_problem():
    rig = Rig()
    for encapsulation in ('0007', '0007', '0009'):
        rig.health.deserialized_by_rclpy(encapsulation)
    made = rig.run(10, (ALL, 10))

    assert levels(made) == [Level.OK] * 10 and log_of(made) == []
    assert {a.message for a in made} == {'publishing'}
    last = values(made[-1])
    assert last['deserialized by rclpy (encapsulation 0007)'] == '2'
    assert last['deserialized by rclpy (encapsulation 0009)'] == '1'


# --------------------------------------------------------------------------- hints and tallies

def test_an_unknown_name_near_a_joint_gets_that_joint_and_no_prefix():
    """A misspelt joint of the description: the source's name is near it, no prefix is."""
    model = RobotModel.from_urdf(SAMPLE_TEXT.replace('"elbow_joint"', '"elbow_jiont"'))
    rig = Rig(model)
    [made] = rig.run(1, (ARM, 10))
    assert values(made)['hint'] == (
        "Hint: 'elbow_joint' is nearest to joint 'elbow_jiont' of robot 'sample_arm': is one "
        'of the two names misspelt, in the description or in the joint-state source?')


def test_events_are_tallied_per_name_at_the_time_of_their_messages():
    rig = Rig()
    rig.run(0.5, (ARM, 10))
    rig.run(0.3, (ARM + ('ghost_joint',), 100))
    rig.run(0.5, (ARM, 10))
    rig.run(0.2, (ARM + ('ghost_joint',), 100))
    [(kind, tallies)] = rig.health.event_tallies().items()
    assert kind == 'unknown joint names'
    # Sent at 0.6, 0.7, 0.8 and at 1.4, 1.5 s of the rig's clock.
    assert tallies == {'ghost_joint': EventTally(first=0.6, last=1.5, count=5)}


@pytest.mark.parametrize('name, hinted', [
    ('elbow_jont', 'elbow_joint'),  # a letter dropped
    ('elbow_joints', 'elbow_joint'),  # added
    ('elbow_jaint', 'elbow_joint'),  # changed
    ('wrist_pitch_joint', None),  # near 'wrist_roll_joint' by ratio, but another joint
    ('shoulder_tilt_joint', None),  # two letters from 'shoulder_lift_joint'
])
def test_a_near_miss_hint_is_one_typo_away_or_none(name, hinted):
    rig = Rig()
    [made] = rig.run(1, (ALL + (name,), 10))
    hint = values(made)['hint']
    if hinted is None:
        assert hint == ''
    else:
        assert hint.startswith(f"Hint: '{name}' is nearest to joint '{hinted}'")
