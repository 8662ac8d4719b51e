"""The node integration tests' helpers: the node process, the probe, links to nodes, poses.

The node runs in its own process (`NodeProcess`, `python -m urdf_state_publisher`); a `Probe`
is a test-side rclpy node in its own context; a `Link` is the test side of one node: the
probe's /tf (and /tf_static) recorders, joint-state publishers, parameter clients and the
node's /diagnostics. `node_link_fixture` makes a pytest fixture of a node and its Link shared
by the tests of a module (or class). Expected transforms are computed here with a few lines of
quaternion algebra of their own, independent of the package's geometry.

QoS: the node's own profiles come from `urdf_state_publisher.wire.qos`; BEST_EFFORT and RELIABLE
are the two kinds of joint-state sources (and recorders) the tests play.

Imports rclpy: conftest.py (which must stay importable without ROS) imports this module only
inside its fixtures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
import copy
import math
from pathlib import Path
import signal
import subprocess
import sys
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Transform
import pytest
from rcl_interfaces.msg import Parameter as ParameterMessage
from rcl_interfaces.srv import GetParameters, SetParameters
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState, MultiDOFJointState
from tf2_msgs.msg import TFMessage
import yaml

from urdf_state_publisher.ros.qos import LATCHED_QOS, TF_QOS

FIXTURES = Path(__file__).resolve().parent / 'fixtures'
MIXED_URDF = FIXTURES / 'mixed_joints.urdf'

BEST_EFFORT = qos_profile_sensor_data  # what the node subscribes to joint states with
RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


def deeper(profile: QoSProfile, depth: int) -> QoSProfile:
    """`profile` with a longer history: a recorder that must not lose a burst."""
    result = copy.copy(profile)
    result.depth = depth
    return result


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
BILLION = 1_000_000_000


# --------------------------------------------------------------------------- processes, probe

def wait_until(predicate: Callable[[], bool], timeout: float, spin: Callable[[], None],
               what: str) -> None:
    """Spin until `predicate()` holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f'timed out after {timeout} s waiting for {what}')
        spin()


class LoggedProcess:
    """A process of the package, its output (stdout and stderr) in a file."""

    def __init__(self, command: list[str], log_file: Path):
        self.log_file = log_file
        self._log = open(self.log_file, 'w')
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                        cwd=log_file.parent)

    def running(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        """Everything the process printed so far (also after it stopped)."""
        if not self._log.closed:
            self._log.flush()
        return self.log_file.read_text()

    def stop(self, sig: int = signal.SIGINT, timeout: float = 10.0) -> int:
        """Send `sig` (unless it has exited), wait for exit, return the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        finally:
            self._log.close()


class NodeProcess(LoggedProcess):
    """`python -m urdf_state_publisher` in its own process, with a parameters file."""

    def __init__(self, tmp_path: Path, parameters: dict, ros_args: tuple[str, ...] = (),
                 node_name: str = 'urdf_state_publisher'):
        self.params_file = tmp_path / f'{node_name}_params.yaml'
        self.params_file.write_text(yaml.safe_dump({'/**': {'ros__parameters': parameters}}))
        super().__init__(
            [sys.executable, '-m', 'urdf_state_publisher', '--ros-args',
             '--params-file', str(self.params_file), '-r', f'__node:={node_name}', *ros_args],
            tmp_path / f'{node_name}.log')


# A service call is sent again after this long without a response.
SERVICE_ATTEMPT_S = 5.0


def call_service(client, request, spin: Callable[[], None], timeout: float, what: str):
    """The response to `request`, sending it again while none comes; fail after `timeout` s.

    A ready service can still lose a call: the server may not yet know the client's response
    reader when it answers (seen under load, on Fast DDS). Parameter requests are idempotent.
    """
    deadline = time.monotonic() + timeout
    while True:
        future = client.call_async(request)
        attempt_end = min(deadline, time.monotonic() + SERVICE_ATTEMPT_S)
        while not future.done() and time.monotonic() < attempt_end:
            spin()
        if future.done():
            return future.result()
        future.cancel()
        if time.monotonic() >= deadline:
            pytest.fail(f'timed out after {timeout} s waiting for {what}')


def stop_all(processes: Iterable[NodeProcess]) -> None:
    """SIGINT to every running process at once, then wait for each."""
    processes = list(processes)
    for process in processes:
        if process.running():
            process.process.send_signal(signal.SIGINT)
    for process in processes:
        process.stop()


class Probe:
    """A test-side rclpy node in its own context: publishers, recorders and spinning."""

    def __init__(self, name: str = 'probe'):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._recorders: dict[str, list] = {}

    def spin(self, seconds: float = 0.05) -> None:
        """Process whatever arrives within `seconds`."""
        self.executor.spin_once(timeout_sec=seconds)

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 10.0,
                   what: str = 'a condition') -> None:
        """Spin until `predicate()` holds (fails the test after `timeout`)."""
        wait_until(predicate, timeout, self.spin, what)

    def spin_for(self, seconds: float) -> None:
        """Spin for `seconds`, processing everything that arrives."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.spin(0.02)

    def record(self, message_type, topic: str, qos) -> list:
        """A list that collects every message received on `topic`."""
        received: list = []
        self.node.create_subscription(message_type, topic, received.append, qos)
        return received

    def recorder(self, message_type, topic: str, qos) -> list:
        """The one recorder of `topic` that every caller shares (made by the first call, with
        its `qos`).

        With a recorder per link, each gets every message, and a spin takes one message at a
        time: a test's last message may reach another link's recorder only after the next
        test's `begin()`. One shared recorder has no such stragglers.
        """
        received = self._recorders.get(topic)
        if received is None:
            received = self._recorders[topic] = self.record(message_type, topic, qos)
        return received

    def close(self) -> None:
        """Destroy the node and shut the context down."""
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def wait_for_log(process: NodeProcess, probe: Probe, text: str, timeout: float = 5.0) -> str:
    """Spin until the node's output contains `text`; return the output."""
    try:
        wait_until(lambda: text in process.output(), timeout, lambda: probe.spin(0.05),
                   f'{text!r} in the node log')
    except pytest.fail.Exception:
        pytest.fail(f'{text!r} not in the node log after {timeout} s; the log so far:\n'
                    f'{process.output()[-2000:]}')
    return process.output()


def late_joiner(probe: Probe, message_type, topic: str, *, count: int = 1,
                timeout: float = 10.0) -> list:
    """What a new transient-local subscriber to `topic` receives: at least `count` messages.

    The subscription is destroyed afterwards, so that it cannot see later publications.
    """
    received: list = []
    subscription = probe.node.create_subscription(message_type, topic, received.append,
                                                  LATCHED_QOS)
    try:
        probe.wait_until(lambda: len(received) >= count, timeout, f'a message on {topic}')
    finally:
        probe.node.destroy_subscription(subscription)
    return received


# --------------------------------------------------------------------------- pose math
# Poses are (translation xyz, quaternion xyzw).

X_AXIS, Y_AXIS, Z_AXIS = (1, 0, 0), (0, 1, 0), (0, 0, 1)
IDENTITY = (0, 0, 0, 1)


def q_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def q_axis(axis, angle):
    """The rotation by `angle` about the unit vector `axis`."""
    s = math.sin(angle / 2)
    return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2))


def q_rpy(roll, pitch, yaw):
    """URDF rpy: rotate about fixed X, then Y, then Z."""
    return q_mul(q_axis(Z_AXIS, yaw), q_mul(q_axis(Y_AXIS, pitch), q_axis(X_AXIS, roll)))


def q_rotate(q, v):
    x, y, z, w = q_mul(q_mul(q, (*v, 0.0)), (-q[0], -q[1], -q[2], q[3]))
    return (x, y, z)


def compose(a, b):
    """Pose a ∘ b."""
    (ta, qa), (tb, qb) = a, b
    rotated = q_rotate(qa, tb)
    return ((ta[0] + rotated[0], ta[1] + rotated[1], ta[2] + rotated[2]), q_mul(qa, qb))


def same_rotation(a, b, tol=1e-9) -> bool:
    """Whether quaternions a and b are the same rotation (q and -q are)."""
    dot = abs(sum(x * y for x, y in zip(a, b)))
    return abs(dot - 1.0) < tol


def revolute(xyz, rpy, axis, value):
    """Expected pose of a revolute or continuous joint."""
    return tuple(xyz), q_mul(q_rpy(*rpy), q_axis(axis, value))


def prismatic(xyz, rpy, axis, value):
    """Expected pose of a prismatic joint."""
    return compose((tuple(xyz), q_rpy(*rpy)), (tuple(a * value for a in axis), IDENTITY))


def sample_pose(joint: str, value: float):
    """Expected transform of a sample_arm joint at `value` (already within its limits)."""
    table = {
        'torso_lift_joint': (prismatic, (-0.1, 0, 0.15), (0, 0, 0), Z_AXIS),
        'shoulder_pan_joint': (revolute, (0, 0, 0.4), (0, 0, 0.3), Z_AXIS),
        'shoulder_lift_joint': (revolute, (0.05, 0, 0.1), (0, -0.4, 0), Y_AXIS),
        'elbow_joint': (revolute, (0.35, 0, 0), (0, 0.8, 0), Y_AXIS),
        'wrist_roll_joint': (revolute, (0.3, 0, 0), (0.2, -0.3, 0.1), X_AXIS),
        'left_finger_joint': (prismatic, (0.03, 0.01, 0), (0, 0, 0), Y_AXIS),
        'right_finger_joint': (prismatic, (0.03, -0.01, 0), (0, 0, 0), (0, -1, 0)),
        'right_finger_tip_joint': (revolute, (0.04, 0, 0), (0, 0, 0), Z_AXIS),
    }
    kind, xyz, rpy, axis = table[joint]
    return kind(xyz, rpy, axis, value)


def numbers(stamped):
    """The pose of a TransformStamped."""
    t, r = stamped.transform.translation, stamped.transform.rotation
    return (t.x, t.y, t.z), (r.x, r.y, r.z, r.w)


def assert_pose(stamped, expected, tol=1e-9):
    """`stamped` has the pose `expected`, within `tol` (translation and rotation)."""
    translation, rotation = numbers(stamped)
    assert translation == pytest.approx(expected[0], abs=tol), stamped.child_frame_id
    assert same_rotation(rotation, expected[1], tol), (stamped.child_frame_id, rotation,
                                                       expected[1])


def all_finite(messages) -> bool:
    return all(all(math.isfinite(v) for part in numbers(t) for v in part)
               for m in messages for t in m.transforms)


# --------------------------------------------------------------------------- messages

def ns(sec: int, nanosec: int = 0) -> int:
    return sec * BILLION + nanosec


def set_stamp(header, stamp_ns: int) -> None:
    header.stamp.sec, header.stamp.nanosec = divmod(stamp_ns, BILLION)


def stamp_of(stamped) -> int:
    """The stamp, in nanoseconds, of anything with a header."""
    return ns(stamped.header.stamp.sec, stamped.header.stamp.nanosec)


def joint_state(stamp_ns: int, names: Mapping[str, float] | Sequence[str],
                positions: Sequence[float] | None = None) -> JointState:
    """A JointState of `names` and `positions`, or of a {name: position} mapping alone."""
    if positions is None:
        names, positions = list(names), list(names.values())
    message = JointState()
    set_stamp(message.header, stamp_ns)
    message.name = list(names)
    message.position = [float(p) for p in positions]
    return message


def transform(xyz, xyzw) -> Transform:
    result = Transform()
    t, r = result.translation, result.rotation
    t.x, t.y, t.z = (float(v) for v in xyz)
    r.x, r.y, r.z, r.w = (float(v) for v in xyzw)
    return result


def multi_dof_state(stamp_ns: int, entries: dict) -> MultiDOFJointState:
    """entries: joint name -> pose (translation xyz, quaternion xyzw)."""
    message = MultiDOFJointState(joint_names=list(entries),
                                 transforms=[transform(*pose) for pose in entries.values()])
    set_stamp(message.header, stamp_ns)
    return message


def transforms_at(messages, stamp_ns: int, prefix: str = '') -> list:
    """The TFMessages whose transforms are all stamped `stamp_ns` and named with `prefix`."""
    return [m for m in messages if m.transforms and all(
        stamp_of(t) == stamp_ns and t.child_frame_id.startswith(prefix) for t in m.transforms)]


def by_child(messages) -> dict:
    """{child_frame_id: TransformStamped} over all messages, latest wins."""
    return {t.child_frame_id: t for m in messages for t in m.transforms}


def children(message) -> set:
    return {t.child_frame_id for t in message.transforms}


# --------------------------------------------------------------------------- links

class Link:
    """The test side of one node: /tf recorder, joint-state publishers, parameters, diagnostics.

    Shared by the tests of a module: `begin()` at the start of a test forgets what was
    received. Links of one module may share the /tf and /diagnostics recorders (one
    subscription each, not one per node); `record_static` also records /tf_static.
    `source_qos` is the joint-state publishers' QoS unless a call names one (for a node whose
    subscriptions were made RELIABLE by qos_overrides, which a BEST_EFFORT one cannot match).
    """

    def __init__(self, probe: Probe, process: NodeProcess, *, name: str, namespace: str = '',
                 prefix: str = '', tf: list | None = None, diagnostics: list | None = None,
                 warm_up_joint: str = 'torso_lift_joint', tf_qos: QoSProfile = TF_QOS,
                 record_static: bool = False, source_qos: QoSProfile = BEST_EFFORT):
        self.probe = probe
        self.source_qos = source_qos
        self.warm_up_joint = warm_up_joint
        self.process = process
        self.name = name
        self.prefix = prefix
        self.topic_ns = namespace.rstrip('/')
        self.tf: list[TFMessage] = probe.record(TFMessage, '/tf', tf_qos) if tf is None else tf
        self.diagnostics: list[DiagnosticArray] = (
            probe.record(DiagnosticArray, '/diagnostics', RELIABLE) if diagnostics is None
            else diagnostics)
        self.static: list[TFMessage] | None = (
            probe.record(TFMessage, '/tf_static', LATCHED_QOS) if record_static else None)
        self._publishers: dict = {}
        self._matched: set = set()
        self._clients: dict = {}
        self._warm_up_ns = ns(WARM_UP_SEC)
        self._log_start = 0

    def log(self) -> str:
        """The node's whole output."""
        return self.process.output()

    def new_log(self) -> str:
        """The node's output since `begin()`."""
        return self.process.output()[self._log_start:]

    # Publishing ---------------------------------------------------------------------------

    def publisher(self, qos=None, *, multi_dof: bool = False, key: str = ''):
        """A joint-state publisher (one per qos and key), not yet known to be matched."""
        qos = self.source_qos if qos is None else qos
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
            end = min(deadline, time.monotonic() + 0.1)  # then the next warm-up
            while time.monotonic() < end:
                self.probe.spin(0.02)
                if transforms_at(self.tf, stamp, self.prefix):
                    self.tf.clear()
                    return
            if time.monotonic() > deadline:
                pytest.fail(f'no warm-up message of {self.name} came back on /tf')

    def joint_states(self, qos=None, key: str = ''):
        """A JointState publisher matched with the node (warm-up on `warm_up_joint`)."""
        publisher = self.publisher(qos, key=key)
        if publisher not in self._matched:
            self.handshake(publisher,
                           lambda stamp: joint_state(stamp, [self.warm_up_joint], [0.0]))
            self._matched.add(publisher)
        return publisher

    def multi_dof_states(self, warm_up_joint: str, qos=None):
        """A MultiDOFJointState publisher matched with the node (warm-up on `warm_up_joint`)."""
        publisher = self.publisher(qos, multi_dof=True)
        if publisher not in self._matched:
            identity = ((0.0, 0.0, 0.0), IDENTITY)
            self.handshake(publisher,
                           lambda stamp: multi_dof_state(stamp, {warm_up_joint: identity}))
            self._matched.add(publisher)
        return publisher

    def wait_ready(self, timeout: float) -> None:
        """Until the node has published /tf_static (needs `record_static`), listens to both
        joint-state topics and offers set_parameters; without warm-up messages."""
        joint_states, multi_dof = self.publisher(), self.publisher(multi_dof=True)
        set_parameters = self._client(SetParameters, 'set_parameters')
        self.probe.wait_until(
            lambda: self.static and joint_states.get_subscription_count() > 0
            and multi_dof.get_subscription_count() > 0 and set_parameters.service_is_ready(),
            timeout, f'node {self.name} to start ({self.process.output()[-500:]})')

    def begin(self) -> None:
        """Start a test: the node is alive and nothing received earlier is kept."""
        assert self.process.running(), self.process.output()[-2000:]
        self.probe.spin(0.01)
        self.tf.clear()
        self.diagnostics.clear()
        self._log_start = len(self.process.output())

    def expect(self, stamp_ns: int, timeout: float = 5.0, count: int = 1) -> list[TFMessage]:
        """Wait for `count` /tf messages of this node stamped `stamp_ns`; return them."""
        self.probe.wait_until(lambda: len(transforms_at(self.tf, stamp_ns, self.prefix)) >= count,
                              timeout, f'{count} /tf message(s) of {self.name} stamped {stamp_ns}')
        return transforms_at(self.tf, stamp_ns, self.prefix)

    def publish_and_expect(self, publisher, message, timeout: float = 5.0) -> TFMessage:
        publisher.publish(message)
        return self.expect(stamp_of(message), timeout)[0]

    def publish_until_tf(self, publisher, message, predicate: Callable[[TFMessage], bool],
                         timeout: float = 10.0) -> TFMessage:
        """Publish `message` every 50 ms until a new /tf message satisfies `predicate`.

        For a node whose joint-state subscription has not been matched by a handshake.
        """
        checked = len(self.tf)
        deadline = time.monotonic() + timeout
        while True:
            publisher.publish(message)
            next_publication = time.monotonic() + 0.05
            while True:
                for received in self.tf[checked:]:
                    if received.transforms and predicate(received):
                        return received
                checked = len(self.tf)
                if time.monotonic() >= next_publication:
                    break
                self.probe.spin(0.01)
            if time.monotonic() > deadline:
                pytest.fail(f'no /tf message as expected after {timeout} s')

    def stamps(self) -> list[int]:
        """The stamps of this node's /tf messages received since `begin()`, in order."""
        return [stamp_of(m.transforms[0]) for m in self.tf
                if m.transforms and m.transforms[0].child_frame_id.startswith(self.prefix)]

    # Parameters ---------------------------------------------------------------------------

    def _client(self, service_type, service: str):
        client = self._clients.get(service)
        if client is None:
            client = self._clients[service] = self.probe.node.create_client(
                service_type, f'{self.topic_ns}/{self.name}/{service}')
        return client

    def _call(self, service_type, service: str, request, timeout: float):
        client = self._client(service_type, service)
        wait_until(client.service_is_ready, timeout, lambda: self.probe.spin(0.05),
                   f'the {service} service of {self.name}')
        return call_service(client, request, lambda: self.probe.spin(0.05), timeout,
                            f'the {service} response of {self.name}')

    def set_parameters(self, timeout: float = 30.0, **values):
        """Set parameters through /<node>/set_parameters; the list of SetParametersResult."""
        request = SetParameters.Request(parameters=[Parameter(k, value=v).to_parameter_msg()
                                                    for k, v in values.items()])
        return self._call(SetParameters, 'set_parameters', request, timeout).results

    def get_parameter(self, name: str, timeout: float = 30.0):
        """The value of one parameter, from /<node>/get_parameters."""
        response = self._call(GetParameters, 'get_parameters',
                              GetParameters.Request(names=[name]), timeout)
        return Parameter.from_parameter_msg(
            ParameterMessage(name=name, value=response.values[0])).value

    # Diagnostics --------------------------------------------------------------------------

    def diagnostic_statuses(self) -> list:
        """Every status of this node received since `begin()`, oldest first."""
        wanted = f'{self.name}: joint_states'
        return [s for array in self.diagnostics for s in array.status if s.name == wanted]

    def diagnostic_value(self, key: str, default: str = '') -> str:
        """The value of `key` in the latest status of this node that has it."""
        for status in reversed(self.diagnostic_statuses()):
            for item in status.values:
                if item.key == key:
                    return item.value
        return default

    def received_joint_states(self) -> int:
        """The node's own count of received JointStates, from its latest /diagnostics."""
        return int(self.diagnostic_value('joint_states received', '0'))

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


def node_link_fixture(name: str, parameters: dict, *, fixture: str, scope: str = 'module',
                      ready_timeout: float | None = None, shared_recorders: bool = False,
                      **link_options):
    """A pytest fixture named `fixture`: a node `name` started with `parameters` and its Link.

    Shared by the tests of a module, on the module's probe (`module_probe`: the links of a
    module spin together, so none keeps a backlog), or of a class (scope='class', with a probe
    of its own, closed with the node). With `ready_timeout`, the fixture waits for
    `Link.wait_ready` (pass record_static=True); otherwise publishers are matched by their
    first use (`Link.joint_states`). A `namespace` (a Link option) is the node's namespace too:
    its joint-state topics are its own. With `shared_recorders`, the link records /tf and
    /diagnostics with the probe's shared recorders (`Probe.recorder`), as the other links of the
    module that do so: for links used one after the other by the tests of a module.
    """
    namespace = link_options.get('namespace', '')
    ros_args = ('-r', f'__ns:={namespace}') if namespace else ()

    @pytest.fixture(scope=scope, name=fixture)
    def node_and_link(request, tmp_path_factory):
        own_probe = scope != 'module'
        probe = Probe(f'{name}_probe') if own_probe else request.getfixturevalue('module_probe')
        process = NodeProcess(tmp_path_factory.mktemp(name), parameters, ros_args,
                              node_name=name)
        try:
            options = dict(link_options)
            if shared_recorders:
                options['tf'] = probe.recorder(TFMessage, '/tf',
                                               options.pop('tf_qos', TF_QOS))
                options['diagnostics'] = probe.recorder(DiagnosticArray, '/diagnostics',
                                                        RELIABLE)
            link = Link(probe, process, name=name, **options)
            if ready_timeout is not None:
                link.wait_ready(ready_timeout)
            yield link
        finally:
            process.stop()
            if own_probe:
                probe.close()

    return node_and_link
