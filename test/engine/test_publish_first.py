"""A due JointState's /tf goes out first; every report it and the states held before it bring
is still made, just after (ROS-free).

The stream hands each publication to `on_publication` before it checks the states held back,
reports what is wrong, keeps the resolved state or updates its bookkeeping. Each test takes a
snapshot of the health at that moment (what a publisher would see) and compares it with the
health once the call has returned: a clamped value, a NaN and an unknown joint, in a held state
and in the due one. The sample robot's limits, written out here: torso_lift_joint [0, 0.3],
elbow_joint [-2.3, 2.3].
"""

from __future__ import annotations

import math

import pytest

from urdf_state_publisher.engine.health import CLAMPED, JointStateHealth, NON_FINITE, UNKNOWN
from urdf_state_publisher.engine.stream import JointStream
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.kinematics.resolved import ResolvedState

pytestmark = pytest.mark.ros_free

from conftest import SAMPLE_URDF  # noqa: E402 - after the mark, as the other ROS-free tests

SAMPLE = RobotModel.from_file(SAMPLE_URDF)
ARM = ('torso_lift_joint', 'shoulder_pan_joint', 'elbow_joint')
S, MS = 1_000_000_000, 1_000_000
GOOD = (0.1, 0.2, 0.3)


class Recorder:
    """The stream's publisher: what the health held when each publication went out."""

    def __init__(self, health: JointStateHealth):
        self.health = health
        self.seen: list[dict] = []

    def __call__(self, publication) -> None:
        self.seen.append({'stamp': publication.sec * S + publication.nanosec,
                          'clamped': set(self.health.clamped),
                          'events': {k: list(v) for k, v in self.health.events.items()},
                          'received': self.health.received,
                          'dropped': dict(self.health.dropped)})


def stream_and_recorder(resolved: bool = False) -> tuple[JointStream, Recorder,
                                                           list]:
    health = JointStateHealth()
    recorder = Recorder(health)
    resolved_out: list = []
    stream = JointStream(SAMPLE, report=health, clock=lambda: (777, 0),
                         publish_interval_ns=50 * MS,
                         resolved=ResolvedState(SAMPLE) if resolved else None,
                         on_resolved=resolved_out.append, on_publication=recorder)
    return stream, recorder, resolved_out


def held_then_due(stream: JointStream, held: tuple[float, ...], due: tuple[float, ...],
                  names: tuple[str, ...] = ARM) -> object:
    """The due state's publication after these: a first state (published), one 10 ms later
    (not due, computed: the stream learns when its joints are due), one at 20 ms (`held`: not
    due, held back unchecked); the due state comes 50 ms after the first."""
    assert stream.joint_state(ARM, GOOD, (1, 0)) is not None
    assert stream.joint_state(ARM, GOOD, (1, 10 * MS)) is None
    assert stream.joint_state(ARM, held, (1, 20 * MS)) is None
    assert stream._held, 'the state at 20 ms is held back'
    return stream.joint_state(names, due, (1, 50 * MS))


@pytest.mark.parametrize('held, joint, kind', [
    ((0.1, 0.2, 9.0), 'elbow_joint', CLAMPED),  # beyond 2.3
    ((0.1, math.nan, 0.3), 'shoulder_pan_joint', NON_FINITE),
])
def test_a_held_states_report_is_made_after_the_due_state_is_published(held, joint, kind):
    stream, recorder, _ = stream_and_recorder()
    publication = held_then_due(stream, held, GOOD)
    assert publication is not None
    [_, at_publication] = recorder.seen
    assert at_publication['stamp'] == 1 * S + 50 * MS
    # Out before the held state was checked: nothing of it reported yet.
    assert kind not in at_publication['events']
    # Once the call returns, reported as if it had been checked on arrival.
    assert joint in stream.report.events[kind]
    assert (joint in stream.report.clamped) == (kind == CLAMPED)


@pytest.mark.parametrize('due, joint, kind, published', [
    ((0.1, 0.2, -9.0), 'elbow_joint', CLAMPED, {'torso_lift_joint', 'shoulder_pan_joint',
                                                'elbow_joint'}),
    ((0.1, 0.2, math.inf), 'elbow_joint', NON_FINITE, {'torso_lift_joint',
                                                       'shoulder_pan_joint'}),
])
def test_a_due_states_own_report_is_made_after_it_is_published(due, joint, kind, published):
    stream, recorder, _ = stream_and_recorder()
    publication = held_then_due(stream, GOOD, due)
    [_, at_publication] = recorder.seen
    assert {stream.joints[i] for i in publication.index} == published
    assert kind not in at_publication['events']
    assert joint in stream.report.events[kind]


def test_an_unknown_joint_is_reported_after_the_publication_it_comes_with():
    stream, recorder, _ = stream_and_recorder()
    # A state that names an unknown joint is never held: it is computed at once.
    publication = held_then_due(stream, GOOD, (*GOOD, 1.0), names=(*ARM, 'ghost_joint'))
    [_, at_publication] = recorder.seen
    assert {stream.joints[i] for i in publication.index} == set(ARM)
    assert UNKNOWN not in at_publication['events']
    assert stream.report.events[UNKNOWN] == {'ghost_joint': None}
    assert 'ghost_joint' in stream.report.unknown


def test_a_state_with_an_unknown_joint_between_publications_is_reported_at_once():
    stream, recorder, _ = stream_and_recorder()
    assert stream.joint_state(ARM, GOOD, (1, 0)) is not None
    # Not due, but not held either: it names a joint the robot does not have.
    assert stream.joint_state((*ARM, 'ghost_joint'), (*GOOD, 1.0), (1, 10 * MS)) is None
    assert stream.report.events[UNKNOWN] == {'ghost_joint': None}
    assert len(recorder.seen) == 1


def test_the_receipt_and_the_counts_are_kept_for_the_due_state_too():
    stream, recorder, _ = stream_and_recorder()
    held_then_due(stream, GOOD, GOOD)
    # Counted after its publication: three states were received when it went out.
    assert recorder.seen[1]['received'] == 3
    assert stream.report.received == 4
    assert stream.report.dropped == {'rate limit (publish_frequency)': 2}


def test_the_resolved_state_follows_the_publication_with_the_held_values():
    stream, recorder, resolved = stream_and_recorder(resolved=True)
    assert stream.joint_state(ARM, GOOD, (1, 0)) is not None
    assert stream.joint_state(ARM, GOOD, (1, 10 * MS)) is None
    assert stream.joint_state(ARM, (0.15, 0.25, 0.35), (1, 20 * MS)) is None
    assert stream._held
    # A second source, due at once (its joints were never published), when the resolved state
    # is due too: its state goes out first, then the held state of the first source is kept,
    # then the resolved state, with both.
    emitted = len(resolved)
    gripper = stream.joint_state(('left_finger_joint',), (0.02,), (1, 50 * MS))
    assert gripper is not None and len(recorder.seen) == 2
    assert len(resolved) == emitted + 1
    names = SAMPLE.scalar_joints
    last = dict(zip(names, resolved[-1].positions.tolist()))
    assert last['torso_lift_joint'] == 0.15 and last['elbow_joint'] == 0.35
    assert last['left_finger_joint'] == 0.02
