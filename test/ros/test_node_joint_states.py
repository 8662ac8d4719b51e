"""JointState and MultiDOFJointState in, /tf out: partial sources, mimic, limits, rate, time.

Module-wide nodes, each in a namespace of its own: one on the sample robot, one on
test/fixtures/mixed_joints.urdf, and one on the sample robot for the tests that read a throttled
warning from the log (each is the only test to cause its kind of warning there, so the node's
throttle never hides one test's line behind another test's).

Tests run in any order (pytest-randomly), yet the node remembers stamps across tests (rate
limit, time going backwards). So each test's stamps come from `t0`, a base later than every
stamp of the tests run before it, and every publisher is matched (warm-up stamps near
WARM_UP_SEC) before any test's stamps: time goes backwards only where a test makes it.
"""

import itertools
import math
import time

from conftest import SAMPLE_URDF
from node_fixtures import (
    ARM,
    assert_pose,
    BEST_EFFORT,
    by_child,
    children,
    compose,
    GRIPPER_CHILDREN,
    joint_state,
    MIXED_URDF,
    multi_dof_state,
    node_link_fixture,
    ns,
    q_axis,
    q_mul,
    q_rpy,
    RELIABLE,
    revolute,
    SAMPLE_CHILD,
    sample_pose,
    stamp_of,
    wait_for_log,
)
import pytest

NAME = 'js'
MIXED = 'js_mixed'
LOGS = 'js_log'


def node_parameters(name: str, urdf) -> dict:
    """The node's parameters: a joint-state queue of 100, so that a burst of a test is not cut
    to the default 5 when the node stalls on a loaded machine (what a test expects to see
    published must reach the node)."""
    return {'robot_description': urdf.read_text(),
            'qos_overrides': {f'/{name}/joint_states': {'subscription': {'depth': 100}}}}


module_link = node_link_fixture(NAME, node_parameters(NAME, SAMPLE_URDF), fixture='module_link',
                                namespace=f'/{NAME}', shared_recorders=True)
module_mixed_link = node_link_fixture(MIXED, node_parameters(MIXED, MIXED_URDF),
                                      fixture='module_mixed_link', namespace=f'/{MIXED}',
                                      warm_up_joint='spin', shared_recorders=True)
module_log_link = node_link_fixture(LOGS, node_parameters(LOGS, SAMPLE_URDF),
                                    fixture='module_log_link', namespace=f'/{LOGS}',
                                    shared_recorders=True)

SLOT_SEC = 1000  # seconds of stamps per test: more than any test spans
_slots = itertools.count(SLOT_SEC, SLOT_SEC)


@pytest.fixture
def t0() -> int:
    """This test's base stamp, in ns: later than the stamps of every test run before it."""
    return ns(next(_slots))


@pytest.fixture
def link(module_link):
    module_link.joint_states(BEST_EFFORT)
    module_link.joint_states(RELIABLE, key='gripper')
    module_link.begin()
    return module_link


@pytest.fixture
def mixed(module_mixed_link):
    module_mixed_link.joint_states()
    module_mixed_link.multi_dof_states('float_joint')
    module_mixed_link.begin()
    return module_mixed_link


@pytest.fixture
def logs(module_log_link):
    """The node whose log the test reads; see the module docstring."""
    module_log_link.joint_states()
    module_log_link.begin()
    return module_log_link


@pytest.fixture
def parameters_restored(module_link):
    """Put the rate and limit parameters back to their defaults after the test."""
    yield
    results = module_link.set_parameters(publish_frequency=20.0, ignore_timestamp=False,
                                         use_smallest_joint_limits=False)
    assert all(r.successful for r in results)


def values_of(message, joints):
    return {j: by_child([message])[SAMPLE_CHILD[j]] for j in joints}


# --------------------------------------------------------------------------- sources


def test_two_partial_sources_each_publish_exactly_their_joints_and_followers(link, t0):
    arm, gripper = link.joint_states(BEST_EFFORT), link.joint_states(RELIABLE, key='gripper')
    stamp = t0
    arm_values = dict(zip(ARM, (0.25, -1.0, 0.6, 1.1, 2.5)))

    arm.publish(joint_state(stamp, arm_values))
    gripper.publish(joint_state(stamp, ['left_finger_joint'], [0.01]))
    messages = link.expect(stamp, count=2)

    assert sorted(len(m.transforms) for m in messages) == [3, 5]
    [from_arm] = [m for m in messages if len(m.transforms) == 5]
    [from_gripper] = [m for m in messages if len(m.transforms) == 3]
    assert children(from_arm) == {SAMPLE_CHILD[j] for j in ARM}
    assert children(from_gripper) == GRIPPER_CHILDREN
    for joint, stamped in values_of(from_arm, ARM).items():
        assert_pose(stamped, sample_pose(joint, arm_values[joint]))
    assert_pose(by_child([from_gripper])['left_finger_link'],
                sample_pose('left_finger_joint', 0.01))


# --------------------------------------------------------------------------- mimic


def test_mimic_chain_followers_get_multiplier_times_leader_plus_offset(link, t0):
    message = link.publish_and_expect(
        link.joint_states(), joint_state(t0, ['left_finger_joint'], [0.015]))

    assert children(message) == GRIPPER_CHILDREN
    frames = by_child([message])
    assert_pose(frames['left_finger_link'], sample_pose('left_finger_joint', 0.015))
    # right = 1 × left; tip = -10 × right + 0.1
    assert_pose(frames['right_finger_link'], sample_pose('right_finger_joint', 0.015))
    assert frames['right_finger_link'].transform.translation.y == pytest.approx(-0.025)
    assert_pose(frames['right_finger_tip_link'], sample_pose('right_finger_tip_joint', -0.05))


def test_explicit_value_for_a_mimic_joint_wins(link, t0):
    publisher = link.joint_states()
    first = link.publish_and_expect(publisher, joint_state(
        t0, ['left_finger_joint', 'right_finger_joint'], [0.02, 0.01]))
    second = link.publish_and_expect(publisher, joint_state(
        t0 + ns(1), ['right_finger_tip_joint', 'left_finger_joint'], [0.05, 0.03]))

    frames = by_child([first])
    assert children(first) == GRIPPER_CHILDREN
    assert_pose(frames['left_finger_link'], sample_pose('left_finger_joint', 0.02))
    assert_pose(frames['right_finger_link'], sample_pose('right_finger_joint', 0.01))
    # the tip follows the explicitly given right finger: -10 × 0.01 + 0.1
    assert_pose(frames['right_finger_tip_link'], sample_pose('right_finger_tip_joint', 0.0))
    frames = by_child([second])
    assert children(second) == GRIPPER_CHILDREN
    assert_pose(frames['right_finger_link'], sample_pose('right_finger_joint', 0.03))
    assert_pose(frames['right_finger_tip_link'], sample_pose('right_finger_tip_joint', 0.05))


def test_mimic_chain_resolves_whatever_order_the_names_sort_in(mixed, t0):
    # a_tail mimics m_mid which mimics z_lead: names sort follower-first.
    message = mixed.publish_and_expect(
        mixed.joint_states(), joint_state(t0, ['z_lead'], [0.2]))

    frames = by_child([message])
    assert set(frames) == {'lead_link', 'mid_link', 'tail_link'}
    assert_pose(frames['lead_link'], revolute((0, 0, 1), (0, 0, 0), (0, 0, 1), 0.2))
    assert_pose(frames['mid_link'], revolute((0.2, 0, 0), (0, 0, 0), (0, 0, 1), 0.5))
    assert_pose(frames['tail_link'], revolute((0.2, 0, 0), (0, 0, 0), (1, 0, 0), -0.2))


# --------------------------------------------------------------------------- limits


def test_values_outside_limits_are_clamped_and_logged(logs, t0):
    values = {'elbow_joint': 3.0, 'torso_lift_joint': -0.5, 'shoulder_pan_joint': 10.0}

    message = logs.publish_and_expect(logs.joint_states(), joint_state(t0, values))

    assert children(message) == {SAMPLE_CHILD[j] for j in values}
    frames = values_of(message, values)
    assert_pose(frames['elbow_joint'], sample_pose('elbow_joint', 2.3))
    assert_pose(frames['torso_lift_joint'], sample_pose('torso_lift_joint', 0.0))
    # continuous: no limit, no wrapping
    assert_pose(frames['shoulder_pan_joint'], sample_pose('shoulder_pan_joint', 10.0))
    wait_for_log(logs.process, logs.probe, 'clamped')
    [line] = [x for x in logs.new_log().splitlines() if 'clamped' in x]
    assert 'elbow_joint' in line and 'torso_lift_joint' in line
    assert 'shoulder_pan_joint' not in line


def test_mimic_follower_is_clamped_to_its_own_limit_and_listed_in_diagnostics(
        link, t0, parameters_restored):
    # The list of clamped joints is kept until the model changes: a reload (the parameter
    # rebuilds the model) empties it of what earlier tests clamped.
    assert [r.successful for r in link.set_parameters(use_smallest_joint_limits=True)] == [True]
    assert [r.successful for r in link.set_parameters(use_smallest_joint_limits=False)] == [True]
    # right = 0.035 is inside [0, 0.04]; the tip's -10 × 0.035 + 0.1 = -0.25 is below -0.2.
    message = link.publish_and_expect(
        link.joint_states(), joint_state(t0, ['left_finger_joint'], [0.035]))

    assert children(message) == GRIPPER_CHILDREN
    frames = by_child([message])
    assert_pose(frames['left_finger_link'], sample_pose('left_finger_joint', 0.035))
    assert_pose(frames['right_finger_link'], sample_pose('right_finger_joint', 0.035))
    assert_pose(frames['right_finger_tip_link'], sample_pose('right_finger_tip_joint', -0.2))
    values = link.wait_for_diagnostics(
        lambda v: 'right_finger_tip_joint' in v.get('joints clamped', ''))
    assert values['joints clamped'] == 'right_finger_tip_joint'


def test_follower_follows_the_clamped_value_of_its_leader(mixed, t0):
    # z_lead = 1.0 is clamped to 0.5; m_mid must then be 2 × 0.5 + 0.1 = 1.1 (inside its
    # own [-3, 3]) and a_tail -1.1 + 0.3 = -0.8, as on the real robot.
    message = mixed.publish_and_expect(
        mixed.joint_states(), joint_state(t0, ['z_lead'], [1.0]))

    frames = by_child([message])
    assert set(frames) == {'lead_link', 'mid_link', 'tail_link'}
    assert_pose(frames['lead_link'], revolute((0, 0, 1), (0, 0, 0), (0, 0, 1), 0.5))
    assert_pose(frames['mid_link'], revolute((0.2, 0, 0), (0, 0, 0), (0, 0, 1), 1.1))
    assert_pose(frames['tail_link'], revolute((0.2, 0, 0), (0, 0, 0), (1, 0, 0), -0.8))


def test_use_smallest_joint_limits_narrows_to_the_soft_limits(link, t0, parameters_restored):
    publisher = link.joint_states()
    joint = ['shoulder_lift_joint']
    assert [r.successful for r in link.set_parameters(use_smallest_joint_limits=True)] == [True]
    high = link.publish_and_expect(publisher, joint_state(t0, joint, [1.5]))
    low = link.publish_and_expect(publisher, joint_state(t0 + ns(1), joint, [-1.5]))
    assert [r.successful for r in link.set_parameters(use_smallest_joint_limits=False)] == [True]
    hard = link.publish_and_expect(publisher, joint_state(t0 + ns(2), joint, [1.5]))

    assert [children(m) for m in (high, low, hard)] == [{'upper_arm_link'}] * 3
    assert_pose(by_child([high])['upper_arm_link'], sample_pose(joint[0], 1.2))
    assert_pose(by_child([low])['upper_arm_link'], sample_pose(joint[0], -1.4))
    assert_pose(by_child([hard])['upper_arm_link'], sample_pose(joint[0], 1.5))


# --------------------------------------------------------------------------- rate and time


def test_rate_limit_applies_to_each_joint_on_its_own(link, t0):
    publisher = link.joint_states()
    link.publish_and_expect(publisher, joint_state(t0, ['elbow_joint'], [0.1]))

    # 10 ms later: the elbow is not due again, the torso is.
    second = link.publish_and_expect(publisher, joint_state(
        t0 + 10_000_000, ['elbow_joint', 'torso_lift_joint'], [0.2, 0.05]))
    # 50 ms after the first: the elbow is due, the torso (published 40 ms ago) is not.
    third = link.publish_and_expect(publisher, joint_state(
        t0 + 50_000_000, ['torso_lift_joint', 'elbow_joint'], [0.06, 0.3]))

    assert children(second) == {'torso_link'}
    assert_pose(second.transforms[0], sample_pose('torso_lift_joint', 0.05))
    assert children(third) == {'forearm_link'}
    assert_pose(third.transforms[0], sample_pose('elbow_joint', 0.3))


@pytest.mark.parametrize('frequency, offsets_us, published', [
    # 10 Hz: states 50 ms apart, every other one is published (exactly 100 ms apart counts).
    (10.0, [0, 50_000, 100_000, 150_000, 200_000, 250_000, 300_000], [1, 0, 1, 0, 1, 0, 1]),
    # above 1000 Hz: 2000 Hz, states 0.5 ms apart all published, 0.25 ms apart not.
    (2000.0, [0, 500, 750, 1000, 1500, 2000, 2250, 2500, 3000], [1, 1, 0, 1, 1, 1, 0, 1, 1]),
    # 300 Hz: the interval is 3.333333 ms, not truncated to 3 ms.
    (300.0, [0, 3334, 6334, 6668, 10_002], [1, 1, 0, 1, 1]),
], ids=['10Hz', '2000Hz', '300Hz'])
def test_publish_frequency_limits_each_joint_by_stamp(link, t0, parameters_restored, frequency,
                                                      offsets_us, published):
    publisher = link.joint_states()
    assert [r.successful for r in link.set_parameters(publish_frequency=frequency)] == [True]
    stamps = [t0 + 1000 * offset for offset in offsets_us]
    assert published[-1], 'the last state must be published: it shows all were processed'

    for k, (stamp, expected) in enumerate(zip(stamps, published)):
        publisher.publish(joint_state(stamp, ['shoulder_pan_joint'], [0.01 * k]))
        if expected:
            link.expect(stamp)

    assert link.stamps() == [s for s, p in zip(stamps, published) if p]
    last = by_child(link.tf)['shoulder_pan_link']
    assert_pose(last, sample_pose('shoulder_pan_joint', 0.01 * (len(stamps) - 1)))


def test_ignore_timestamp_publishes_every_state_even_with_the_same_stamp(link, t0,
                                                                         parameters_restored):
    publisher = link.joint_states()
    names = ['wrist_roll_joint']
    # Without it, a second state with the same stamp is dropped.
    link.publish_and_expect(publisher, joint_state(t0, names, [0.1]))
    publisher.publish(joint_state(t0, names, [0.2]))
    link.publish_and_expect(publisher, joint_state(t0 + ns(1), names, [0.3]))
    assert link.stamps() == [t0, t0 + ns(1)]

    assert [r.successful for r in link.set_parameters(ignore_timestamp=True)] == [True]
    link.begin()
    publisher.publish(joint_state(t0 + ns(2), names, [0.4]))
    publisher.publish(joint_state(t0 + ns(2), names, [0.5]))
    messages = link.expect(t0 + ns(2), count=2)

    assert_pose(messages[0].transforms[0], sample_pose('wrist_roll_joint', 0.4))
    assert_pose(messages[1].transforms[0], sample_pose('wrist_roll_joint', 0.5))


def test_time_moving_backwards_resets_the_rate_limit_and_publishing_continues(logs, t0):
    publisher = logs.joint_states()
    names = ['elbow_joint']
    logs.publish_and_expect(publisher, joint_state(t0 + ns(50), names, [0.1]))
    # A bag loop: time jumps back by 50 s.
    logs.publish_and_expect(publisher, joint_state(t0, names, [0.2]))
    # 10 ms later: too soon for the elbow; the torso in the same state shows it arrived.
    too_soon = logs.publish_and_expect(publisher, joint_state(
        t0 + 10_000_000, [*names, 'torso_lift_joint'], [0.3, 0.1]))
    logs.publish_and_expect(publisher, joint_state(t0 + 50_000_000, names, [0.4]))

    assert children(too_soon) == {'torso_link'}
    assert logs.stamps() == [t0 + ns(50), t0, t0 + 10_000_000, t0 + 50_000_000]
    wait_for_log(logs.process, logs.probe, 'backwards')
    [line] = [x for x in logs.new_log().splitlines() if 'backwards' in x]
    assert 'elbow_joint' in line and 'torso_lift_joint' not in line


def test_interleaved_sources_keep_their_own_rate_limit(link, t0):
    arm, gripper = link.joint_states(BEST_EFFORT), link.joint_states(RELIABLE, key='gripper')
    # The arm at 100 Hz; the gripper's states, stamped 5 ms earlier, arrive just after: judged
    # against the arm's latest stamp they would go back in time, each restarting its limit.
    for k in range(11):
        arm.publish(joint_state(t0 + k * 10_000_000, ['elbow_joint'], [0.01 * k]))
        link.probe.spin(0.005)
        gripper.publish(joint_state(t0 + k * 10_000_000 - 5_000_000,
                                    ['left_finger_joint'], [0.001 * k]))
        link.probe.spin(0.005)
    last = t0 + ns(1)
    arm.publish(joint_state(last, ['elbow_joint'], [0.5]))
    gripper.publish(joint_state(last, ['left_finger_joint'], [0.02]))
    link.expect(last, count=2)

    def stamps(frames):
        return [stamp_of(m.transforms[0]) for m in link.tf if children(m) == frames]

    # 20 Hz: one state in five of each source, and each source's last one.
    assert stamps({'forearm_link'}) == [t0, t0 + 50_000_000, t0 + 100_000_000, last]
    assert stamps(GRIPPER_CHILDREN) == [t0 - 5_000_000, t0 + 45_000_000, t0 + 95_000_000, last]


def test_zero_stamp_is_replaced_by_the_time_of_receipt(link):
    before = time.time_ns()  # the node's clock is the same system clock
    link.joint_states().publish(joint_state(0, ['torso_lift_joint'], [0.2]))
    link.probe.wait_until(lambda: any(children(m) == {'torso_link'} for m in link.tf), 10,
                          'the unstamped state on /tf')
    after = time.time_ns()

    [message] = [m for m in link.tf if children(m) == {'torso_link'}]
    assert before <= stamp_of(message.transforms[0]) <= after
    assert_pose(message.transforms[0], sample_pose('torso_lift_joint', 0.2))
    wait_for_log(link.process, link.probe, 'zero stamp')


# --------------------------------------------------------------------------- floating, planar

FLOAT_ORIGIN = ((1, 2, 3), q_rpy(0.1, 0.2, 0.5))
PLANAR_ORIGIN = ((0.5, 0, 0.2), q_rpy(0.3, 0, 0))


def test_floating_joint_follows_multi_dof_joint_state(mixed, t0):
    motion = ((0.3, -0.2, 0.5), q_rpy(0.4, -0.1, 0.7))

    message = mixed.publish_and_expect(mixed.multi_dof_states('float_joint'),
                                       multi_dof_state(t0, {'float_joint': motion}))

    [stamped] = message.transforms
    assert (stamped.header.frame_id, stamped.child_frame_id) == ('world', 'body')
    assert_pose(stamped, compose(FLOAT_ORIGIN, motion))


def test_planar_joint_keeps_the_motion_in_its_plane(mixed, t0):
    # Translation along the axis (z) and rotation about other axes are not in the plane.
    tilt_and_turn = q_mul(q_axis((0, 0, 1), 0.4), q_axis((1, 0, 0), 0.2))
    motion = ((0.3, -0.2, 0.9), tilt_and_turn)

    message = mixed.publish_and_expect(mixed.multi_dof_states('float_joint'),
                                       multi_dof_state(t0, {'planar_joint': motion}))

    [stamped] = message.transforms
    assert (stamped.header.frame_id, stamped.child_frame_id) == ('body', 'cart')
    assert_pose(stamped, compose(PLANAR_ORIGIN, ((0.3, -0.2, 0), q_axis((0, 0, 1), 0.4))))


def test_unusable_multi_dof_entries_are_ignored_and_the_rest_published(mixed, t0):
    publisher = mixed.multi_dof_states('float_joint')
    motion = ((0.1, 0.2, 0.3), q_rpy(0, 0, 1.0))
    entries = {
        'ghost_joint': motion,
        'z_lead': motion,  # a revolute joint: JointState drives it
        'planar_joint': ((0.1, 0, 0), (0, 0, 0, 0)),  # no rotation at all
        'float_joint': motion,
    }

    message = mixed.publish_and_expect(publisher, multi_dof_state(t0, entries))
    after = mixed.publish_and_expect(
        publisher, multi_dof_state(t0 + ns(1), {'planar_joint': ((0.1, 0, 0), (0, 0, 0, 1))}))

    assert children(message) == {'body'}
    assert children(after) == {'cart'}
    assert_pose(message.transforms[0], compose(FLOAT_ORIGIN, motion))
    assert_pose(after.transforms[0], compose(PLANAR_ORIGIN, ((0.1, 0, 0), (0, 0, 0, 1))))
    log = wait_for_log(mixed.process, mixed.probe, 'MultiDOFJointState entries ignored')
    line = next(x for x in log.splitlines() if 'MultiDOFJointState entries ignored' in x)
    assert all(name in line for name in ('ghost_joint', 'z_lead', 'planar_joint'))
    assert 'float_joint' not in line.split(':')[-1]
    assert all(math.isfinite(v) for m in mixed.tf for t in m.transforms
               for v in (t.transform.translation.x, t.transform.rotation.w))
