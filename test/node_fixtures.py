"""Helpers for the node integration tests: module-scoped nodes, links to them, expected poses.

The node runs in its own process (conftest.NodeProcess); a `Link` is the test side of one
node: the probe's /tf recorder, joint-state publishers already matched with the node, a
parameters client and the node's /diagnostics. Expected transforms are computed here with
a few lines of quaternion algebra of their own, independent of the package's geometry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math
from pathlib import Path
import signal
import time

from conftest import NodeProcess, Probe, wait_until
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Transform
import pytest
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from rclpy.qos import (
    DurabilityPolicy,
    qos_profile_sensor_data,
    QoSProfile,
    ReliabilityPolicy,
)
from sensor_msgs.msg import JointState, MultiDOFJointState
from tf2_msgs.msg import TFMessage

FIXTURES = Path(__file__).resolve().parent / 'fixtures'
MIXED_URDF = FIXTURES / 'mixed_joints.urdf'

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE)
BEST_EFFORT = qos_profile_sensor_data
RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)

# Sample robot: the child link of every movable joint, and the /tf_static set.
SAMPLE_CHILD = {
    'torso_lift_joint': 'torso_link',
    'shoulder_pan_joint': 'shoulder_pan_link',
    'shoulder_lift_joint': 'upper_arm_link',
    'elbow_joint': 'forearm_link',
    'wrist_roll_joint': 'wrist_roll_link',
    'left_finger_joint': 'left_finger_link',
    'right_finger_joint': 'right_finger_link',
    'right_finger_tip_joint': 'right_finger_tip_link',
}
SAMPLE_STATIC = {  # child: parent
    'base_link': 'base_footprint',
    'laser_link': 'base_link',
    'tool0': 'wrist_roll_link',
    'gripper_base_link': 'tool0',
    'camera_link': 'gripper_base_link',
    'wrist_camera': 'camera_link',
    'base_laser': 'laser_link',
}
ARM = ('torso_lift_joint', 'shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
       'wrist_roll_joint')
GRIPPER_CHILDREN = {'left_finger_link', 'right_finger_link', 'right_finger_tip_link'}
# The node's warm-up stamps stay below this second; tests use later ones.
WARM_UP_SEC = 1


# --------------------------------------------------------------------------- math

def q_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def q_axis(axis, angle):
    s = math.sin(angle / 2)
    return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2))


def q_rpy(roll, pitch, yaw):
    """URDF rpy: rotate about fixed X, then Y, then Z."""
    return q_mul(q_axis((0, 0, 1), yaw), q_mul(q_axis((0, 1, 0), pitch), q_axis((1, 0, 0), roll)))


def q_rotate(q, v):
    x, y, z, w = q_mul(q_mul(q, (*v, 0.0)), (-q[0], -q[1], -q[2], q[3]))
    return (x, y, z)


def compose(a, b):
    """Pose a ∘ b, poses as (translation, quaternion)."""
    (ta, qa), (tb, qb) = a, b
    rotated = q_rotate(qa, tb)
    return ((ta[0] + rotated[0], ta[1] + rotated[1], ta[2] + rotated[2]), q_mul(qa, qb))


def same_rotation(a, b, tol=1e-9) -> bool:
    """Whether quaternions a and b are the same rotation (q and -q are)."""
    dot = abs(sum(x * y for x, y in zip(a, b)))
    return abs(dot - 1.0) < tol


def revolute(xyz, rpy, axis, value):
    """Expected (translation, rotation) of a revolute or continuous joint."""
    return tuple(xyz), q_mul(q_rpy(*rpy), q_axis(axis, value))


def prismatic(xyz, rpy, axis, value):
    """Expected (translation, rotation) of a prismatic joint."""
    return compose((tuple(xyz), q_rpy(*rpy)), (tuple(a * value for a in axis), (0, 0, 0, 1)))


def sample_pose(joint: str, value: float):
    """Expected transform of a sample_arm joint at `value` (already within its limits)."""
    table = {
        'torso_lift_joint': (prismatic, (-0.1, 0, 0.15), (0, 0, 0), (0, 0, 1)),
        'shoulder_pan_joint': (revolute, (0, 0, 0.4), (0, 0, 0.3), (0, 0, 1)),
        'shoulder_lift_joint': (revolute, (0.05, 0, 0.1), (0, -0.4, 0), (0, 1, 0)),
        'elbow_joint': (revolute, (0.35, 0, 0), (0, 0.8, 0), (0, 1, 0)),
        'wrist_roll_joint': (revolute, (0.3, 0, 0), (0.2, -0.3, 0.1), (1, 0, 0)),
        'left_finger_joint': (prismatic, (0.03, 0.01, 0), (0, 0, 0), (0, 1, 0)),
        'right_finger_joint': (prismatic, (0.03, -0.01, 0), (0, 0, 0), (0, -1, 0)),
        'right_finger_tip_joint': (revolute, (0.04, 0, 0), (0, 0, 0), (0, 0, 1)),
    }
    kind, xyz, rpy, axis = table[joint]
    return kind(xyz, rpy, axis, value)


def numbers(stamped):
    t, r = stamped.transform.translation, stamped.transform.rotation
    return (t.x, t.y, t.z), (r.x, r.y, r.z, r.w)


def assert_pose(stamped, expected, tol=1e-9):
    translation, rotation = numbers(stamped)
    assert translation == pytest.approx(expected[0], abs=tol), stamped.child_frame_id
    assert same_rotation(rotation, expected[1], tol), (stamped.child_frame_id, rotation,
                                                       expected[1])


def all_finite(messages) -> bool:
    return all(all(math.isfinite(v) for part in numbers(t) for v in part)
               for m in messages for t in m.transforms)


# --------------------------------------------------------------------------- messages

def ns(sec: int, nanosec: int = 0) -> int:
    return sec * 1_000_000_000 + nanosec


def joint_state(stamp_ns: int, names: Sequence[str], positions: Sequence[float]) -> JointState:
    message = JointState()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    message.name = list(names)
    message.position = [float(p) for p in positions]
    return message


def multi_dof_state(stamp_ns: int, entries: dict) -> MultiDOFJointState:
    """entries: joint name -> (translation xyz, quaternion xyzw)."""
    message = MultiDOFJointState()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    for name, (translation, rotation) in entries.items():
        transform = Transform()
        t, r = transform.translation, transform.rotation
        t.x, t.y, t.z = (float(v) for v in translation)
        r.x, r.y, r.z, r.w = (float(v) for v in rotation)
        message.joint_names.append(name)
        message.transforms.append(transform)
    return message


def stamp_of(stamped) -> int:
    return ns(stamped.header.stamp.sec, stamped.header.stamp.nanosec)


def transforms_at(messages, stamp_ns: int, prefix: str = '') -> list:
    """The TFMessages whose transforms are all stamped `stamp_ns` and named with `prefix`."""
    return [m for m in messages if m.transforms and all(
        stamp_of(t) == stamp_ns and t.child_frame_id.startswith(prefix) for t in m.transforms)]


def by_child(messages) -> dict:
    """{child_frame_id: TransformStamped} over all messages, latest wins."""
    return {t.child_frame_id: t for m in messages for t in m.transforms}


def children(message) -> set:
    return {t.child_frame_id for t in message.transforms}


# --------------------------------------------------------------------------- the node

def start_module_node(tmp_path_factory, parameters: dict, name: str,
                      ros_args: tuple[str, ...] = ()) -> NodeProcess:
    return NodeProcess(tmp_path_factory.mktemp(name), parameters, ros_args, node_name=name)


def stop_node(process: NodeProcess) -> None:
    if process.process.poll() is None:
        process.stop(signal.SIGINT)


def wait_for_log(process: NodeProcess, probe: Probe, text: str, timeout: float = 5.0) -> str:
    """Spin until the node's output contains `text`; return the output."""
    wait_until(lambda: text in process.output(), timeout, lambda: probe.spin(0.05),
               f'{text!r} in the node log')
    return process.output()


class Link:
    """The test side of one node: /tf recorder, joint-state publishers, parameters, diagnostics.

    Created once per module; `begin()` at the start of a test forgets what was received.
    """

    def __init__(self, probe: Probe, process: NodeProcess, *, name: str, namespace: str = '',
                 prefix: str = '', tf: list | None = None, diagnostics: list | None = None,
                 warm_up_joint: str = 'torso_lift_joint'):
        self.probe = probe
        self.warm_up_joint = warm_up_joint
        self.process = process
        self.name = name
        self.prefix = prefix
        self.topic_ns = namespace.rstrip('/')
        # Links of one module may share the recorders (one subscription each, not one per node).
        self.tf: list[TFMessage] = (probe.record(TFMessage, '/tf', TF_QOS) if tf is None
                                    else tf)
        self.diagnostics: list[DiagnosticArray] = (
            probe.record(DiagnosticArray, '/diagnostics', RELIABLE) if diagnostics is None
            else diagnostics)
        self._publishers: dict = {}
        self._matched: set = set()
        self._parameters_client = None
        self._warm_up_ns = ns(WARM_UP_SEC)

    # Publishing ---------------------------------------------------------------------------

    def publisher(self, qos=BEST_EFFORT, *, multi_dof: bool = False, key: str = ''):
        """A joint-state publisher (one per qos and key), matched with the node on creation."""
        cache_key = (multi_dof, qos.reliability, key)
        publisher = self._publishers.get(cache_key)
        if publisher is None:
            message_type, topic = ((MultiDOFJointState, 'multi_dof_joint_states') if multi_dof
                                   else (JointState, 'joint_states'))
            publisher = self.probe.node.create_publisher(
                message_type, f'{self.topic_ns}/{topic}', qos)
            self._publishers[cache_key] = publisher
        return publisher

    def handshake(self, publisher, message_for: Callable[[int], object],
                  timeout: float = 15.0) -> None:
        """Publish warm-up messages (stamped below WARM_UP_SEC + 1) until one comes out on /tf.

        Each warm-up has its own stamp, so the node publishes each one it receives; once one
        is seen, the node's subscription and the probe's /tf subscription are both matched
        and nothing from the warm-up is still in flight.
        """
        wait_until(lambda: publisher.get_subscription_count() > 0, timeout,
                   lambda: self.probe.spin(0.05), f'{self.name} to subscribe')
        deadline = time.monotonic() + timeout
        while True:
            self._warm_up_ns += 60_000_000
            stamp = self._warm_up_ns
            publisher.publish(message_for(stamp))
            end = min(deadline, time.monotonic() + 0.3)
            while time.monotonic() < end:
                self.probe.spin(0.02)
                if transforms_at(self.tf, stamp, self.prefix):
                    self.tf.clear()
                    return
            if time.monotonic() > deadline:
                pytest.fail(f'no warm-up message of {self.name} came back on /tf')

    def joint_states(self, qos=BEST_EFFORT, key: str = ''):
        """A JointState publisher matched with the node (warm-up on `warm_up_joint`)."""
        publisher = self.publisher(qos, key=key)
        if publisher not in self._matched:
            self.handshake(publisher,
                           lambda stamp: joint_state(stamp, [self.warm_up_joint], [0.0]))
            self._matched.add(publisher)
        return publisher

    def multi_dof_states(self, warm_up_joint: str, qos=BEST_EFFORT):
        """A MultiDOFJointState publisher matched with the node (warm-up on `warm_up_joint`)."""
        publisher = self.publisher(qos, multi_dof=True)
        if publisher not in self._matched:
            identity = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
            self.handshake(publisher,
                           lambda stamp: multi_dof_state(stamp, {warm_up_joint: identity}))
            self._matched.add(publisher)
        return publisher

    def begin(self) -> None:
        """Start a test: the node is alive and nothing received earlier is kept."""
        assert self.process.process.poll() is None, self.process.output()[-2000:]
        self.probe.spin(0.01)
        self.tf.clear()
        self.diagnostics.clear()

    def expect(self, stamp_ns: int, timeout: float = 5.0, count: int = 1) -> list[TFMessage]:
        """Wait for `count` /tf messages of this node stamped `stamp_ns`; return them."""
        self.probe.wait_until(lambda: len(transforms_at(self.tf, stamp_ns, self.prefix)) >= count,
                              timeout, f'{count} /tf message(s) of {self.name} stamped {stamp_ns}')
        return transforms_at(self.tf, stamp_ns, self.prefix)

    def publish_and_expect(self, publisher, message, timeout: float = 5.0) -> TFMessage:
        publisher.publish(message)
        return self.expect(ns(message.header.stamp.sec, message.header.stamp.nanosec),
                           timeout)[0]

    def stamps(self) -> list[int]:
        """The stamps of this node's /tf messages received since `begin()`, in order."""
        return [stamp_of(m.transforms[0]) for m in self.tf
                if m.transforms and m.transforms[0].child_frame_id.startswith(self.prefix)]

    # Parameters ---------------------------------------------------------------------------

    def set_parameters(self, timeout: float = 10.0, **values):
        """Set parameters through /<node>/set_parameters; the list of SetParametersResult."""
        if self._parameters_client is None:
            self._parameters_client = self.probe.node.create_client(
                SetParameters, f'{self.topic_ns}/{self.name}/set_parameters')
        client = self._parameters_client
        wait_until(client.service_is_ready, timeout, lambda: self.probe.spin(0.05),
                   f'the set_parameters service of {self.name}')
        request = SetParameters.Request()
        request.parameters = [Parameter(k, value=v).to_parameter_msg()
                              for k, v in values.items()]
        future = client.call_async(request)
        wait_until(future.done, timeout, lambda: self.probe.spin(0.05),
                   f'the set_parameters response of {self.name}')
        return future.result().results

    # Diagnostics --------------------------------------------------------------------------

    def diagnostic_statuses(self) -> list:
        """Every status of this node received since `begin()`, oldest first."""
        wanted = f'{self.name}: joint_states'
        return [s for array in self.diagnostics for s in array.status if s.name == wanted]

    def wait_for_diagnostics(self, predicate: Callable[[dict], bool], timeout: float = 5.0,
                             what: str = 'diagnostics') -> dict:
        """The KeyValues of the first status (received from now on) for which predicate holds.

        Besides the KeyValues, the dict has '_level', '_message' and '_stamp' (the array's
        header stamp in seconds, from the node's clock).
        """
        self.diagnostics.clear()
        wanted = f'{self.name}: joint_states'
        found: list[dict] = []

        def check() -> bool:
            for array in self.diagnostics:
                for status in array.status:
                    if status.name != wanted:
                        continue
                    values = {kv.key: kv.value for kv in status.values}
                    values['_level'] = status.level
                    values['_message'] = status.message
                    values['_stamp'] = stamp_of(array) / 1e9
                    if predicate(values):
                        found.append(values)
                        return True
            return False

        self.probe.wait_until(check, timeout, what)
        return found[0]


def late_joiner(probe: Probe, message_type, topic: str, *, count: int = 1,
                timeout: float = 10.0, settle: float = 0.1) -> list:
    """What a new transient-local subscriber to `topic` receives: at least `count` messages.

    The subscription is destroyed afterwards, so that it cannot see later publications.
    """
    received: list = []
    subscription = probe.node.create_subscription(message_type, topic, received.append, LATCHED)
    try:
        probe.wait_until(lambda: len(received) >= count, timeout, f'a message on {topic}')
        probe.spin_for(settle)
    finally:
        probe.node.destroy_subscription(subscription)
    return received
