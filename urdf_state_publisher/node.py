"""The ROS 2 node: parameters, subscriptions and publishers around a RobotModel."""

from __future__ import annotations

from collections import OrderedDict
from functools import partial

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
import numpy as np
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos_overriding_options import QoSOverridingOptions
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState, MultiDOFJointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.description import (
    describe_extensions,
    parse_description,
    read_description_file,
)
from urdf_state_publisher.errors import DescriptionError, StartupError
from urdf_state_publisher.health import JointStateHealth, Level
from urdf_state_publisher.joint_settings import JointSettings
from urdf_state_publisher.joint_state_wire import (
    JointStateReader,
    MalformedJointState,
    UnsupportedEncapsulation,
)
from urdf_state_publisher.model import RobotModel
from urdf_state_publisher.parameters import declare, NodeConfig, PARAMETERS, ParameterValueError
from urdf_state_publisher.qos import JOINT_STATES_QOS, LATCHED_QOS, TF_QOS
from urdf_state_publisher.resolved_state import ResolvedFields, ResolvedState
from urdf_state_publisher.resolved_wire import ResolvedWriter
from urdf_state_publisher.stream import JointStream, Publication
from urdf_state_publisher.tf_wire import build_tf_message, TransformTemplate
from urdf_state_publisher.timer_output import TimerOutput

__all__ = ['UrdfStatePublisher']

TEMPLATE_CACHE_SIZE = 64
DIAGNOSTICS_PERIOD_S = 1.0
DIAGNOSTIC_LEVEL = {Level.OK: DiagnosticStatus.OK, Level.WARN: DiagnosticStatus.WARN,
                    Level.ERROR: DiagnosticStatus.ERROR}


class ActiveModel:
    """A model, its joint stream, timer output and serialized messages: swapped as a whole."""

    def __init__(self, text: str, stream: JointStream, timer: TimerOutput):
        self.text = text
        self.stream = stream
        self.timer = timer
        self._templates: OrderedDict[object, TransformTemplate] = OrderedDict()
        self._resolved_writer: ResolvedWriter | None = None  # made at the first use

    def serialize(self, publication: Publication) -> bytes:
        """The serialized /tf message of `publication`, from the template of its joints."""
        template = self._templates.get(publication.key)
        if template is None:
            frames = self.stream.frames
            template = TransformTemplate([frames[i] for i in publication.index])
            self._templates[publication.key] = template
            if len(self._templates) > TEMPLATE_CACHE_SIZE:
                self._templates.popitem(last=False)
        else:
            self._templates.move_to_end(publication.key)
        return template.serialize(publication.sec, publication.nanosec, publication.rows)

    def serialize_resolved(self, fields: ResolvedFields) -> bytes:
        """The serialized joint_states message of the stream's resolved state `fields`."""
        if self._resolved_writer is None:
            self._resolved_writer = ResolvedWriter(self.stream.model.scalar_joints)
        return self._resolved_writer.serialize(fields)

    def static_message(self, sec: int, nanosec: int) -> TFMessage:
        """The complete /tf_static message: fixed joints and sensor frames."""
        prefix = self.stream.frame_prefix
        statics = self.stream.model.static_transforms()
        rows = np.array([(*s.pose.translation, *s.pose.rotation) for s in statics]).reshape(-1, 7)
        frames = [(prefix + s.parent, prefix + s.child) for s in statics]
        return build_tf_message(frames, sec, nanosec, rows)


class UrdfStatePublisher(Node):
    """Publishes a URDF's fixed frames on /tf_static and its moving joints on /tf."""

    def __init__(self, **node_options):
        """Declare parameters, load the description and set up topics.

        Raises StartupError when the description or a parameter is unusable.
        """
        # Parameters given but not declared (zeros.<joint>, ...) are declared as given, so that
        # joint_state_publisher's per-joint parameters can be read and none goes unnoticed.
        super().__init__('urdf_state_publisher',
                         automatically_declare_parameters_from_overrides=True, **node_options)
        try:
            self._set_up()
        except BaseException:
            # What was built goes now, while the context is alive, not whenever the garbage
            # collector reaches a half-built node (at exit, possibly after the context).
            self.destroy_node()
            raise

    def _set_up(self) -> None:
        given = {name: parameter.value
                 for name, parameter in self.get_parameters_by_prefix('').items()}
        try:
            self._config = declare(self)  # typed, read-only where so, with ranges
            self._joint_settings = JointSettings.from_parameters(given, self._config)
        except ParameterValueError as error:
            raise StartupError(str(error)) from error
        for name in self._joint_settings.parameter_names:
            if self.has_parameter(name):  # read once, at start
                self.set_descriptor(name, ParameterDescriptor(
                    type=self.get_parameter(name).type_.value, read_only=True,
                    description="joint_state_publisher's per-joint parameter, read at start"))

        tf = self.create_publisher(TFMessage, '/tf', TF_QOS)
        # Serialized /tf messages go straight to the publisher's rclpy handle: Publisher.publish
        # only checks the type and holds the handle around this same call, which costs a few
        # microseconds per message. publish_raw exists in rclpy from Humble to Rolling.
        self._publish_tf_bytes = tf.handle.publish_raw
        self._tf_static = self.create_publisher(TFMessage, '/tf_static', LATCHED_QOS)
        self._diagnostics = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._description_pub = None
        self._active: ActiveModel | None = None
        # What the node knows about its inputs: each JointStream reports to it, and the
        # diagnostics timer asks it what to say.
        config = self._config
        # Before any joint state: the default positions on /tf, and on joint_states if published.
        publishes_defaults = config.publish_default_positions or config.publish_joint_states
        topics = self._joint_state_topics()
        self._health = JointStateHealth(publishes_defaults=publishes_defaults,
                                        reads_joint_states=bool(topics),
                                        held=self._joint_settings.held)
        if config.source_list:
            self._health.topics = topics
        self._publish_joint_states_bytes = None
        if config.publish_joint_states:
            self._check_no_feedback(topics)
            joint_states = self.create_publisher(JointState, 'joint_states', JOINT_STATES_QOS)
            self._publish_joint_states_bytes = joint_states.handle.publish_raw

        self._load_initial_description()
        self.add_on_set_parameters_callback(self._on_set_parameters)

        for topic in topics:
            # raw: the bytes as received, read by a JointStateReader of the topic's own (it
            # knows its sources' names), without a message object.
            self.create_subscription(
                JointState, topic, partial(self._on_joint_state, JointStateReader(), topic),
                qos_profile_sensor_data,
                qos_overriding_options=QoSOverridingOptions.with_default_policies(), raw=True)
        self.create_subscription(
            MultiDOFJointState, 'multi_dof_joint_states', self._on_multi_dof_joint_state,
            qos_profile_sensor_data,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self.create_timer(DIAGNOSTICS_PERIOD_S, self._publish_diagnostics)
        if publishes_defaults or self._joint_settings.held:
            self._output_timer = self.create_timer(1.0 / config.rate, self._publish_on_timer)

    def _joint_state_topics(self) -> tuple[str, ...]:
        """The JointState topics to read (NodeConfig.joint_state_topics), resolved and remapped."""
        topics = {}
        for entry in self._config.joint_state_topics:
            try:
                topic = self.resolve_topic_name(entry)
            except Exception as error:  # noqa: BLE001 - rclpy raises several kinds
                raise StartupError(
                    f"source_list: {entry!r} is not a valid topic name ({error}); give topic "
                    "names such as 'arm/joint_states' or '/gripper/joint_states'") from None
            if topic in topics:
                raise StartupError(
                    f'source_list: {topics[topic]!r} and {entry!r} are both {topic}: list each '
                    'topic once')
            topics[topic] = entry
        return tuple(topics)

    def _check_no_feedback(self, topics: tuple[str, ...]) -> None:
        """Refuse to read the resolved joint_states this node publishes."""
        output = self.resolve_topic_name('joint_states')
        if output in topics:
            raise StartupError(
                f'publish_joint_states: the node would read its own output, since source_list '
                f'lists {output}, where it publishes the resolved state. Remove {output} from '
                "source_list and list the topics your drivers publish on (for example "
                "'arm/joint_states'); remap a driver that publishes on joint_states to a topic "
                'of its own')

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
        except ParameterValueError as error:
            raise StartupError(f'{error} ({source})') from error

    def _build_model(self, text: str, config: NodeConfig) -> RobotModel:
        """The model of `text`; ParameterValueError when zeros or dependent_joints misfit it."""
        return self._joint_settings.model(
            parse_description(text), use_smallest_joint_limits=config.use_smallest_joint_limits)

    def _activate(self, model: RobotModel, text: str, frame_prefix: str) -> None:
        """Swap in a model: one assignment, so no callback ever sees half of a change."""
        config = self._config
        previous = self._active
        if previous is not None:
            previous.stream.check_held()  # reported under the model they came to
        resolved = None
        if config.publish_joint_states:
            # The joints keep their values across a reload: the robot did not move.
            resolved = ResolvedState(
                model, previous.stream.resolved if previous else None,
                zero_unknown_velocities=config.publish_default_velocities,
                zero_unknown_efforts=config.publish_default_efforts)
        stream = JointStream(
            model, report=self._health, clock=self._now, frame_prefix=frame_prefix,
            publish_interval_ns=config.publish_interval_ns,
            ignore_timestamp=config.ignore_timestamp, resolved=resolved,
            on_resolved=self._publish_resolved)
        self._active = ActiveModel(text, stream, TimerOutput(
            model, self._health, resolved=resolved,
            defaults=config.publish_default_positions or config.publish_joint_states,
            reads_joint_states=self._health.reads_joint_states,
            held=self._joint_settings.held))
        for warning in model.warnings:
            self.get_logger().warning(f'robot description: {warning}')
        extensions = describe_extensions(model.extensions)
        if extensions is not None:
            self.get_logger().info(f'robot description: {extensions}')
        self.get_logger().info(
            f"robot '{model.name}': root '{model.root}', {len(model.links)} links, "
            f'{len(model.movable_joints)} moving joints ({len(model.mimic_joints)} mimic), '
            f'{len(model.fixed_joints)} fixed joints, {len(model.sensors)} sensors, '
            f'{len(model.warnings)} warnings')
        self._publish_static()
        if self._description_pub is not None:
            self._description_pub.publish(String(data=text))

    def _publish_static(self) -> None:
        self._tf_static.publish(self._active.static_message(*self._now()))

    def _on_description_topic(self, message: String) -> None:
        try:
            model = self._build_model(message.data, self._config)
            self._activate(model, message.data, self._config.frame_prefix)
        except (DescriptionError, ParameterValueError) as error:
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
            except ParameterValueError as error:
                return SetParametersResult(successful=False, reason=str(error))
            self._config = config
            self._activate(model, text, config.frame_prefix)
        else:
            self._config = config
            if active is not None and config.frame_prefix != active.stream.frame_prefix:
                self._activate(active.stream.model, active.text, config.frame_prefix)
            elif active is not None:
                active.stream.limit_rate(config.publish_interval_ns, config.ignore_timestamp)
        return SetParametersResult(successful=True)

    # Joint states -------------------------------------------------------------------------

    def _now(self) -> tuple[int, int]:
        return self.get_clock().now().seconds_nanoseconds()

    def _publish(self, active: ActiveModel, publication: Publication | None) -> None:
        if publication is not None:
            self._publish_tf_bytes(active.serialize(publication))

    def _publish_resolved(self, fields: ResolvedFields) -> None:
        # Called by the active stream (or for its defaults): the active model's message.
        self._publish_joint_states_bytes(self._active.serialize_resolved(fields))
        self._health.resolved_published += 1

    def _on_joint_state(self, reader: JointStateReader, topic: str, data: bytes) -> None:
        try:
            active = self._active
            if active is None:
                self._health.received_without_model()
                return
            try:
                stamp, names, offset, count, double = reader.locate(data)
            except UnsupportedEncapsulation as unsupported:
                # Another encoding (XCDR2, ...): the middleware's deserializer, slower, reads
                # what its middleware writes; what it refuses too is malformed.
                try:
                    message = deserialize_message(data, JointState)
                except Exception as error:  # noqa: BLE001 - rclpy raises several kinds
                    self._health.received_malformed(
                        f"{unsupported}, and rclpy's deserializer cannot read it either "
                        f'({error})')
                    return
                self._health.deserialized_by_rclpy(unsupported.encapsulation)
                stamp = (message.header.stamp.sec, message.header.stamp.nanosec)
                self._publish(active, active.stream.joint_state(
                    tuple(message.name), message.position, stamp, topic, message.velocity,
                    message.effort))
                return
            except MalformedJointState as error:
                self._health.received_malformed(str(error))
                return
            publication = active.stream.joint_state_at(names, data, offset, count, double, stamp,
                                                       topic)
            if publication is not None:  # most are not (publish_frequency): no call for them
                self._publish(active, publication)
        except Exception as error:  # noqa: BLE001 - nothing a sender does may stop the node
            self._health.internal_error(f'failed to process a JointState: {error!r}')

    def _on_multi_dof_joint_state(self, message: MultiDOFJointState) -> None:
        try:
            active = self._active
            if active is None:
                return
            poses = np.array([(t.translation.x, t.translation.y, t.translation.z, t.rotation.x,
                               t.rotation.y, t.rotation.z, t.rotation.w)
                              for t in message.transforms], dtype=float).reshape(-1, 7)
            stamp = message.header.stamp
            self._publish(active, active.stream.multi_dof_joint_state(
                message.joint_names, poses, (stamp.sec, stamp.nanosec)))
        except Exception as error:  # noqa: BLE001 - nothing a sender does may stop the node
            self._health.internal_error(f'failed to process a MultiDOFJointState: {error!r}')

    # Timer output -------------------------------------------------------------------------

    def _publish_on_timer(self) -> None:
        """What no source sends (TimerOutput): default positions, joints held by zeros."""
        active = self._active
        if active is None:
            return
        timer = active.timer
        if timer.finished:  # joint states drive everything now: for good
            self._output_timer.cancel()
            return
        now = self._now()
        publication = timer.publication(now)
        if publication is not None:
            self._publish_tf_bytes(active.serialize(publication))
        resolved = timer.resolved_fields(now)
        if resolved is not None:
            self._publish_resolved(resolved)

    # Diagnostics --------------------------------------------------------------------------

    def _publish_diagnostics(self) -> None:
        """Log what started or ended in the last period and publish its status."""
        if self._active is not None:
            self._active.stream.check_held()  # the period's states, all checked
        assessment = self._health.assess()
        logger = self.get_logger()
        # One call per severity: rclpy refuses two severities from one line of code.
        for line in assessment.log:
            if line.level == Level.ERROR:
                logger.error(line.text)
            elif line.level == Level.WARN:
                logger.warning(line.text)
            else:
                logger.info(line.text)
        active = self._active
        status = DiagnosticStatus(
            level=DIAGNOSTIC_LEVEL[assessment.level], name=f'{self.get_name()}: joint_states',
            message=assessment.message, hardware_id=active.stream.model.name if active else '',
            values=[KeyValue(key=k, value=v) for k, v in assessment.values])
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics.publish(array)
