"""The part of a run of urdf_state_publisher_bag that computes: the node's engine fed a recording.

A BagFeed reads the recording in log-time order with the bag's log time as the engine's clock,
hands each message to what its topic's role (recorded.routing) asks, writes what the engine
publishes at the log time of the message that made it publish, and says what the node would
have said: its log, condensed (each condition shown once, then counted), and the findings of
the run's summary. It writes through the output recorded.run opened; where a writer process copies
the recording (RunOptions.writer_process), it reads only the topics it computes from or
changes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
import sys
import time
from typing import Any, TextIO

from urdf_state_publisher.description import read_description_file
from urdf_state_publisher.description.messages import listing
from urdf_state_publisher.engine.health import Level, NO_MATCH, RATE_LIMIT, UNKNOWN
from urdf_state_publisher.engine.joint_settings import JointSettings
from urdf_state_publisher.engine.parameters import ParameterValueError
from urdf_state_publisher.engine.state_engine import (
    configured_description,
    DIAGNOSTICS_PERIOD_S,
    Outputs,
    StateEngine,
)
from urdf_state_publisher.engine.unknown_parameters import unknown_parameters
from urdf_state_publisher.errors import DescriptionError, StartupError
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.recorded.frames import published_children, sort_recorded
from urdf_state_publisher.recorded.output import BagOutputError
from urdf_state_publisher.recorded.plan import (
    BagError,
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNFIT,
    Finding,
    NameTally,
    RunPlan,
    RunSummary,
)
from urdf_state_publisher.recorded.routing import Role
from urdf_state_publisher.wire.cdr import MalformedMessage, read_string_message
from urdf_state_publisher.wire.diagnostics import (
    diagnostic_statuses,
    is_nodes_status,
    read_diagnostic_array,
)
from urdf_state_publisher.wire.tf import read_tf_message, tf_message

__all__ = ['BagFeed']

BILLION = 1_000_000_000
PROGRESS_PERIOD_S = 0.25
# A condition the status judges from the names the JointStates gave, dated by their messages:
# that no name is a joint comes with the first JointState, not the next status a second later.
_NAMES_OF = {NO_MATCH: UNKNOWN}
# The kind of the findings of a parameter given that is a near miss of one the node reads.
UNKNOWN_PARAMETER = 'unknown parameter'


class BagFeed:
    """The engine fed a recording, by a RunPlan; what it publishes written to `writer`."""

    def __init__(self, plan: RunPlan, writer: Any):
        self.plan, self.options, self.input = plan, plan.options, plan.input
        self.names = names = plan.names
        self.writer = writer
        # The recording copied by the writer process, not here.
        self.copied_elsewhere = plan.options.writer_process
        self.err: TextIO = sys.stderr
        self.terminal = self.options.live and self.err.isatty()
        self.start_ns = self.now_ns = self.input.start_ns
        self.end_ns = self.input.end_ns
        # Each condition logged: (level, kind or text) -> [level, first text, first ns, count].
        self.findings: dict[tuple[str, str], list] = {}
        self.suppressed = 0  # log lines of conditions already shown, not printed
        self.written: dict[str, int] = {}
        self.replaced_transforms = self.kept_transforms = 0
        # Recorded messages that what the run writes replaces, per topic.
        self.replaced_messages: dict[str, int] = {}
        self.read = 0
        self.final_assessment = False  # the last period's: logged, not written
        # Why the output could not be written, where the engine took the error for one of its
        # own and went on (a node keeps running whatever it is handed): the run stops there.
        self.output_failure: BagOutputError | None = None
        self._children: tuple[object, frozenset[str]] = (None, frozenset())
        # The frames of the descriptions recorded where the run writes its own (read in run()).
        self.replaced_descriptions_frames: frozenset[str] = frozenset()
        self.out = {topic: writer.handles[k] for topic, k in plan.ours.items()}
        config = plan.config
        try:
            settings = JointSettings.from_parameters(plan.parameters, config)
        except ParameterValueError as error:
            raise BagError(str(error)) from None
        # Warned about at start, as the node warns: findings, which --strict fails on.
        for line in unknown_parameters(plan.parameters).warnings():
            self._log(Level.WARN, line, UNKNOWN_PARAMETER, key=line)
        try:
            if self.options.description:
                path, *xacro_args = self.options.description
                self.description = read_description_file(path, xacro_args), f'file {path}'
            else:
                self.description = configured_description(config)
        except DescriptionError as error:
            raise BagError(str(error)) from None
        self.engine = StateEngine(
            config, settings, node_name=plan.ros.node_name, topics=names.sources,
            outputs=Outputs(
                tf=self._writer(names.tf), tf_static=self._writer(names.tf_static),
                joint_states=(self._writer(names.resolved) if names.resolved is not None
                              else None),
                # Given here, the description is published as the node publishes its own; read
                # from the bag, the recorded one stays.
                robot_description=(self._writer(names.description)
                                   if self.description is not None else None),
                diagnostics=self._writer(names.diagnostics), log=self._log),
            clock=lambda: divmod(self.now_ns, BILLION), monotonic=lambda: self.now_ns / BILLION)

    # The run --------------------------------------------------------------------------------

    def run(self) -> None:
        """Feed the engine the whole recording, and write what it publishes."""
        engine, names = self.engine, self.names
        if self.description is not None:
            try:
                engine.load_at_start(*self.description)
            except StartupError as error:
                raise BagError(str(error)) from None
            self.replaced_descriptions_frames = self._replaced_descriptions_frames()
        elif names.description not in {t.topic for t in self.input.topics}:
            raise BagError(
                f'no robot description: {self.plan.input_path} has no {names.description} '
                'topic; give --description FILE (a .urdf or .xacro), or robot_description or '
                'description_file after --ros-args -p')
        periods = [[round(DIAGNOSTICS_PERIOD_S * BILLION), engine.on_diagnostics_timer]]
        if engine.output_period_s is not None:
            periods.append([round(engine.output_period_s * BILLION), self._output_tick])
        next_due = [self.start_ns + period for period, _ in periods]

        def run_timers(until_ns: int) -> int:
            """Each timer due at or before `until_ns`, in time order; when the next is due."""
            tick = min(next_due)
            while tick <= until_ns:
                k = next_due.index(tick)
                self.now_ns = tick
                periods[k][1]()
                next_due[k] += periods[k][0]
                tick = min(next_due)
            return tick

        tick = min(next_due)
        handlers = self._handlers()
        started = time.monotonic()
        last_progress = started - PROGRESS_PERIOD_S  # the first line at once, then each period
        total_ns = max(self.end_ns - self.start_ns, 1)
        read = 0
        # The topics copied by a writer process are not read here.
        topics = None if not self.copied_elsewhere else [
            key for key, role in self.plan.roles.items() if role is not Role.COPY]
        # Per message, as little as can be: the timers when one is due, the connection's
        # handler, a progress line every 256 messages on a terminal.
        for topic_id, log_ns, raw in self.input.messages(topics):
            if log_ns >= tick:
                tick = run_timers(log_ns)
            self.now_ns = log_ns
            handlers[topic_id](raw)
            if self.output_failure is not None:
                raise self.output_failure
            read += 1
            if not read & 255 and self.terminal:
                now = time.monotonic()
                if now - last_progress >= PROGRESS_PERIOD_S:
                    last_progress = now
                    self._progress(read, log_ns - self.start_ns, total_ns, now - started)
        # The timers run to the recording's last message, whichever topic it is on (the end
        # time is one past it): those not read here count too.
        run_timers(self.end_ns - 1)
        if self.output_failure is not None:
            raise self.output_failure
        self.read = read
        if self.terminal:
            self.err.write('\r\x1b[K')
        # What the node would have reported of the last period: logged, not published.
        self.final_assessment = True
        engine.on_diagnostics_timer()
        if self.suppressed and self.options.live:
            self._say('INFO', f'{self.suppressed:,} more log lines of conditions shown above not '
                      'printed; the findings below count them', self.now_ns)

    def _handlers(self) -> dict[int, Callable[[bytes], None]]:
        """What each recorded topic's messages go to, by its role: the engine, the output."""
        engine, names = self.engine, self.names
        write = None if self.copied_elsewhere else self.writer.write
        handlers = {}
        for recorded in self.input.topics:
            topic, key = recorded.topic, recorded.id
            role = self.plan.roles[key]
            copy = (None if write is None or role not in (Role.COPY, Role.FEED)
                    else self.writer.handles[self.plan.copies[key]])
            if role is Role.TRANSFORMS:
                handlers[key] = self._transforms_writer(topic)
            elif role is Role.DIAGNOSTICS:  # other nodes': kept, beside ours
                handlers[key] = self._diagnostics_writer(topic)
            elif role is Role.REPLACED:  # a topic this run writes itself (robot_description)
                handlers[key] = partial(self._replaced, topic)
            elif role is Role.COPY:
                handlers[key] = lambda data, copy=copy: write(copy, self.now_ns, data)
            else:
                fed = (partial(engine.joint_state, topic) if topic in names.sources
                       else engine.multi_dof_joint_state if topic == names.multi_dof
                       else engine.description_message)
                handlers[key] = fed if copy is None else self._both(fed, write, copy)
        return handlers

    def _both(self, engine_call: Callable[[bytes], None], write: Callable, copy
              ) -> Callable[[bytes], None]:
        """A handler that hands a message to the engine, then copies it."""
        def handle(data: bytes) -> None:
            engine_call(data)
            write(copy, self.now_ns, data)
        return handle

    def _replaced(self, topic: str, data: bytes = b'') -> None:
        self.replaced_messages[topic] = self.replaced_messages.get(topic, 0) + 1

    def _output_tick(self) -> None:
        self.engine.on_output_timer()

    # Output ---------------------------------------------------------------------------------

    def _writer(self, topic: str) -> Callable[[bytes], None]:
        """What writes a message the engine publishes on `topic`, at the current log time."""
        def write(data: bytes) -> None:
            if self.final_assessment:
                return
            try:
                self.writer.write(self.out[topic], self.now_ns, data)
            except BagOutputError as failure:
                self.output_failure = failure
                raise
            self.written[topic] = self.written.get(topic, 0) + 1
        return write

    def _transforms_writer(self, topic: str) -> Callable[[bytes], None]:
        """The handler of recorded /tf or /tf_static: what is not this robot's, kept."""
        def handle(data: bytes) -> None:
            kept = self._recorded_transforms(data)
            if kept is not None:
                self.writer.write(self.out[topic], self.now_ns, kept)
        return handle

    def _diagnostics_writer(self, topic: str) -> Callable[[bytes], None]:
        """The handler of recorded /diagnostics: the statuses of other nodes, kept.

        The node's own status, recorded (the output of an earlier run, processed again, or the
        node's live status), is replaced by the one the run computes: one status a second under
        its name, never two. Recognised by what it holds (wire.diagnostics.is_nodes_status), not
        by a mark of the run's: it is so whichever program last wrote the bag (ros2 bag convert,
        a Humble output, whose metadata keeps no custom data) and under any node name.
        """
        def handle(data: bytes) -> None:
            try:
                stamp, frame_id, statuses = read_diagnostic_array(data)
            except MalformedMessage:
                statuses = None  # not ours to judge: kept as recorded
            kept = statuses if statuses is None else [
                status for status in statuses if not is_nodes_status(status)]
            if kept is None or len(kept) == len(statuses):
                self.writer.write(self.out[topic], self.now_ns, data)
                return
            self._replaced(topic)
            if kept:
                self.writer.write(self.out[topic], self.now_ns,
                                  diagnostic_statuses(stamp, frame_id, kept))
        return handle

    def _recorded_transforms(self, data: bytes) -> bytes | None:
        """A recorded TFMessage without the transforms the active description publishes."""
        children = self._published_children()
        if not children:
            return data
        try:
            transforms = read_tf_message(data)
        except MalformedMessage:
            return data  # not ours to judge: kept as recorded
        kept, replaced = sort_recorded(transforms, children)
        self.replaced_transforms += replaced
        self.kept_transforms += len(kept)
        if kept == transforms:
            return data
        return tf_message(kept) if kept else None

    def _published_children(self) -> frozenset[str]:
        """The child frames of the robot's transforms, which the computed ones replace.

        Those the active description publishes, and those of the descriptions the recording
        holds where the run writes its own (recorded.frames).
        """
        active = self.engine.active
        if active is None:
            return frozenset()
        if self._children[0] is not active:
            stream = active.stream
            self._children = (active, published_children(stream.model, stream.frame_prefix)
                              | self.replaced_descriptions_frames)
        return self._children[1]

    def _replaced_descriptions_frames(self) -> frozenset[str]:
        """The frames published by each description recorded on the topic the run writes.

        Read before the run, so that a transform recorded before its description (both at the
        first log time, as an earlier run writes them) is judged by it too. A recorded
        description that cannot be read is the engine's to report, and names no frame here.
        """
        recorded = [t.id for t in self.input.topics if t.topic == self.names.description
                    and self.plan.roles[t.id] is Role.REPLACED]
        frames: set[str] = set()
        for _, _, data in self.input.messages(recorded):
            try:
                model = RobotModel.from_urdf(read_string_message(data))
            except Exception:  # noqa: BLE001, S112 - whatever a recorded text holds
                continue
            frames |= published_children(model, self.plan.config.frame_prefix)
        return frozenset(frames)

    # What it says ---------------------------------------------------------------------------

    def _log(self, level: Level, text: str, kind: str = '', key: str = '') -> None:
        """A line of the node's log: shown the first time its condition comes, then counted.

        A condition is its kind's, or its `key`'s where one kind has several (each misspelt
        parameter), or its text's.
        """
        name = {Level.OK: 'INFO', Level.WARN: 'WARN', Level.ERROR: 'ERROR'}[level]
        key = (name, key or kind or text)
        finding = self.findings.get(key)
        if finding is None:
            first_ns = self._first_message_ns(kind)
            self.findings[key] = [name, text, first_ns, 1, kind]
            self._say(name, text, first_ns)
        else:
            finding[3] += 1
            self.suppressed += 1

    def _first_message_ns(self, kind: str) -> int:
        """When a condition came: its first message's log time; else (time brought it) now.

        The node says a condition of messages at its next status, up to a second after the
        message that had it: the log line and the summary both give that message's time.
        """
        # A misspelt parameter is said before the engine exists, at the recording's start.
        tallied = self.engine.health.event_tallies().get(_NAMES_OF.get(kind, kind)) \
            if kind and kind != UNKNOWN_PARAMETER else None
        if not tallied:
            return self.now_ns
        return min(round(t.first * BILLION) for t in tallied.values())

    def _say(self, level: str, text: str, at_ns: int) -> None:
        if not self.options.live:
            return
        at = (at_ns - self.start_ns) / BILLION
        prefix = '\r\x1b[K' if self.terminal else ''
        self.err.write(f'{prefix}[{level}] [bag time {at:.3f} s] {text}\n')

    def _progress(self, read: int, done_ns: int, total_ns: int, wall_s: float) -> None:
        speed = done_ns / BILLION / max(wall_s, 1e-9)
        left = (total_ns - done_ns) / BILLION / max(speed, 1e-9)
        self.err.write(f'\r\x1b[K{read:,} messages, {done_ns / BILLION:.1f} of '
                       f'{total_ns / BILLION:.1f} s of bag ({100 * done_ns / total_ns:.0f} %), '
                       f'{speed:.0f}x real time, {left:.0f} s left')
        self.err.flush()

    def _bag_time(self, seconds: float) -> float:
        """Bag time of a time the health's clock gave, to the microsecond it is exact to.

        That clock's seconds are the log time's as a float, whose last bits at an epoch's
        magnitude (a few tenths of a microsecond) are noise, not the recording's.
        """
        return round((seconds * BILLION - self.start_ns) / BILLION, 6)

    def summary(self, output: Path, copied: dict[int, int], elapsed: float) -> RunSummary:
        """The run's summary.

        `copied`: the messages of each recorded topic a writer process copied; `elapsed`: the
        run's seconds, from its plan to its output closed.
        """
        health = self.engine.health
        tallies = health.event_tallies()
        findings = []
        for name, text, first_ns, count, kind in self.findings.values():
            if name == 'INFO':
                continue
            tallied = tallies.get(_NAMES_OF.get(kind, kind))
            if tallied is not None:  # an event's: when each name came, at its messages' times
                names = tuple(NameTally(n, self._bag_time(t.first), self._bag_time(t.last),
                                        t.count) for n, t in tallied.items())
                findings.append(Finding(name, text, min(n.first for n in names) if names else
                                        (first_ns - self.start_ns) / BILLION, count, names,
                                        kind))
            else:
                findings.append(Finding(name, text, (first_ns - self.start_ns) / BILLION,
                                        count, (), kind))
        unfit, never = None, ()
        model = self.engine.active.stream.model if self.engine.active is not None else None
        if model is None:
            unfit = (f'no robot description reached the run: {self.names.description} has no '
                     'message in the recording; give --description FILE')
        elif self.names.sources and model.independent_joints:
            never = health.never_received()
            if not self.written.get(self.names.tf):
                unfit = (f"the recording names no moving joint of robot '{model.name}', so no "
                         '/tf was computed; the findings say what it names')
            elif never:
                unfit = (f"the recording never names these moving joints of robot "
                         f"'{model.name}': {listing(never)}; their frames stay still on /tf")
        status = (EXIT_UNFIT if unfit else EXIT_FINDINGS if self.options.strict and findings
                  else EXIT_OK)
        # Each message read once, here or by the writer process (a FEED topic's by both).
        messages = self.read + sum(count for key, count in copied.items()
                                   if self.plan.roles[key] is Role.COPY)
        return RunSummary(
            input=str(self.plan.input_path), output=str(output), status=status, error=None,
            unfit=unfit, messages=messages, bag_seconds=(self.end_ns - self.start_ns) / BILLION,
            elapsed=elapsed, written=dict(sorted(self.written.items())),
            replaced_transforms=self.replaced_transforms,
            kept_transforms=self.kept_transforms,
            replaced_messages=dict(sorted(self.replaced_messages.items())),
            findings=tuple(findings), joint_states=health.received,
            rate_limited=health.dropped.get(RATE_LIMIT, 0), never_named=never,
            publish_frequency=self.plan.config.publish_frequency)


