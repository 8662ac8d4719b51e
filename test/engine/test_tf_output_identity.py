"""/tf in the default configuration, message for message and bit for bit, against a recording.

Most bringups run the default publish_frequency with joint states arriving faster, so most
messages are received and not published. How the node decides that (before or after computing
the kinematics) must not change a byte of what it publishes, nor what it reports. Each scenario
below is a fixed stream of serialized JointStates: several rates, several sources with their own
rates and offset clocks, stamps that jump back, zero stamps, NaN, clamped and unknown values,
on three robots. It goes through the node's own objects (JointStateReader, JointStream, the
serializing ActiveModel, JointStateHealth) in the node's order, with fake clocks, and every /tf
message and the health's counters are compared with the recording in
fixtures/tf_output_default_config.json, made by the code before the node decided before
computing and re-recorded twice since: when the transforms' matrix product left the BLAS for
einsum (the same decisions and counts; values changed in the last bit), and when quaternions
took KDL's sign. That time the recording was made by the code before the change, with each
rotation given the sign of reference_math.kdl_quaternion (KDL's rule, written independently),
so that it holds the package's sign rule to the reference's on every message. Re-record, only
for an intended change of output, with:

    python test/engine/test_tf_output_identity.py --record
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import hashlib
import json
import math
from pathlib import Path
import random
import sys

import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.description import DescriptionText
from urdf_state_publisher.engine.health import JointStateHealth
from urdf_state_publisher.engine.parameters import NodeConfig
from urdf_state_publisher.engine.state_engine import ActiveModel
from urdf_state_publisher.engine.stream import JointStream
from urdf_state_publisher.engine.timer_output import TimerOutput
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.wire.joint_state import JointStateReader

HERE = Path(__file__).resolve().parents[1]
RECORDING = HERE / 'fixtures' / 'tf_output_default_config.json'
ROBOTS = {
    'sample_arm': HERE.parent / 'urdf' / 'sample_arm.urdf',
    'mixed_joints': HERE / 'fixtures' / 'mixed_joints.urdf',
    'jvrc1': None,  # from jvrc_description, a real humanoid
}
START_NS = 1_000 * 10**9
DEFAULTS = NodeConfig.from_values({})


def robot_path(name: str) -> Path:
    if ROBOTS[name] is not None:
        return ROBOTS[name]
    import jvrc_description

    return Path(jvrc_description.__file__).parent / 'urdf' / 'jvrc1.urdf'


class Message:
    """One JointState of a stream: its receipt time, its stamp, its names and positions."""

    def __init__(self, received_ns: int, stamp_ns: int, names: list[str],
                 positions: list[float]):
        self.received_ns = received_ns
        self.stamp_ns = stamp_ns
        self.names = names
        self.positions = positions

    def serialized(self) -> bytes:
        state = JointState()
        state.header.stamp.sec, state.header.stamp.nanosec = divmod(self.stamp_ns, 10**9)
        state.name = self.names
        state.position = self.positions
        # As joint_state_broadcaster sends: velocity and effort filled, NaN at times.
        state.velocity = [float('nan') if k % 5 == 4 else 0.1 * k for k in range(len(self.names))]
        state.effort = [0.5] * len(self.names)
        return serialize_message(state)


def within_limits(model: RobotModel, names: list[str], rng: random.Random) -> list[float]:
    values = []
    for name in names:
        lower, upper = model.limits(name) if model.has_joint(name) else (-1.0, 1.0)
        values.append(rng.uniform(max(lower, -3.0), min(upper, 3.0)))
    return values


def source(model: RobotModel, names: list[str], rate_hz: float, seconds: float,
           rng: random.Random, *, start_s: float = 0.0, clock_offset_ns: int = 0,
           jitter_ns: int = 0) -> list[Message]:
    """Messages naming `names` at `rate_hz`, stamped by a clock `clock_offset_ns` off."""
    period = round(1e9 / rate_hz)
    messages = []
    for k in range(int(seconds * rate_hz)):
        received = START_NS + round(start_s * 1e9) + k * period + rng.randint(0, jitter_ns)
        messages.append(Message(received, received + clock_offset_ns, list(names),
                                within_limits(model, names, rng)))
    return messages


def merged(*sources: list[Message]) -> list[Message]:
    return sorted((m for s in sources for m in s), key=lambda m: m.received_ns)


def scalar_independent(model: RobotModel) -> list[str]:
    return [n for n in model.independent_joints if n in model.scalar_joints]


# Scenarios: each builds its stream from a model and a seeded generator -----------------------

def one_source(rate_hz: float, jitter_ns: int = 0) -> Callable:
    def build(model: RobotModel, rng: random.Random) -> list[Message]:
        return source(model, scalar_independent(model), rate_hz, 1.5, rng, jitter_ns=jitter_ns)
    return build


def two_sources(model: RobotModel, rng: random.Random) -> list[Message]:
    """An arm at 500 Hz and a gripper (the last joints) at 100 Hz on a clock 3 ms behind."""
    names = scalar_independent(model)
    arm, gripper = names[:-2], names[-2:]
    return merged(source(model, arm, 500, 1.5, rng, jitter_ns=200_000),
                  source(model, gripper, 100, 1.5, rng, start_s=0.0013,
                         clock_offset_ns=-3_000_000))


def overlapping_sources(model: RobotModel, rng: random.Random) -> list[Message]:
    """Two sources sharing joints, one naming a mimic follower itself, at 250 and 333 Hz,
    on clocks 2 ms apart."""
    names = scalar_independent(model)
    first = names[: len(names) // 2 + 1]
    second = names[len(names) // 2:] + list(model.mimic_joints[:1])
    return merged(source(model, first, 250, 1.5, rng),
                  source(model, second, 333, 1.5, rng, start_s=0.0007,
                         clock_offset_ns=-2_000_000))


def stamps_back(model: RobotModel, rng: random.Random) -> list[Message]:
    """500 Hz; a bag loop 0.5 s back at 0.8 s, and single late messages now and then."""
    messages = source(model, scalar_independent(model), 500, 2.0, rng)
    for k, message in enumerate(messages):
        if k >= 400:
            message.stamp_ns -= 500_000_000
        if k % 97 == 50:
            message.stamp_ns -= 120_000_000
    return messages


def zero_stamps(model: RobotModel, rng: random.Random) -> list[Message]:
    """500 Hz with every 7th message unstamped, and a run of unstamped ones."""
    messages = source(model, scalar_independent(model), 500, 1.5, rng)
    for k, message in enumerate(messages):
        if k % 7 == 3 or 300 <= k < 340:
            message.stamp_ns = 0
    return messages


def bad_values(model: RobotModel, rng: random.Random) -> list[Message]:
    """1 kHz with NaN, infinities, out-of-limit values, unknown and repeated names, and
    messages with fewer positions than names, in published and in decimated messages."""
    names = scalar_independent(model)
    messages = source(model, names, 1000, 1.5, rng)
    for k, message in enumerate(messages):
        kind = k % 23
        if kind == 1:
            message.positions[k % len(names)] = float('nan')
        elif kind == 5:
            message.positions[-1] = -math.inf
        elif kind in (8, 9, 10):
            message.positions[k % len(names)] = 100.0 * (1 if k % 2 else -1)
        elif kind == 13:
            message.names = message.names + ['not_a_joint', 'Shoulder_Pan']
            message.positions = message.positions + [0.5, 0.25]
        elif kind == 16:
            message.names = message.names + message.names[:1]
            message.positions = message.positions + [0.125]
        elif kind == 19:
            message.positions = message.positions[:-1]
        elif kind == 21:
            message.positions[0] = 1e308
    return messages


def pose_joints_named(model: RobotModel, rng: random.Random) -> list[Message]:
    """500 Hz naming every movable joint, floating and planar ones (which take no value)."""
    names = list(model.movable_joints)
    return source(model, names, 500, 1.0, rng)


SCENARIOS: dict[str, Callable] = {
    'one source 100 Hz': one_source(100),
    'one source 500 Hz': one_source(500),
    'one source 1 kHz, jittered': one_source(1000, jitter_ns=400_000),
    'two sources, own rates and clocks': two_sources,
    'overlapping sources with a named follower': overlapping_sources,
    'stamps jump back': stamps_back,
    'zero stamps': zero_stamps,
    'NaN, clamped, unknown, repeated, short': bad_values,
    'pose joints named': pose_joints_named,
}


def cases() -> Iterator[tuple[str, str]]:
    for robot in ROBOTS:
        for scenario in SCENARIOS:
            yield robot, scenario


def fingerprint(data: bytes) -> str:
    """A /tf message as its transform count and a digest of every field, doubles bit for bit.

    Not of the bytes themselves: a serializer may leave alignment padding uninitialised.
    """
    fields = []
    for t in deserialize_message(data, TFMessage).transforms:
        v, q = t.transform.translation, t.transform.rotation
        fields += [t.header.frame_id, t.child_frame_id, str(t.header.stamp.sec),
                   str(t.header.stamp.nanosec), *(x.hex() for x in (v.x, v.y, v.z, q.x, q.y,
                                                                   q.z, q.w))]
    digest = hashlib.sha256('\0'.join(fields).encode()).hexdigest()[:20]
    return f'{len(fields) // 11} {digest}'


def replay(robot: str, scenario: str) -> dict:
    """What the node publishes and reports for a scenario's stream, as the recording holds it."""
    text = robot_path(robot).read_text()
    model = RobotModel.from_urdf(text)
    messages = SCENARIOS[scenario](model, random.Random(f'{robot}/{scenario}'))
    now = [START_NS]
    health = JointStateHealth(clock=lambda: now[0] / 1e9)
    stream = JointStream(model, report=health, clock=lambda: divmod(now[0], 10**9),
                         publish_interval_ns=DEFAULTS.publish_interval_ns,
                         ignore_timestamp=DEFAULTS.ignore_timestamp)
    # The default configuration: nothing on the timer.
    active = ActiveModel(DescriptionText(text), stream, TimerOutput(
        model, health, resolved=None, defaults=False, reads_joint_states=True, held=frozenset()))
    reader = JointStateReader()
    published = []
    for message in messages:
        now[0] = message.received_ns
        stamp, names, positions = reader.read(message.serialized())
        publication = stream.joint_state(names, positions, stamp)
        if publication is not None:
            published.append(fingerprint(active.serialize(publication)))
    stream.check_held()  # as the node does before each assessment of the health
    return {
        'received': len(messages),
        'published': published,
        'counts': {'received': health.received, 'published': health.published,
                   'dropped': dict(sorted(health.dropped.items()))},
        'clamped': sorted(health.clamped),
        'unknown': sorted(health.unknown),
        'events': {kind: list(names) for kind, names in sorted(health.events.items())},
    }


@pytest.fixture(scope='module')
def recording() -> dict:
    return json.loads(RECORDING.read_text())


@pytest.mark.parametrize('robot, scenario', list(cases()))
def test_tf_output_and_reports_are_those_recorded(recording, robot, scenario):
    expected = recording[f'{robot}: {scenario}']
    got = replay(robot, scenario)
    assert got['received'] == expected['received']
    # Message for message: the first difference names the message.
    for k, (ours, theirs) in enumerate(zip(got['published'], expected['published'])):
        assert ours == theirs, f'/tf message {k} of {len(expected["published"])} differs'
    assert len(got['published']) == len(expected['published'])
    assert got == expected


def test_the_recording_covers_what_the_scenarios_mean_to(recording):
    """Each scenario exercises what it is named for: decimation, reports, every robot."""
    for robot in ROBOTS:
        for scenario in SCENARIOS:
            case = recording[f'{robot}: {scenario}']
            # The default 20 Hz publishes a fraction of the input.
            assert 0 < len(case['published']) < case['received'] / 2, (robot, scenario)
        bad = recording[f'{robot}: NaN, clamped, unknown, repeated, short']
        assert {'NaN or infinite position', 'names and positions differ in length',
                'duplicated joint names', 'rate limit (publish_frequency)'} <= set(
                    bad['counts']['dropped'])
        assert bad['clamped'] and bad['unknown']
        assert 'time moved backwards' in recording[f'{robot}: stamps jump back']['events']
        assert 'zero stamp' in recording[f'{robot}: zero stamps']['events']
    assert 'value for a fixed, floating or planar joint' in \
        recording['mixed_joints: pose joints named']['counts']['dropped']


def record() -> None:
    RECORDING.write_text(json.dumps({f'{robot}: {scenario}': replay(robot, scenario)
                                     for robot, scenario in cases()}, indent=0) + '\n')
    print(f'recorded {RECORDING}')


if __name__ == '__main__':
    if sys.argv[1:] != ['--record']:
        sys.exit(__doc__)
    record()
