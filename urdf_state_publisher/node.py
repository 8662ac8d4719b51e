"""The ROS 2 node: parameters, subscriptions and publishers around a RobotModel."""

from __future__ import annotations

from collections import OrderedDict
from functools import cached_property
import sys
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
import numpy as np
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    qos_profile_sensor_data,
    QoSProfile,
    ReliabilityPolicy,
)
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState, MultiDOFJointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.description import read_description_file
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.geometry import normalized, Pose
from urdf_state_publisher.model import JointUpdate, RobotModel, UpdatePlan
from urdf_state_publisher.parameters import NodeConfig, PARAMETERS, ParameterValueError
from urdf_state_publisher.tf_wire import build_tf_message, TransformTemplate

__all__ = ['UrdfStatePublisher', 'main', 'spin_until_shutdown']

TF_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST,
                    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
LATCHED_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
TEMPLATE_CACHE_SIZE = 64
LOG_THROTTLE_S = 5.0
NEVER_NS = np.iinfo(np.int64).min // 2  # a stamp before any other, with room to add to it
DIAGNOSTICS_PERIOD_S = 1.0
UNKNOWN_NAMES_REPORTED = 50  # by name; beyond that a flood of random names is only counted
# Default positions never change: republishing them faster than this only costs CPU.
DEFAULT_POSITIONS_MAX_HZ = 50.0


class StartupError(Exception):
    """A problem that stops the node from starting; the message is for the user."""


class ActiveModel:
    """A model with everything derived from it for publishing: swapped as a whole on reload."""

    def __init__(self, model: RobotModel, text: str, frame_prefix: str):
        self.model = model
        self.text = text
        self.frame_prefix = frame_prefix
        self.frames = tuple((frame_prefix + model.joint(n).parent,
                             frame_prefix + model.joint(n).child) for n in model.scalar_joints)
        # Per joint: the stamp last published (rate limiting) and the latest stamp received
        # (time going backwards is judged per joint, so sources with offset clocks coexist).
        self.last_published_ns = np.full(len(model.scalar_joints), NEVER_NS)
        self.last_seen_ns = np.full(len(model.scalar_joints), NEVER_NS)
        self.last_pose_published_ns: dict[str, int] = {}
        self.last_pose_seen_ns: dict[str, int] = {}
        self._templates: OrderedDict[object, TransformTemplate] = OrderedDict()

    def template(self, plan: UpdatePlan, mask: np.ndarray | None) -> TransformTemplate:
        """The serialized-message template for the plan's joints (those in `mask` if given)."""
        key = plan if mask is None else (plan, mask.tobytes())
        template = self._templates.get(key)
        if template is None:
            index = plan.joint_index if mask is None else plan.joint_index[mask]
            template = TransformTemplate([self.frames[i] for i in index])
            self._templates[key] = template
            if len(self._templates) > TEMPLATE_CACHE_SIZE:
                self._templates.popitem(last=False)
        else:
            self._templates.move_to_end(key)
        return template

    @cached_property
    def default_update(self) -> JointUpdate:
        """The single-value joints at their default positions (computed once per model)."""
        defaults = self.model.default_positions()
        return self.model.update(tuple(defaults), list(defaults.values()))

    @cached_property
    def default_pose_rows(self) -> tuple[list[tuple[str, str]], np.ndarray]:
        """Frames and transforms of the floating and planar joints at their origins."""
        frames, rows = [], []
        for name in self.model.pose_joints:
            joint, pose = self.model.joint(name), self.model.joint_pose(name, Pose())
            frames.append((self.frame_prefix + joint.parent, self.frame_prefix + joint.child))
            rows.append((*pose.translation, *pose.rotation))
        return frames, np.array(rows).reshape(-1, 7)

    def static_message(self, sec: int, nanosec: int) -> TFMessage:
        """The complete /tf_static message: fixed joints and sensor frames."""
        statics = self.model.static_transforms()
        rows = np.array([(*s.pose.translation, *s.pose.rotation) for s in statics]).reshape(-1, 7)
        frames = [(self.frame_prefix + s.parent, self.frame_prefix + s.child) for s in statics]
        return build_tf_message(frames, sec, nanosec, rows)


class JointStateStats:
    """Counts for /diagnostics over the current period and since start."""

    def __init__(self):
        self.received = 0
        self.period_received = 0
        self.last_receipt: float | None = None
        self.clamped: set[str] = set()
        self.unknown: set[str] = set()
        self.unknown_overflow = 0  # unknown names beyond the ones kept in `unknown`
        self.dropped: dict[str, int] = {}

        self.period_problems: set[str] = set()  # what went wrong since the last report

    def drop(self, reason: str, count: int = 1) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + count
        self.period_problems.add(reason)


class UrdfStatePublisher(Node):
    """Publishes a URDF's fixed frames on /tf_static and its moving joints on /tf."""

    def __init__(self, **node_options):
        """Declare parameters, load the description and set up topics.

        Raises StartupError when the description or a parameter is unusable.
        """
        super().__init__('urdf_state_publisher', **node_options)
        for spec in PARAMETERS:
            # Dynamically typed: NodeConfig checks the types, with messages for the user.
            self.declare_parameter(spec.name, spec.default, ParameterDescriptor(
                description=spec.description, read_only=spec.read_only, dynamic_typing=True))
        try:
            self._config = NodeConfig.from_values(
                {spec.name: self.get_parameter(spec.name).value for spec in PARAMETERS})
        except ParameterValueError as error:
            raise StartupError(str(error)) from error

        self._tf = self.create_publisher(TFMessage, '/tf', TF_QOS)
        self._tf_static = self.create_publisher(TFMessage, '/tf_static', LATCHED_QOS)
        self._diagnostics = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._description_pub = None
        self._active: ActiveModel | None = None
        self._stats = JointStateStats()
        self._warned_unstamped = False
        self._next_log: dict[str, float] = {}
        self._default_timer = None

        self._load_initial_description()
        self.add_on_set_parameters_callback(self._on_set_parameters)

        self.create_subscription(
            JointState, 'joint_states', self._on_joint_state, qos_profile_sensor_data,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self.create_subscription(
            MultiDOFJointState, 'multi_dof_joint_states', self._on_multi_dof_joint_state,
            qos_profile_sensor_data,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self.create_timer(DIAGNOSTICS_PERIOD_S, self._publish_diagnostics)
        if self._config.publish_default_positions:
            self._default_timer = self.create_timer(
                1.0 / min(self._config.publish_frequency, DEFAULT_POSITIONS_MAX_HZ),
                self._publish_default_positions)

    # Description sources ------------------------------------------------------------------

    def _load_initial_description(self) -> None:
        config = self._config
        if config.use_robot_description_topic:
            subscription = self.create_subscription(
                String, 'robot_description', self._on_description_topic, LATCHED_QOS)
            self.get_logger().info(
                f"waiting for the description on topic '{subscription.topic_name}'")
            return
        self._description_pub = self.create_publisher(String, 'robot_description', LATCHED_QOS)
        if config.robot_description:
            text, source = config.robot_description, 'parameter robot_description'
        elif config.description_file:
            try:
                text = read_description_file(config.description_file, config.xacro_args)
            except DescriptionError as error:
                raise StartupError(str(error)) from error
            source = f'file {config.description_file}'
        else:
            raise StartupError(
                'no robot description: set the parameter robot_description (URDF text) or '
                'description_file (a .urdf or .xacro path), or set '
                'use_robot_description_topic to read it from a topic')
        try:
            self._activate(self._build_model(text, config), text, config.frame_prefix)
        except DescriptionError as error:
            raise StartupError(f'invalid robot description ({source}): {error}') from error

    def _build_model(self, text: str, config: NodeConfig) -> RobotModel:
        return RobotModel.from_urdf(
            text, use_smallest_joint_limits=config.use_smallest_joint_limits)

    def _activate(self, model: RobotModel, text: str, frame_prefix: str) -> None:
        """Swap in a model: one assignment, so no callback ever sees half of a change."""
        self._active = ActiveModel(model, text, frame_prefix)
        # Names unknown to the old model may be joints of the new one; clamping restarts too.
        self._stats.unknown = {n for n in self._stats.unknown if not model.has_joint(n)}
        self._stats.unknown_overflow = 0
        self._stats.clamped.clear()
        for warning in model.warnings:
            self.get_logger().warning(f'robot description: {warning}')
        self.get_logger().info(
            f"robot '{model.name}': root '{model.root}', {len(model.links)} links, "
            f'{len(model.movable_joints)} moving joints ({len(model.mimic_joints)} mimic), '
            f'{len(model.fixed_joints)} fixed joints, {len(model.sensors)} sensors, '
            f'{len(model.warnings)} warnings')
        self._publish_static()
        if self._description_pub is not None:
            self._description_pub.publish(String(data=text))

    def _publish_static(self) -> None:
        now = self.get_clock().now().seconds_nanoseconds()
        self._tf_static.publish(self._active.static_message(*now))

    def _on_description_topic(self, message: String) -> None:
        try:
            model = self._build_model(message.data, self._config)
            self._activate(model, message.data, self._config.frame_prefix)
        except DescriptionError as error:
            self.get_logger().error(
                f'ignoring the robot description received on the topic: {error}')
        except Exception as error:  # noqa: BLE001 - nothing a sender does may stop the node
            self.get_logger().error(f'failed to apply the robot description: {error!r}')

    def _on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        try:
            return self._apply_parameters(parameters)
        except Exception as error:  # noqa: BLE001 - a request must not stop the node
            self.get_logger().error(f'failed to apply parameters: {error!r}')
            return SetParametersResult(successful=False, reason=f'internal error: {error!r}')

    def _apply_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        values = {spec.name: self.get_parameter(spec.name).value for spec in PARAMETERS}
        values.update({p.name: p.value for p in parameters if p.name in values})
        try:
            config = NodeConfig.from_values(values)
        except ParameterValueError as error:
            return SetParametersResult(successful=False, reason=str(error))
        changed = {p.name for p in parameters}
        active = self._active
        rebuild = active is not None and (
            'use_smallest_joint_limits' in changed
            or ('robot_description' in changed and config.robot_description != active.text))
        if 'robot_description' in changed and not config.robot_description:
            return SetParametersResult(successful=False,
                                       reason='robot_description must not be empty')
        if rebuild:
            text = config.robot_description if 'robot_description' in changed else active.text
            try:
                model = self._build_model(text, config)
            except DescriptionError as error:
                return SetParametersResult(successful=False,
                                           reason=f'invalid robot description: {error}')
            self._config = config
            self._activate(model, text, config.frame_prefix)
        else:
            self._config = config
            if active is not None and config.frame_prefix != active.frame_prefix:
                self._activate(active.model, active.text, config.frame_prefix)
        return SetParametersResult(successful=True)

    # Joint states -------------------------------------------------------------------------

    def _stamp_ns(self, stamp) -> tuple[int, int, int]:
        sec, nanosec = stamp.sec, stamp.nanosec
        if sec == 0 and nanosec == 0:
            # An unstamped JointState would be published at time 0, which tf2 reads as "latest"
            # and rate limiting would then drop every later one: stamp it on receipt instead.
            if not self._warned_unstamped:
                self._warned_unstamped = True
                self.get_logger().warning(
                    'received a JointState with a zero stamp; publishing such states with the '
                    'time of receipt. Stamp joint states at their source.')
            sec, nanosec = self.get_clock().now().seconds_nanoseconds()
        return sec, nanosec, sec * 1_000_000_000 + nanosec

    def _log_throttled(self, kind: str, message: str, error: bool = False) -> None:
        """Log `message` unless a message of this kind went out in the last LOG_THROTTLE_S.

        Our own throttle: rclpy's inspects the caller's frame on every call, which costs
        about a millisecond, a price a 1 kHz stream of clamped joints would pay each time.
        """
        now = time.monotonic()
        if now < self._next_log.get(kind, 0.0):
            return
        self._next_log[kind] = now + LOG_THROTTLE_S
        logger = self.get_logger()
        (logger.error if error else logger.warning)(message)

    def _warn_time_went_back(self, joints: list[str]) -> None:
        self._log_throttled('time',
            'joint state time moved backwards (simulation reset, bag loop or a restarted '
            f'source?) for: {", ".join(joints)}; publishing them again from the new time')

    def _on_joint_state(self, message: JointState) -> None:
        try:
            self._handle_joint_state(message)
        except Exception as error:  # noqa: BLE001 - nothing a sender does may stop the node
            self._stats.drop('internal error')
            self._log_throttled('joint_state_error',
                                f'failed to process a JointState: {error!r}', error=True)

    def _handle_joint_state(self, message: JointState) -> None:
        active = self._active
        stats = self._stats
        stats.received += 1
        stats.period_received += 1
        stats.last_receipt = time.monotonic()
        if active is None:
            stats.drop('no robot description yet')
            return
        self._stop_default_positions()
        names, positions = message.name, message.position
        if len(names) != len(positions):
            self._report_length_mismatch(names, len(positions))
        update = active.model.update(names, positions)
        plan = update.plan
        self._report_plan(plan, update.non_finite, update.clamped)
        if not len(update.values):
            return
        sec, nanosec, stamp_ns = self._stamp_ns(message.header.stamp)
        back = stamp_ns < active.last_seen_ns[plan.joint_index]
        if back.any():
            self._warn_time_went_back([plan.joints[i] for i in np.flatnonzero(back)])
            active.last_published_ns[plan.joint_index[back]] = NEVER_NS
        active.last_seen_ns[plan.joint_index] = stamp_ns
        mask = None
        if not self._config.ignore_timestamp:
            due = stamp_ns >= active.last_published_ns[plan.joint_index] \
                + self._config.publish_interval_ns
            if not due.all():
                if not due.any():
                    stats.drop('rate limit (publish_frequency)')
                    return
                mask = due
        index = plan.joint_index if mask is None else plan.joint_index[mask]
        active.last_published_ns[index] = stamp_ns
        transforms = update.transforms if mask is None else update.transforms[mask]
        self._tf.publish(active.template(plan, mask).serialize(sec, nanosec, transforms))

    def _report_length_mismatch(self, names: list[str], positions: int) -> None:
        self._stats.drop('names and positions differ in length')
        if positions < len(names):
            detail = f'ignoring the joints without a position: {", ".join(names[positions:])}'
        else:
            detail = f'ignoring the {positions - len(names)} positions without a name'
        self._log_throttled('length',
            f'JointState has {len(names)} names but {positions} positions: {detail}')

    def _report_plan(self, plan: UpdatePlan, non_finite: tuple[str, ...],
                     clamped: tuple[str, ...]) -> None:
        stats = self._stats
        if plan.unknown:
            stats.period_problems.add('unknown joint names')
            self._report_unknown(plan.unknown)
        if plan.duplicated:
            stats.drop('duplicated joint names', len(plan.duplicated))
            self._log_throttled('duplicated',
                'JointState names these joints more than once, so their values are ambiguous '
                f'and ignored: {", ".join(plan.duplicated)}')
        if plan.not_scalar:
            stats.drop('value for a fixed, floating or planar joint', len(plan.not_scalar))
            self._log_throttled('not_scalar',
                'JointState gives a value to joints without a single position (fixed joints '
                'take none; drive floating and planar joints with MultiDOFJointState on '
                f'multi_dof_joint_states): {", ".join(plan.not_scalar)}')
        if non_finite:
            stats.drop('NaN or infinite position', len(non_finite))
            self._log_throttled('non_finite',
                f'JointState has NaN or infinite positions for: {", ".join(non_finite)} '
                '(ignored)')
        if clamped:
            stats.clamped.update(clamped)
            stats.period_problems.add('joints clamped')
            self._log_throttled('clamped',
                f'joint values outside their limits were clamped: {", ".join(clamped)}')

    def _report_unknown(self, names: tuple[str, ...]) -> None:
        """Log each unknown name once, up to UNKNOWN_NAMES_REPORTED of them, then count."""
        stats = self._stats
        new = [n for n in names if n not in stats.unknown]
        if not new or stats.unknown_overflow:
            stats.unknown_overflow += len(new) if stats.unknown_overflow else 0
            return
        room = UNKNOWN_NAMES_REPORTED - len(stats.unknown)
        stats.unknown.update(new[:room])
        message = (f"JointState names joints that robot '{self._active.model.name}' does not "
                   f'have (ignored; reported once): {", ".join(new[:room])}')
        if len(new) > room:
            stats.unknown_overflow = len(new) - room
            message += (f'; {UNKNOWN_NAMES_REPORTED} unknown names reported, further ones are '
                        'only counted in /diagnostics')
        self.get_logger().warning(message)

    def _on_multi_dof_joint_state(self, message: MultiDOFJointState) -> None:
        try:
            self._handle_multi_dof_joint_state(message)
        except Exception as error:  # noqa: BLE001 - nothing a sender does may stop the node
            self._stats.drop('internal error')
            self._log_throttled('multi_dof_error',
                                f'failed to process a MultiDOFJointState: {error!r}', error=True)

    def _handle_multi_dof_joint_state(self, message: MultiDOFJointState) -> None:
        active = self._active
        if active is None:
            return
        self._stop_default_positions()
        model = active.model
        sec, nanosec, stamp_ns = self._stamp_ns(message.header.stamp)
        interval = 0 if self._config.ignore_timestamp else self._config.publish_interval_ns
        frames, rows, ignored = [], [], []
        for name, transform in zip(message.joint_names, message.transforms):
            if name not in model.pose_joints:
                ignored.append(name)
                continue
            t, r = transform.translation, transform.rotation
            numbers = (t.x, t.y, t.z, r.x, r.y, r.z, r.w)
            if not all(np.isfinite(numbers)) or not any(numbers[3:]):
                ignored.append(name)
                continue
            if stamp_ns < active.last_pose_seen_ns.get(name, NEVER_NS):
                self._warn_time_went_back([name])
                active.last_pose_published_ns.pop(name, None)
            active.last_pose_seen_ns[name] = stamp_ns
            if stamp_ns < active.last_pose_published_ns.get(name, NEVER_NS) + interval:
                continue
            active.last_pose_published_ns[name] = stamp_ns
            pose = model.joint_pose(name, Pose(numbers[:3], normalized(numbers[3:])))
            if not np.isfinite((*pose.translation, *pose.rotation)).all():
                ignored.append(name)  # finite input that overflows on the joint's origin
                continue
            joint = model.joint(name)
            frames.append((active.frame_prefix + joint.parent, active.frame_prefix + joint.child))
            rows.append((*pose.translation, *pose.rotation))
        if ignored:
            self._stats.drop('unusable MultiDOFJointState entry', len(ignored))
            self._log_throttled('multi_dof_ignored',
                'MultiDOFJointState entries ignored (not a floating or planar joint of the '
                f'model, or a non-finite or zero transform): {", ".join(ignored)}')
        if rows:
            self._tf.publish(build_tf_message(frames, sec, nanosec, np.array(rows)))

    # Default positions --------------------------------------------------------------------

    def _publish_default_positions(self) -> None:
        active = self._active
        if active is None:
            return
        sec, nanosec = self.get_clock().now().seconds_nanoseconds()
        update = active.default_update
        if len(update.values):
            self._tf.publish(active.template(update.plan, None).serialize(
                sec, nanosec, update.transforms))
        frames, rows = active.default_pose_rows
        if frames:
            self._tf.publish(build_tf_message(frames, sec, nanosec, rows))

    def _stop_default_positions(self) -> None:
        if self._default_timer is not None:
            self._default_timer.cancel()
            self.destroy_timer(self._default_timer)
            self._default_timer = None

    # Diagnostics --------------------------------------------------------------------------

    def _publish_diagnostics(self) -> None:
        stats = self._stats
        active = self._active
        now = time.monotonic()
        rate = stats.period_received / DIAGNOSTICS_PERIOD_S
        age = '' if stats.last_receipt is None else f'{now - stats.last_receipt:.3f}'
        values = [
            ('robot', active.model.name if active else ''),
            ('joint_states received', str(stats.received)),
            ('joint_states rate (Hz)', f'{rate:.1f}'),
            ('joint_states age (s)', age),
            ('joints clamped', ', '.join(sorted(stats.clamped))),
            ('unknown joint names', ', '.join(sorted(stats.unknown))
             + (f' and {stats.unknown_overflow} more' if stats.unknown_overflow else '')),
        ]
        values += [(f'dropped: {reason}', str(count))
                   for reason, count in sorted(stats.dropped.items())]
        # The level reflects the last period; the values above count since start.
        if active is None:
            level, summary = DiagnosticStatus.ERROR, 'no robot description'
        elif stats.received == 0:
            level, summary = DiagnosticStatus.WARN, 'no joint_states received yet'
        elif stats.period_problems:
            level = DiagnosticStatus.WARN
            summary = 'publishing; in the last period: ' + ', '.join(sorted(stats.period_problems))
        else:
            level, summary = DiagnosticStatus.OK, 'publishing'
        status = DiagnosticStatus(
            level=level, name=f'{self.get_name()}: joint_states', message=summary,
            hardware_id=active.model.name if active else '',
            values=[KeyValue(key=k, value=v) for k, v in values])
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics.publish(array)
        stats.period_received = 0
        stats.period_problems.clear()


def main(args: list[str] | None = None) -> int:
    """Run the node until SIGINT or SIGTERM; exit status 1 if it cannot start."""
    rclpy.init(args=args)
    try:
        node = UrdfStatePublisher()
    except StartupError as error:
        print(f'urdf_state_publisher: {error}', file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    spin_until_shutdown(node)
    return 0


def spin_until_shutdown(node: Node) -> None:
    """Spin `node` until SIGINT, SIGTERM or shutdown; then destroy it and shut rclpy down."""
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
