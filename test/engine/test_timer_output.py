"""What the node publishes on its timer, without ROS: defaults, and joints held by zeros.

Expected transforms come from the URDF text and reference_math (test_stream's reference), never
from the model.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_stream import (
    E,
    F,
    IDENTITY,
    js,
    make_stream,
    md,
    MIXED,
    MIXED_XML,
    movable,
    ns,
    out,
    P,
    reference_matrix,
    row_matrix,
    rows_by_joint,
    SAMPLE,
    SAMPLE_XML,
    send,
    stamp,
    stamp_of,
)

from urdf_state_publisher.engine.health import JointStateHealth
from urdf_state_publisher.engine.timer_output import TimerOutput
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.kinematics.resolved import ResolvedState

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

# The sample's gripper: right_finger_joint mimics left_finger_joint (1 x + 0), and the tip
# mimics right_finger_joint (-10 x + 0.1).
SAMPLE_GRIPPER_TIP = 'right_finger_tip_joint'


def make_timer(stream, *, defaults: bool = True, reads_joint_states: bool = True,
               held: frozenset[str] = frozenset(), resolved: ResolvedState | None = None):
    return TimerOutput(stream.model, stream.report, resolved=resolved, defaults=defaults,
                       reads_joint_states=reads_joint_states, held=held)


@pytest.mark.parametrize('model, joints, values', [
    (SAMPLE, SAMPLE_XML, {**dict.fromkeys(movable(SAMPLE_XML), 0.0),
                          SAMPLE_GRIPPER_TIP: 0.1}),
    # float_joint and planar_joint: no motion
    (MIXED, MIXED_XML, {'z_lead': 0.0, 'm_mid': 0.1, 'a_tail': 0.2, 'hinge': 1.0, 'slide': 0.7,
                        'spin': 2.0, 'over': 0.2, 'float_joint': 0.0, 'planar_joint': 0.0}),
], ids=['sample_arm', 'mixed_joints'])
def test_default_positions_cover_every_movable_joint(model, joints, values):
    assert set(values) == movable(joints)
    stream = make_stream(model)
    publication = make_timer(stream).publication(stamp(ns(42)))

    rows = rows_by_joint(stream, publication)
    assert set(rows) == set(values) and len(publication.index) == len(rows)
    assert stamp_of(publication) == ns(42)
    for joint, value in values.items():
        assert row_matrix(rows[joint]) == pytest.approx(
            reference_matrix(joints, joint, value), abs=1e-12)


@pytest.mark.parametrize('first, stops', [
    (js(ns(1), {E: 0.1}), True),
    (js(ns(1), {'ghost': 0.1}), True),  # any JointState, even one with nothing usable
    (md(ns(1), {F: IDENTITY}), True),
    (md(ns(1), {'ghost': IDENTITY}), True),
    (None, False),  # a JointState before there was a model
], ids=['joint_state', 'unusable_joint_state', 'multi_dof', 'unusable_multi_dof',
        'without_model'])
def test_default_positions_stop_at_the_first_joint_state(first, stops):
    stream = make_stream(MIXED)
    timer = make_timer(stream)
    assert timer.publication(stamp(ns(1))) is not None
    if first is None:
        stream.report.received_without_model()
    else:
        send(stream, first)

    assert (timer.publication(stamp(ns(2))) is None) == stops
    assert timer.finished == stops
    # and defaults never touch the rate limit
    assert out(stream, send(stream, js(ns(1), {'hinge': 1.0}))) == {'hinge'}


def test_defaults_do_not_restart_after_a_reload():
    stream = make_stream(MIXED)
    send(stream, js(ns(1), {'hinge': 1.0}))
    reloaded = make_stream(SAMPLE, stream.report)
    assert make_timer(reloaded).publication(stamp(ns(2))) is None


def test_without_defaults_or_held_joints_the_timer_has_nothing_to_do():
    timer = make_timer(make_stream(SAMPLE), defaults=False)
    assert timer.finished and timer.publication(stamp(ns(1))) is None


def test_without_a_joint_state_topic_the_defaults_go_on_for_good():
    stream = make_stream(MIXED)
    timer = make_timer(stream, reads_joint_states=False)
    send(stream, md(ns(1), {F: IDENTITY}))  # multi_dof_joint_states is still read

    for tick in (2, 3):
        publication = timer.publication(stamp(ns(tick)))
        # every joint but the floating one, which its source drives now
        assert out(stream, publication) == movable(MIXED_XML) - {F}
        assert stamp_of(publication) == ns(tick)
    assert not timer.finished


def test_held_joints_and_their_followers_go_on_after_the_first_joint_state():
    stream = make_stream(SAMPLE)
    held = frozenset({'left_finger_joint', 'wrist_roll_joint'})
    timer = make_timer(stream, held=held)
    send(stream, js(ns(1), {E: 0.3}))

    publication = timer.publication(stamp(ns(5)))
    rows = rows_by_joint(stream, publication)
    assert set(rows) == held | {'right_finger_joint', SAMPLE_GRIPPER_TIP}
    # the model's defaults are 0 for both held joints (0 is inside their limits)
    for joint, value in (('left_finger_joint', 0.0), ('wrist_roll_joint', 0.0),
                         ('right_finger_joint', 0.0), (SAMPLE_GRIPPER_TIP, -10 * 0.0 + 0.1)):
        assert row_matrix(rows[joint]) == pytest.approx(
            reference_matrix(SAMPLE_XML, joint, value), abs=1e-12)
    assert not timer.finished


def test_a_held_joint_named_by_a_source_is_the_sources_with_its_followers():
    stream = make_stream(SAMPLE)
    timer = make_timer(stream, held=frozenset({'left_finger_joint', 'wrist_roll_joint'}))
    send(stream, js(ns(1), {'left_finger_joint': 0.01}))
    assert out(stream, timer.publication(stamp(ns(2)))) == {'wrist_roll_joint'}
    send(stream, js(ns(2), {'wrist_roll_joint': 0.2}))
    assert timer.publication(stamp(ns(3))) is None


def test_one_key_stands_for_one_index():
    stream = make_stream(SAMPLE)
    timer = make_timer(stream, held=frozenset({'wrist_roll_joint'}))
    before = timer.publication(stamp(ns(1)))
    send(stream, js(ns(1), {E: 0.3}))
    after = [timer.publication(stamp(ns(k))) for k in (2, 3)]
    assert after[0].key == after[1].key != before.key
    assert after[0].index.tolist() == after[1].index.tolist() != before.index.tolist()
    hash(before.key)


def test_a_held_value_comes_from_zeros_through_the_models_defaults():
    text = """<robot name="r"><link name="a"/><link name="b"/>
      <joint name="j" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <model_state model="r"><joint_state joint="j" position="0.5"/></model_state></robot>"""
    model = RobotModel.from_urdf(text)
    stream = make_stream(model)
    timer = make_timer(stream, held=frozenset({'j'}))
    send(stream, js(ns(1), {'ghost': 1.0}))
    rows = rows_by_joint(stream, timer.publication(stamp(ns(2))))
    assert rows['j'][:3] == pytest.approx([0.0, 0.0, 0.5])


def test_resolved_defaults_until_a_joint_state_and_for_good_without_a_topic():
    health = JointStateHealth()
    stream = make_stream(SAMPLE, health)
    resolved = ResolvedState(SAMPLE)
    with_sources = make_timer(stream, resolved=resolved)
    without = make_timer(stream, resolved=resolved, reads_joint_states=False)
    assert with_sources.resolved_fields((3, 4)).sec == 3
    send(stream, js(ns(1), {E: 0.1}))
    assert with_sources.resolved_fields((5, 6)) is None
    fields = without.resolved_fields((5, 6))
    assert (fields.sec, fields.nanosec) == (5, 6)
    assert dict(zip(fields.names, fields.positions)) == pytest.approx(
        {**dict.fromkeys(SAMPLE.scalar_joints, 0.0), SAMPLE_GRIPPER_TIP: 0.1})
    assert fields.velocities is None and fields.efforts is None
    assert make_timer(stream).resolved_fields((5, 6)) is None  # no resolved state


def test_unknown_velocities_and_efforts_are_zero_when_asked():
    resolved = ResolvedState(SAMPLE, zero_unknown_velocities=True)
    fields = resolved.fields((1, 0))
    assert np.array_equal(fields.velocities, np.zeros(len(SAMPLE.scalar_joints)))
    assert fields.efforts is None
    assert P not in fields.names
