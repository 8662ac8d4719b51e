"""The ROS 2 node: parameters, subscriptions, publishers and timers around a StateEngine.

Everything the node decides is the engine's (engine/state_engine.py); here the node's parameters
become its
configuration, topics are resolved and remapped, received bytes go to it, and what it
publishes goes out through the publishers, as bytes, by the fastest call this rclpy has.
"""

from __future__ import annotations

from functools import partial

from diagnostic_msgs.msg import DiagnosticArray
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

from urdf_state_publisher.engine.health import Level
from urdf_state_publisher.engine.joint_settings import JointSettings
from urdf_state_publisher.engine.parameters import PARAMETERS, ParameterValueError
from urdf_state_publisher.engine.source_topics import check_no_feedback, source_topics
from urdf_state_publisher.engine.state_engine import (
    configured_description,
    DIAGNOSTICS_PERIOD_S,
    Outputs,
    StateEngine,
)
from urdf_state_publisher.engine.unknown_parameters import unknown_parameters
from urdf_state_publisher.errors import DescriptionError, StartupError
from urdf_state_publisher.ros.parameters import declare
from urdf_state_publisher.ros.qos import (
    DIAGNOSTICS_QOS,
    JOINT_STATES_QOS,
    LATCHED_QOS,
    TF_QOS,
)
from urdf_state_publisher.ros.rclpy_capabilities import bytes_publisher

__all__ = ['UrdfStatePublisher']


class RclpyFallback:
    """rclpy's deserializer, for what the engine's readers leave alone (engine.Fallback)."""

    name = 'rclpy'

    @staticmethod
    def joint_state(data: bytes):
        message = deserialize_message(data, JointState)
        stamp = message.header.stamp
        return ((stamp.sec, stamp.nanosec), message.name, message.position, message.velocity,
                message.effort)

    @staticmethod
    def multi_dof_joint_state(data: bytes):
        message = deserialize_message(data, MultiDOFJointState)
        poses = np.array([(t.translation.x, t.translation.y, t.translation.z, t.rotation.x,
                           t.rotation.y, t.rotation.z, t.rotation.w)
                          for t in message.transforms], dtype=float).reshape(-1, 7)
        stamp = message.header.stamp
        return (stamp.sec, stamp.nanosec), message.joint_names, poses

    @staticmethod
    def string(data: bytes) -> str:
        return deserialize_message(data, String).data


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
            config = declare(self)  # typed, read-only where so, with ranges
            settings = JointSettings.from_parameters(given, config)
        except ParameterValueError as error:
            raise StartupError(str(error)) from error
        self._log_unknown_parameters(given)
        for name in settings.parameter_names:
            if self.has_parameter(name):  # read once, at start
                self.set_descriptor(name, ParameterDescriptor(
                    type=self.get_parameter(name).type_.value, read_only=True,
                    description="joint_state_publisher's per-joint parameter, read at start"))

        topics = source_topics(config.joint_state_topics, self.resolve_topic_name)
        joint_states = None
        if config.publish_joint_states:
            check_no_feedback(topics, self.resolve_topic_name('joint_states'))
            joint_states = self._bytes_publisher(JointState, 'joint_states', JOINT_STATES_QOS)
        description = None
        if not config.use_robot_description_topic:
            description = self._bytes_publisher(String, 'robot_description', LATCHED_QOS)
        self._engine = StateEngine(
            config, settings, node_name=self.get_name(), topics=topics, outputs=Outputs(
                tf=self._bytes_publisher(TFMessage, '/tf', TF_QOS),
                tf_static=self._bytes_publisher(TFMessage, '/tf_static', LATCHED_QOS),
                joint_states=joint_states, robot_description=description,
                diagnostics=self._bytes_publisher(DiagnosticArray, '/diagnostics',
                                                  DIAGNOSTICS_QOS),
                log=self._log),
            clock=self._now, fallback=RclpyFallback())
        self._load_initial_description()
        self.add_on_set_parameters_callback(self._on_set_parameters)

        engine = self._engine
        for topic in topics:
            # raw: the bytes as received, read by the engine without a message object.
            self.create_subscription(
                JointState, topic, partial(engine.joint_state, topic), qos_profile_sensor_data,
                qos_overriding_options=QoSOverridingOptions.with_default_policies(), raw=True)
        self.create_subscription(
            MultiDOFJointState, 'multi_dof_joint_states', engine.multi_dof_joint_state,
            qos_profile_sensor_data,
            qos_overriding_options=QoSOverridingOptions.with_default_policies(), raw=True)
        self.create_timer(DIAGNOSTICS_PERIOD_S, engine.on_diagnostics_timer)
        if engine.output_period_s is not None:
            self._output_timer = self.create_timer(engine.output_period_s,
                                                   self._publish_on_timer)

    def _bytes_publisher(self, message_type, topic: str, qos):
        return bytes_publisher(self.create_publisher(message_type, topic, qos))

    def _log(self, level: Level, text: str, kind: str = '') -> None:
        # Every line is logged (`kind`, the condition's, is for a log that condenses).
        # One call per severity: rclpy refuses two severities from one line of code.
        logger = self.get_logger()
        if level == Level.ERROR:
            logger.error(text)
        elif level == Level.WARN:
            logger.warning(text)
        else:
            logger.info(text)

    def _log_unknown_parameters(self, given: dict) -> None:
        """A WARN per near miss of a known parameter; one INFO line lists the other unknowns."""
        unknown = unknown_parameters(given)
        for line in unknown.warnings():
            self.get_logger().warning(line)
        info = unknown.info()
        if info is not None:
            self.get_logger().info(info)

    def _load_initial_description(self) -> None:
        engine = self._engine
        if engine.config.use_robot_description_topic:
            subscription = self.create_subscription(
                String, 'robot_description', engine.description_message, LATCHED_QOS, raw=True)
            self.get_logger().info(
                f"waiting for the description on topic '{subscription.topic_name}'")
            return
        try:
            configured = configured_description(engine.config)
        except DescriptionError as error:
            raise StartupError(str(error)) from error
        if configured is None:
            raise StartupError(
                'no robot description: set the parameter robot_description (URDF text) or '
                'description_file (a .urdf or .xacro path), or set '
                'use_robot_description_topic to read it from a topic')
        engine.load_at_start(*configured)

    def _on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        try:
            values = {spec.name: self.get_parameter(spec.name).value for spec in PARAMETERS}
            values.update({p.name: p.value for p in parameters if p.name in values})
            reason = self._engine.reconfigure(values, {p.name for p in parameters})
        except Exception as error:  # noqa: BLE001 - a request must not stop the node
            self.get_logger().error(f'failed to apply parameters: {error!r}')
            return SetParametersResult(successful=False, reason=f'internal error: {error!r}')
        if reason is not None:
            return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _now(self) -> tuple[int, int]:
        return self.get_clock().now().seconds_nanoseconds()

    def _publish_on_timer(self) -> None:
        if not self._engine.on_output_timer():  # joint states drive everything now: for good
            self._output_timer.cancel()
