"""The node's work without ROS: bytes received on a topic in; bytes to publish, lines to log out.

A `StateEngine` is everything urdf_state_publisher decides: which description is active and
what a reload swaps, what each JointState and MultiDOFJointState puts on /tf (JointStream),
the resolved joint_states, what goes out on the timer (TimerOutput), the health of the inputs
and its /diagnostics status, and what a parameter change rebuilds. Its shells only wire it:
the node (ros/node.py), loaded into a container too, calls it from its subscriptions and timers
and hands it publishers; the bag command (recorded/command.py) calls it with a bag's messages and
log
times and writes what it publishes into a new bag. Time is whatever the shell's clock says:
the node's ROS clock, or a bag's log time. Nothing here imports ROS.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
import time
from typing import NamedTuple, Protocol

import numpy as np

from urdf_state_publisher.description import (
    describe_extensions,
    DescriptionText,
    read_description_file,
)
from urdf_state_publisher.engine.health import JointStateHealth, Level
from urdf_state_publisher.engine.joint_settings import JointSettings
from urdf_state_publisher.engine.parameters import NodeConfig, PARAMETERS, ParameterValueError
from urdf_state_publisher.engine.stream import JointStream, Publication
from urdf_state_publisher.engine.timer_output import TimerOutput
from urdf_state_publisher.errors import DescriptionError, StartupError
from urdf_state_publisher.kinematics.kdl_sign import kdl_signed
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.kinematics.resolved import ResolvedFields, ResolvedState
from urdf_state_publisher.wire.cdr import (
    MalformedMessage,
    read_string_message,
    string_message,
    UnsupportedEncapsulation,
)
from urdf_state_publisher.wire.diagnostics import diagnostic_array, status_name
from urdf_state_publisher.wire.joint_state import JointStateReader, read_multi_dof_joint_state
from urdf_state_publisher.wire.resolved import ResolvedWriter
from urdf_state_publisher.wire.tf import TransformTemplate
from urdf_state_publisher.words import counted

__all__ = ['ActiveModel', 'configured_description', 'DIAGNOSTICS_PERIOD_S', 'Fallback', 'Outputs',
           'StateEngine']

TEMPLATE_CACHE_SIZE = 64
DIAGNOSTICS_PERIOD_S = 1.0  # diagnostic_updater's default period


class Outputs(NamedTuple):
    """Where an engine's messages go: a call per topic, which takes the message's bytes; a log.

    `log` takes a level (OK logs as INFO), a line and, for the lines of a condition that
    starts, goes on or ends, its kind (health's; '' for the others). `joint_states` is None
    unless the resolved state is published (publish_joint_states); `robot_description` None
    where the description is not published (read from the topic).
    """

    tf: Callable[[bytes], None]
    tf_static: Callable[[bytes], None]
    joint_states: Callable[[bytes], None] | None
    robot_description: Callable[[bytes], None] | None
    diagnostics: Callable[[bytes], None]
    log: Callable[..., None]


class Fallback(Protocol):
    """What reads the messages the engine's own readers leave alone (not plain CDR).

    The node's is rclpy's deserializer, which reads whatever its middleware writes. `name`
    names it in the line that reports a message it cannot read either.
    """

    name: str

    def joint_state(self, data: bytes) -> tuple[tuple[int, int], Sequence[str],
                                                 Sequence[float], Sequence[float],
                                                 Sequence[float]]:
        """Stamp, names, positions, velocities and efforts; any exception if unreadable."""

    def multi_dof_joint_state(self, data: bytes) -> tuple[tuple[int, int], Sequence[str],
                                                          np.ndarray]:
        """Stamp, names and (N, 7) transforms; any exception if unreadable."""

    def string(self, data: bytes) -> str:
        """A std_msgs/String's text; any exception if unreadable."""


class ActiveModel:
    """A model, its joint stream, timer output and message templates: swapped as a whole."""

    def __init__(self, description: DescriptionText, stream: JointStream, timer: TimerOutput):
        self.description = description  # with its reading's warnings, for a rebuild to repeat
        self.stream = stream
        self.timer = timer
        self._templates: OrderedDict[object, TransformTemplate] = OrderedDict()
        self._resolved_writer: ResolvedWriter | None = None  # made at the first use

    def serialize(self, publication: Publication) -> bytes:
        """The /tf message of `publication`, from the template of its joints."""
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
        """The joint_states message of the stream's resolved state `fields`."""
        if self._resolved_writer is None:
            self._resolved_writer = ResolvedWriter(self.stream.model.scalar_joints)
        return self._resolved_writer.serialize(fields)

    def static_message(self, sec: int, nanosec: int) -> bytes:
        """The complete /tf_static message: fixed joints and sensor frames, signed as KDL signs."""
        prefix = self.stream.frame_prefix
        statics = self.stream.model.static_transforms()
        rows = np.array([(*s.pose.translation, *s.pose.rotation) for s in statics]).reshape(-1, 7)
        return TransformTemplate([(prefix + s.parent, prefix + s.child) for s in statics]
                                 ).serialize(sec, nanosec, kdl_signed(rows))


def configured_description(config: NodeConfig) -> tuple[DescriptionText, str] | None:
    """The description the parameters give, and where it comes from; None for none.

    DescriptionError when description_file cannot be read.
    """
    if config.robot_description:
        return DescriptionText(config.robot_description), 'parameter robot_description'
    if config.description_file:
        return (read_description_file(config.description_file, config.xacro_args),
                f'file {config.description_file}')
    return None


class StateEngine:
    """What urdf_state_publisher publishes and reports, for the inputs its shell hands over."""

    def __init__(self, config: NodeConfig, settings: JointSettings, *, node_name: str,
                 topics: tuple[str, ...], outputs: Outputs,
                 clock: Callable[[], tuple[int, int]],
                 monotonic: Callable[[], float] = time.monotonic,
                 fallback: Fallback | None = None):
        """An engine for `config` with no description yet (`load` gives it one).

        `topics`: the JointState topics read, as the shell names them. `clock` gives (sec,
        nanosec) of the shell's ROS time: stamps of what is not stamped by its input.
        `monotonic` gives seconds, for the health's rates and ages.
        """
        self.config = config
        self.settings = settings
        self.node_name = node_name
        self._outputs = outputs
        self._log = outputs.log
        self._clock = clock
        self._fallback = fallback
        self._readers = {topic: JointStateReader() for topic in topics}
        publishes_defaults = config.publish_default_positions or config.publish_joint_states
        self.health = JointStateHealth(clock=monotonic, publishes_defaults=publishes_defaults,
                                       reads_joint_states=bool(topics), held=settings.held)
        if config.source_list:
            self.health.topics = topics
        self.active: ActiveModel | None = None
        # The timer's period, when something goes out on it (TimerOutput).
        self.output_period_s = (1.0 / config.rate if publishes_defaults or settings.held
                                else None)

    # Descriptions ---------------------------------------------------------------------------

    def load(self, description: DescriptionText) -> None:
        """Validate `description` and swap it in; the warnings of its reading are logged first.

        DescriptionError or ParameterValueError (naming the parameter) when it is unusable: the
        active model stays.
        """
        self._activate(self._build_model(description, self.config), description,
                       self.config.frame_prefix)

    def load_at_start(self, description: DescriptionText, source: str) -> None:
        """`load` the description a shell starts with, from `source` ('file robot.urdf', ...).

        StartupError, one line naming `source`, when it is unusable.
        """
        try:
            self.load(description)
        except DescriptionError as error:
            raise StartupError(f'invalid robot description ({source}): {error}') from error
        except ParameterValueError as error:
            raise StartupError(f'{error} ({source})') from error

    def description_message(self, data: bytes) -> None:
        """A serialized std_msgs/String from the robot_description topic.

        Loaded, or refused with an ERROR that says why (unreadable bytes too).
        """
        try:
            try:
                text = read_string_message(data)
            except UnsupportedEncapsulation:
                if self._fallback is None:
                    raise
                text = self._fallback.string(data)
        except Exception as error:  # noqa: BLE001 - nothing a sender does may stop the node
            self._log(Level.ERROR, f'ignoring a robot description message: unreadable ({error})')
            return
        self.description_received(text)

    def description_received(self, text: str) -> None:
        """A description from the robot_description topic: loaded, or refused with an ERROR."""
        try:
            self.load(DescriptionText(text))
        except (DescriptionError, ParameterValueError) as error:
            self._log(Level.ERROR, f'ignoring the robot description received on the topic: '
                                   f'{error}')
        except Exception as error:  # noqa: BLE001 - nothing a sender does may stop the node
            self._log(Level.ERROR, f'failed to apply the robot description: {error!r}')

    def _build_model(self, description: DescriptionText, config: NodeConfig) -> RobotModel:
        """Its model; ParameterValueError when zeros or dependent_joints misfit it."""
        return self.settings.model(
            description.parse(), use_smallest_joint_limits=config.use_smallest_joint_limits)

    def _activate(self, model: RobotModel, description: DescriptionText,
                  frame_prefix: str) -> None:
        """Swap in a model: one assignment, so no message ever sees half of a change."""
        config = self.config
        previous = self.active
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
            model, report=self.health, clock=self._clock, frame_prefix=frame_prefix,
            publish_interval_ns=config.publish_interval_ns,
            ignore_timestamp=config.ignore_timestamp, resolved=resolved,
            on_resolved=self._publish_resolved, on_publication=self._publish_tf)
        self.active = ActiveModel(description, stream, TimerOutput(
            model, self.health, resolved=resolved,
            defaults=config.publish_default_positions or config.publish_joint_states,
            reads_joint_states=self.health.reads_joint_states, held=self.settings.held))
        for warning in model.warnings:
            self._log(Level.WARN, f'robot description: {warning}')
        extensions = describe_extensions(model.extensions)
        if extensions is not None:
            self._log(Level.OK, f'robot description: {extensions}')
        self._log(Level.OK,
                  f"robot '{model.name}': root '{model.root}', "
                  f'{counted(len(model.links), "link")}, '
                  f'{counted(len(model.movable_joints), "moving joint")} '
                  f'({len(model.mimic_joints)} mimic), '
                  f'{counted(len(model.fixed_joints), "fixed joint")}, '
                  f'{counted(len(model.sensors), "sensor")}, '
                  f'{counted(len(model.warnings), "warning")}')
        self._outputs.tf_static(self.active.static_message(*self._clock()))
        if self._outputs.robot_description is not None:
            self._outputs.robot_description(string_message(description.text))

    # Parameters -----------------------------------------------------------------------------

    def reconfigure(self, values: Mapping[str, object], changed: set[str]) -> str | None:
        """Take new parameter values (`values`: every parameter's; `changed`: the names set).

        Returns the reason a change is refused (nothing changes then), None when it is taken:
        a new description or use_smallest_joint_limits rebuilds the model, a new frame_prefix
        republishes /tf_static, a new rate limit applies from the next JointState.
        """
        try:
            config = NodeConfig.from_values({spec.name: values[spec.name]
                                             for spec in PARAMETERS})
        except ParameterValueError as error:
            return str(error)
        if 'robot_description' in changed and not config.robot_description:
            return 'robot_description must not be empty'
        active = self.active
        rebuild = active is not None and (
            'use_smallest_joint_limits' in changed
            or ('robot_description' in changed
                and config.robot_description != active.description.text))
        if rebuild:
            description = (DescriptionText(config.robot_description)
                           if 'robot_description' in changed else active.description)
            try:
                model = self._build_model(description, config)
            except DescriptionError as error:
                return f'invalid robot description: {error}'
            except ParameterValueError as error:
                return str(error)
            self.config = config
            self._activate(model, description, config.frame_prefix)
            return None
        self.config = config
        if active is not None and config.frame_prefix != active.stream.frame_prefix:
            self._activate(active.stream.model, active.description, config.frame_prefix)
        elif active is not None:
            active.stream.limit_rate(config.publish_interval_ns, config.ignore_timestamp)
        return None

    # Joint states ---------------------------------------------------------------------------

    def joint_state(self, topic: str, data: bytes) -> None:
        """A serialized JointState received on `topic`."""
        try:
            active = self.active
            if active is None:
                self.health.received_without_model()
                return
            reader = self._readers.get(topic)
            if reader is None:
                reader = self._readers[topic] = JointStateReader()
            try:
                stamp, names, offset, count, double = reader.locate(data)
            except UnsupportedEncapsulation as unsupported:
                self._joint_state_by_fallback(active, topic, data, unsupported)
                return
            except MalformedMessage as error:
                self.health.received_malformed(str(error))
                return
            # The stream publishes a due state first (_publish_tf), then does the rest.
            active.stream.joint_state_at(names, data, offset, count, double, stamp, topic)
        except Exception as error:  # noqa: BLE001 - nothing a sender does may stop the node
            self.health.internal_error(f'failed to process a JointState: {error!r}')

    def _joint_state_by_fallback(self, active: ActiveModel, topic: str, data: bytes,
                                 unsupported: UnsupportedEncapsulation) -> None:
        """Another encoding (XCDR2, ...): the shell's fallback reads it, slower, or nothing."""
        if self._fallback is None:
            self.health.received_malformed(str(unsupported))
            return
        try:
            stamp, names, positions, velocities, efforts = self._fallback.joint_state(data)
        except Exception as error:  # noqa: BLE001 - a deserializer raises several kinds
            self.health.received_malformed(self._unreadable_by_fallback(unsupported, error))
            return
        self.health.deserialized_by_rclpy(unsupported.encapsulation)
        active.stream.joint_state(tuple(names), positions, stamp, topic, velocities, efforts)

    def _unreadable_by_fallback(self, unsupported: UnsupportedEncapsulation,
                                error: Exception) -> str:
        return (f"{unsupported}, and {self._fallback.name}'s deserializer cannot read it either "
                f'({error})')

    def _publish_tf(self, publication: Publication) -> None:
        # Called by the active stream as soon as a state is due, before anything that does not
        # change what is published: a tf user waits for this message.
        self._outputs.tf(self.active.serialize(publication))

    def multi_dof_joint_state(self, data: bytes) -> None:
        """A serialized MultiDOFJointState (floating and planar joints)."""
        try:
            active = self.active
            if active is None:
                return
            try:
                stamp, names, poses = read_multi_dof_joint_state(data)
            except UnsupportedEncapsulation as unsupported:
                if self._fallback is None:
                    self.health.received_malformed_multi_dof(str(unsupported))
                    return
                try:
                    stamp, names, poses = self._fallback.multi_dof_joint_state(data)
                except Exception as error:  # noqa: BLE001 - a deserializer raises several kinds
                    self.health.received_malformed_multi_dof(
                        self._unreadable_by_fallback(unsupported, error))
                    return
            except MalformedMessage as error:
                self.health.received_malformed_multi_dof(str(error))
                return
            active.stream.multi_dof_joint_state(names, poses, stamp)
        except Exception as error:  # noqa: BLE001 - nothing a sender does may stop the node
            self.health.internal_error(f'failed to process a MultiDOFJointState: {error!r}')

    def _publish_resolved(self, fields: ResolvedFields) -> None:
        # Called by the active stream (or for its defaults): the active model's message.
        self._outputs.joint_states(self.active.serialize_resolved(fields))
        self.health.resolved_published += 1

    # Timers ---------------------------------------------------------------------------------

    def on_output_timer(self) -> bool:
        """What no source sends (TimerOutput): default positions, joints held by zeros.

        False once nothing will go out on the timer again for this model (the shell may stop
        calling); True otherwise.
        """
        active = self.active
        if active is None:
            return True
        timer = active.timer
        if timer.finished:  # joint states drive everything now
            return False
        now = self._clock()
        publication = timer.publication(now)
        if publication is not None:
            self._outputs.tf(active.serialize(publication))
        resolved = timer.resolved_fields(now)
        if resolved is not None:
            self._publish_resolved(resolved)
        return True

    def on_diagnostics_timer(self) -> None:
        """Log what started or ended in the last period and publish its status."""
        active = self.active
        if active is not None:
            active.stream.check_held()  # the period's states, all checked
        assessment = self.health.assess()
        for line in assessment.log:
            self._log(line.level, line.text, line.kind)
        self._outputs.diagnostics(diagnostic_array(
            self._clock(), level=int(assessment.level), name=status_name(self.node_name),
            message=assessment.message,
            hardware_id=active.stream.model.name if active else '', values=assessment.values))
