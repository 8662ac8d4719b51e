"""One run of urdf_state_publisher_bag: a plain function call, paths and settings in, a summary.

`run_bag(input, output, options)` reads one recording, feeds the node's engine its messages in
log-time order with the bag's log time as its clock, and writes the output bag (see bag.py for
what it holds). It shares nothing with another run, so that runs can go to a pool of processes
(bag.py's batch) or to a distributed engine that calls the same function elsewhere. It raises
only KeyboardInterrupt; everything else is in the summary's status:

- EXIT_OK (0): the output was written and /tf computed for the recording;
- EXIT_FAILED (1): bad input or an error, nothing written (`error` says why, in one line);
- EXIT_UNFIT (2): written, but the description and the recording do not fit (`unfit` says
  which joints): no /tf at all, or moving joints the recording never names;
- EXIT_FINDINGS (3): written and fitting, but the node would have warned (with `strict`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
import os
from pathlib import Path
import shutil
import sys
import time
from typing import Any, TextIO

from urdf_state_publisher import qos
from urdf_state_publisher.bag_input import BagInputError, open_bag
from urdf_state_publisher.bag_output import (
    open_writer,
    OUTPUT_TYPES,
    rosbag_qos,
    write_for_distro,
)
from urdf_state_publisher.cdr import MalformedMessage
from urdf_state_publisher.description import read_description_file
from urdf_state_publisher.description.messages import listing
from urdf_state_publisher.engine import (
    configured_description,
    DIAGNOSTICS_PERIOD_S,
    Outputs,
    StateEngine,
)
from urdf_state_publisher.errors import DescriptionError, StartupError
from urdf_state_publisher.health import Level
from urdf_state_publisher.joint_settings import JointSettings
from urdf_state_publisher.parameters import NodeConfig, ParameterValueError
from urdf_state_publisher.recorded_frames import sort_recorded
from urdf_state_publisher.ros_arguments import parse_ros_arguments, RosArgumentsError
from urdf_state_publisher.source_topics import check_no_feedback, source_topics
from urdf_state_publisher.tf_wire import read_tf_message, tf_message
from urdf_state_publisher.unknown_parameters import unknown_parameters
from urdf_state_publisher.writer_process import WriterProcess

__all__ = ['BagError', 'check_paths', 'EXIT_FAILED', 'EXIT_FINDINGS', 'EXIT_OK', 'EXIT_UNFIT',
           'Finding', 'NameTally', 'run_bag', 'RunOptions', 'RunSummary']

EXIT_OK, EXIT_FAILED, EXIT_UNFIT, EXIT_FINDINGS = 0, 1, 2, 3
DEFAULT_NODE_NAME = 'urdf_state_publisher'
BILLION = 1_000_000_000
PROGRESS_PERIOD_S = 0.25
TF_TYPE = 'tf2_msgs/msg/TFMessage'
JOINT_STATE_TYPE = 'sensor_msgs/msg/JointState'


class BagError(Exception):
    """Something about the input, the output or the arguments: one line for the user."""


@dataclass(frozen=True)
class RunOptions:
    """What a run is asked: the same for every run of a batch."""

    description: tuple[str, ...] = ()  # FILE, then its xacro arguments NAME:=VALUE
    overwrite: bool = False
    storage: str | None = None  # 'mcap' or 'sqlite3'; None: the input's
    distro: str | None = None  # None: the input's
    strict: bool = False  # the node's warnings fail the run (EXIT_FINDINGS)
    ros_args: tuple[str, ...] = ()
    live: bool = True  # the node's log and a progress line on stderr, as they come
    # The output written by a process of its own (writer_process.py): for a run with a core
    # to spare, as a lone run of the command has.
    writer_process: bool = False


@dataclass(frozen=True)
class NameTally:
    """A name's part in a finding: bag time of its first and last message, how many."""

    name: str
    first: float
    last: float
    count: int


@dataclass(frozen=True)
class Finding:
    """A condition the node would have reported, from the bag time it started.

    `count`: how many times it was logged (started again, or named more). `names`, for a
    condition of messages (clamped, unknown, NaN, ...): each name with the bag time of the first
    and last message it was in, and in how many.
    """

    level: str
    text: str
    first: float
    count: int
    names: tuple[NameTally, ...]


@dataclass(frozen=True)
class RunSummary:
    """What one run did: plain values, for a table, a script or another process."""

    input: str
    output: str | None
    status: int
    error: str | None = None
    unfit: str | None = None
    messages: int = 0
    bag_seconds: float = 0.0
    elapsed: float = 0.0
    written: dict[str, int] | None = None
    replaced_transforms: int = 0
    kept_transforms: int = 0
    replaced_messages: int = 0
    findings: tuple[Finding, ...] = ()


def run_bag(input_path: Path, output: Path, options: RunOptions) -> RunSummary:
    """Process one recording into `output`; the summary says how it went (module docstring)."""
    try:
        return BagRun(Path(input_path), Path(output), options).run()
    except (BagError, BagInputError) as error:
        # One line, whatever a library's message holds (YAML errors quote the text).
        return RunSummary(input=str(input_path), output=None, status=EXIT_FAILED,
                          error=' '.join(str(error).split()))


def check_paths(input_path: Path, output: Path, overwrite: bool) -> None:
    """Refuse an output that is the input, holds it or is inside it, whatever --overwrite says.

    Judged on resolved paths: symlinks and '..' followed.
    """
    source, target = input_path.resolve(), output.resolve()
    if source == target or source.is_relative_to(target) or target.is_relative_to(source):
        where = ('is the input' if source == target else 'holds the input'
                 if source.is_relative_to(target) else 'is inside the input')
        raise BagError(f'{output} {where} ({source}): give an output outside the input; the '
                       'input is never written to')
    if output.exists() and not overwrite:
        raise BagError(f'{output} exists: give --overwrite to replace it')


class BagRun:
    """One run of the command: the input read, the engine fed, the output written."""

    def __init__(self, input_path: Path, output: Path, options: RunOptions):
        self.input_path, self.output, self.options = input_path, output, options
        self.err: TextIO = sys.stderr
        self.terminal = options.live and self.err.isatty()
        self.start_ns = self.now_ns = 0
        check_paths(input_path, output, options.overwrite)
        try:
            self.ros = parse_ros_arguments(list(options.ros_args), DEFAULT_NODE_NAME)
            given = self.ros.parameters()
            config = NodeConfig.from_values(given)
            settings = JointSettings.from_parameters(given, config)
            self.topics = source_topics(config.joint_state_topics, self.ros.resolve_topic)
            self.resolved_topic = self.ros.resolve_topic('joint_states')
            if config.publish_joint_states:
                check_no_feedback(self.topics, self.resolved_topic)
            self.reads_joint_states = bool(self.topics)
            self.multi_dof_topic = self.ros.resolve_topic('multi_dof_joint_states')
            self.description_topic = self.ros.resolve_topic('robot_description')
            self.tf_topic = self.ros.resolve_topic('/tf')
            self.tf_static_topic = self.ros.resolve_topic('/tf_static')
            self.diagnostics_topic = self.ros.resolve_topic('/diagnostics')
        except (RosArgumentsError, ParameterValueError, StartupError) as error:
            raise BagError(str(error)) from None
        unknown = unknown_parameters(given)
        for line in unknown.warnings():
            self._say('WARN', line)
        try:
            self.input = open_bag(input_path)
        except BagInputError as error:
            raise BagError(str(error)) from None
        self._check_inputs(config)
        self.storage = options.storage or self.input.storage
        self.distro = options.distro or self.input.distro

        self.start_ns = self.now_ns = self.input.start_ns
        self.end_ns = self.input.end_ns
        try:
            if options.description:
                path, *xacro_args = options.description
                self.description = read_description_file(path, xacro_args), f'file {path}'
            else:
                self.description = configured_description(config)
        except DescriptionError as error:
            raise BagError(str(error)) from None
        # Each condition logged: (level, kind or text) -> [level, first text, first ns, count].
        self.findings: dict[tuple[str, str], list] = {}
        self.suppressed = 0  # log lines of conditions already shown, not printed
        self.written: dict[str, int] = {}
        self.replaced_transforms = self.kept_transforms = self.replaced_messages = 0
        self.read = 0
        self.elapsed = 0.0
        self.writer: Any = None
        self.final_assessment = False  # the last period's: logged, not written
        self._children: tuple[object, frozenset[str]] = (None, frozenset())
        self.engine = StateEngine(
            config, settings, node_name=self.ros.node_name, topics=self.topics,
            outputs=Outputs(
                tf=self._writer(self.tf_topic), tf_static=self._writer(self.tf_static_topic),
                joint_states=(self._writer(self.resolved_topic) if config.publish_joint_states
                              else None),
                # Given here, the description is published as the node publishes its own; read
                # from the bag, the recorded one stays.
                robot_description=(self._writer(self.description_topic)
                                   if self.description is not None else None),
                diagnostics=self._writer(self.diagnostics_topic), log=self._log),
            clock=lambda: divmod(self.now_ns, BILLION), monotonic=lambda: self.now_ns / BILLION)

    # Inputs ---------------------------------------------------------------------------------

    def _check_inputs(self, config: NodeConfig) -> None:
        """The bag has the joint-state topics read, and keeps its recorded motion."""
        recorded = {t.topic for t in self.input.topics}
        states = sorted(t.topic for t in self.input.topics if t.msgtype == JOINT_STATE_TYPE)
        if config.publish_joint_states and self.resolved_topic in states:
            # The resolved state would replace the recorded motion it is to be computed from.
            raise BagError(
                f'publish_joint_states writes the resolved state on {self.resolved_topic}, '
                'where the recording has its joint states: read them and write it elsewhere, '
                f'with --ros-args -p publish_joint_states:=true -p '
                f'source_list:=[{self.resolved_topic}] -r __ns:=/resolved (the resolved state '
                'then goes on /resolved/joint_states)')
        if not self.topics or recorded & {*self.topics, self.multi_dof_topic}:
            return
        if states:
            listed = ', '.join(states)
            raise BagError(
                f'{self.input_path} has no joint-state topic {", ".join(self.topics)}; its '
                f'JointState topics are {listed}: read them with --ros-args -p '
                f'source_list:=[{listed}]' + (f' (or -r joint_states:={states[0]})'
                                               if len(states) == 1 else ''))
        raise BagError(
            f'{self.input_path} has no joint-state topic {", ".join(self.topics)}, nor any '
            f'topic of JointStates; its topics are {", ".join(sorted(recorded)) or "none"}')

    # The run --------------------------------------------------------------------------------

    def run(self) -> RunSummary:
        output = self.output.resolve()
        staging = output.parent / f'.{output.name}.partial-{os.getpid()}'
        # Folders above OUTPUT that do not exist are made, and go again if the run does not
        # complete.
        made = next((folder for folder in reversed(output.parents) if not folder.exists()), None)
        staging.mkdir(parents=True)
        complete = False
        try:
            self.writer = (WriterProcess if self.options.writer_process else open_writer)(
                staging / output.name, self.distro, self.storage)
            self._connections()
            self._process()
            self.writer.close()
            write_for_distro(staging / output.name, self.distro)
            self.input.close()
            if output.exists():
                shutil.rmtree(output) if output.is_dir() else output.unlink()
            (staging / output.name).rename(output)
            complete = True
        finally:
            if not complete and isinstance(self.writer, WriterProcess):
                self.writer.abort()  # before its files go
            shutil.rmtree(staging if complete or made is None else made, ignore_errors=True)
        return self._summary(output)

    def _process(self) -> None:
        engine = self.engine
        if self.description is not None:
            try:
                engine.load_at_start(*self.description)
            except StartupError as error:
                raise BagError(str(error)) from None
        elif self.description_topic not in {t.topic for t in self.input.topics}:
            raise BagError(
                f'no robot description: {self.input_path} has no {self.description_topic} '
                'topic; give --description FILE (a .urdf or .xacro), or robot_description or '
                'description_file after --ros-args -p')
        periods = [[round(DIAGNOSTICS_PERIOD_S * BILLION), engine.on_diagnostics_timer]]
        if engine.output_period_s is not None:
            periods.append([round(engine.output_period_s * BILLION), self._output_tick])
        next_due = [self.start_ns + period for period, _ in periods]
        tick = min(next_due)
        handlers = self._handlers()
        started = time.monotonic()
        last_progress = started - PROGRESS_PERIOD_S  # the first line at once, then each period
        total_ns = max(self.end_ns - self.start_ns, 1)
        read = 0
        # Per message, as little as can be: the timers when one is due, the connection's
        # handler, a progress line every 256 messages on a terminal.
        for topic_id, log_ns, raw in self.input.messages():
            if log_ns >= tick:
                while tick <= log_ns:
                    k = next_due.index(tick)
                    self.now_ns = tick
                    periods[k][1]()
                    next_due[k] += periods[k][0]
                    tick = min(next_due)
            self.now_ns = log_ns
            handlers[topic_id](raw)
            read += 1
            if not read & 255 and self.terminal:
                now = time.monotonic()
                if now - last_progress >= PROGRESS_PERIOD_S:
                    last_progress = now
                    self._progress(read, log_ns - self.start_ns, total_ns, now - started)
        self.read = read
        self.elapsed = time.monotonic() - started
        if self.terminal:
            self.err.write('\r\x1b[K')
        # What the node would have reported of the last period: logged, not published.
        self.final_assessment = True
        engine.on_diagnostics_timer()
        if self.suppressed and self.options.live:
            self._say('INFO', f'{self.suppressed:,} more log lines of conditions shown above not '
                      'printed; the findings below count them')

    def _handlers(self) -> dict[int, Callable[[bytes], None]]:
        """What each input connection's messages go to: the engine, and the output."""
        engine, write = self.engine, self.writer.write
        handlers = {}
        for recorded in self.input.topics:
            topic, key = recorded.topic, recorded.id
            copy = self.copies.get(key)
            if topic in (self.tf_topic, self.tf_static_topic):
                handlers[key] = self._transforms_writer(topic)
            elif topic == self.diagnostics_topic:  # other nodes' too: kept, beside ours
                handlers[key] = partial(self._write_recorded, topic)
            elif copy is None:  # a topic this run writes itself (robot_description, ...)
                handlers[key] = self._replaced
            elif topic in self.topics:
                handlers[key] = self._both(partial(engine.joint_state, topic), write, copy)
            elif topic == self.multi_dof_topic:
                handlers[key] = self._both(engine.multi_dof_joint_state, write, copy)
            elif topic == self.description_topic:
                handlers[key] = self._both(engine.description_message, write, copy)
            else:
                handlers[key] = lambda data, copy=copy: write(copy, self.now_ns, data)
        return handlers

    def _both(self, engine_call: Callable[[bytes], None], write: Callable, copy
              ) -> Callable[[bytes], None]:
        """A handler that hands a message to the engine, then copies it."""
        def handle(data: bytes) -> None:
            engine_call(data)
            write(copy, self.now_ns, data)
        return handle

    def _write_recorded(self, topic: str, data: bytes) -> None:
        self.writer.write(self.out[topic], self.now_ns, data)

    def _replaced(self, data: bytes) -> None:
        self.replaced_messages += 1

    def _output_tick(self) -> None:
        self.engine.on_output_timer()

    # Output ---------------------------------------------------------------------------------

    def _connections(self) -> None:
        """The output's connections: the node's topics with its QoS, then the input's."""
        ours = {self.tf_topic: (TF_TYPE, qos.TF), self.tf_static_topic: (TF_TYPE, qos.LATCHED),
                self.diagnostics_topic: ('diagnostic_msgs/msg/DiagnosticArray',
                                         qos.DIAGNOSTICS)}
        if self.engine.config.publish_joint_states:
            ours[self.resolved_topic] = ('sensor_msgs/msg/JointState', qos.JOINT_STATES)
        if self.description is not None:
            ours[self.description_topic] = ('std_msgs/msg/String', qos.LATCHED)
        self.out: dict[str, Any] = {
            topic: self.writer.add_connection(
                topic, msgtype, msgdef=OUTPUT_TYPES[msgtype][0], rihs01=OUTPUT_TYPES[msgtype][1],
                offered_qos_profiles=[rosbag_qos(profile)])
            for topic, (msgtype, profile) in ours.items()}
        self.copies: dict[int, Any] = {}
        for recorded in self.input.topics:
            if recorded.topic in ours:
                continue
            msgdef, digest, known = recorded.msgdef, recorded.digest, None
            if not msgdef or not digest:
                known = self.input.typestore
                if recorded.msgtype not in known.types:
                    raise BagError(
                        f'{self.input_path}: topic {recorded.topic} ({recorded.msgtype}) '
                        'is recorded without its message definition, which is needed to copy '
                        'it; record with a newer rosbag2, or leave the topic out of the input')
                msgdef, digest = None, None
            self.copies[recorded.id] = self.writer.add_connection(
                recorded.topic, recorded.msgtype, typestore=known, msgdef=msgdef,
                rihs01=digest, serialization_format='cdr',
                offered_qos_profiles=recorded.offered_qos_profiles)

    def _writer(self, topic: str) -> Callable[[bytes], None]:
        """What writes a message the engine publishes on `topic`, at the current log time."""
        def write(data: bytes) -> None:
            if self.final_assessment:
                return
            self.writer.write(self.out[topic], self.now_ns, data)
            self.written[topic] = self.written.get(topic, 0) + 1
        return write

    def _transforms_writer(self, topic: str) -> Callable[[bytes], None]:
        """The handler of recorded /tf or /tf_static: what is not this robot's, kept."""
        def handle(data: bytes) -> None:
            kept = self._recorded_transforms(data)
            if kept is not None:
                self.writer.write(self.out[topic], self.now_ns, kept)
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
        """The child frames of every transform the active description publishes."""
        active = self.engine.active
        if active is None:
            return frozenset()
        if self._children[0] is not active:
            stream = active.stream
            statics = {stream.frame_prefix + s.child for s in stream.model.static_transforms()}
            self._children = (active, frozenset({child for _, child in stream.frames} | statics))
        return self._children[1]

    # What it says ---------------------------------------------------------------------------

    def _log(self, level: Level, text: str, kind: str = '') -> None:
        """A line of the node's log: shown the first time its condition comes, then counted."""
        name = {Level.OK: 'INFO', Level.WARN: 'WARN', Level.ERROR: 'ERROR'}[level]
        key = (name, kind or text)
        finding = self.findings.get(key)
        if finding is None:
            self.findings[key] = [name, text, self.now_ns, 1, kind]
            self._say(name, text)
        else:
            finding[3] += 1
            self.suppressed += 1

    def _say(self, level: str, text: str) -> None:
        if not self.options.live:
            return
        at = (self.now_ns - self.start_ns) / BILLION
        prefix = '\r\x1b[K' if self.terminal else ''
        self.err.write(f'{prefix}[{level}] [bag time {at:.3f} s] {text}\n')

    def _progress(self, read: int, done_ns: int, total_ns: int, wall_s: float) -> None:
        speed = done_ns / BILLION / max(wall_s, 1e-9)
        left = (total_ns - done_ns) / BILLION / max(speed, 1e-9)
        self.err.write(f'\r\x1b[K{read:,} messages, {done_ns / BILLION:.1f} of '
                       f'{total_ns / BILLION:.1f} s of bag ({100 * done_ns / total_ns:.0f} %), '
                       f'{speed:.0f}x real time, {left:.0f} s left')
        self.err.flush()

    def _summary(self, output: Path) -> RunSummary:
        health = self.engine.health
        tallies = health.event_tallies()
        findings = []
        for name, text, first_ns, count, kind in self.findings.values():
            if name == 'INFO':
                continue
            if kind in tallies:  # an event's: when each name came, at its messages' times
                names = tuple(NameTally(n, (t.first * BILLION - self.start_ns) / BILLION,
                                        (t.last * BILLION - self.start_ns) / BILLION, t.count)
                              for n, t in tallies[kind].items())
                findings.append(Finding(name, text, min(n.first for n in names) if names else
                                        (first_ns - self.start_ns) / BILLION, count, names))
            else:
                findings.append(Finding(name, text, (first_ns - self.start_ns) / BILLION,
                                        count, ()))
        unfit = None
        model = self.engine.active.stream.model if self.engine.active is not None else None
        if model is None:
            unfit = (f'no robot description reached the run: {self.description_topic} has no '
                     'message in the recording; give --description FILE')
        elif self.reads_joint_states and model.independent_joints:
            never = health.never_received()
            if not self.written.get(self.tf_topic):
                unfit = (f"the recording names no moving joint of robot '{model.name}', so no "
                         '/tf was computed; the findings say what it names')
            elif never:
                unfit = (f"the recording never names these moving joints of robot "
                         f"'{model.name}': {listing(never)}; their frames stay still on /tf")
        status = (EXIT_UNFIT if unfit else EXIT_FINDINGS if self.options.strict and findings
                  else EXIT_OK)
        return RunSummary(
            input=str(self.input_path), output=str(output), status=status, error=None,
            unfit=unfit, messages=self.read, bag_seconds=(self.end_ns - self.start_ns) / BILLION,
            elapsed=self.elapsed, written=dict(sorted(self.written.items())),
            replaced_transforms=self.replaced_transforms,
            kept_transforms=self.kept_transforms, replaced_messages=self.replaced_messages,
            findings=tuple(findings))


