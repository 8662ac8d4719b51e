"""urdf_state_publisher_bag: a recorded bag's robot state, as the node would have published it.

    urdf_state_publisher_bag INPUT OUTPUT [--description FILE [NAME:=VALUE ...]] [--overwrite]
        [--storage mcap|sqlite3] [--ros-args -p NAME:=VALUE --params-file FILE -r FROM:=TO ...]

It reads a rosbag2 bag (a directory, sqlite3 or MCAP, or a lone .mcap file) and writes a new
bag: everything in the input, plus what urdf_state_publisher would have published had it run
while the bag was recorded, each message at the log time of the one that made the node publish
it. The work is the node's own engine (engine.py), fed the bag's bytes in log-time order with
the bag's log time as its clock: the /tf messages are the node's, byte for byte. This module
wires it to rosbags (an optional dependency: `pip install rosbags`, imported only when the
command runs, so that it can say so) and decides only what a bag needs and a live graph does not:

- The node's parameters and remaps come from `--ros-args`, as for the node (ros_arguments).
- The description: `--description FILE` (URDF or xacro, with xacro arguments), else the
  parameters' (robot_description, description_file), else the bag's robot_description topic,
  the latest one before each message, a change a reload. Given here, it is written on
  robot_description in place of the recorded one; read from the bag, the recorded one stays.
- /tf and /tf_static of the input: a transform whose child frame the active description
  publishes is dropped (the computed one replaces it), all others are kept as recorded. Both
  topics are written with the node's QoS, /tf_static transient local, so that `ros2 bag play`
  latches it. Recorded /diagnostics (other nodes') are kept beside the node's. The resolved
  joint_states (publish_joint_states) replace recorded ones on that topic. Everything else,
  types this command does not know included, is copied as it is. Remaps apply to the topics the
  node publishes as they do live (`-r /tf:=/robot1/tf`).
- The timers (joint_state_publisher's `rate`, /diagnostics once a second) run on log time from
  the bag's first message.
- It streams: memory does not grow with the bag's length. The output is written under a
  temporary name beside OUTPUT and renamed when complete; an error or Ctrl-C leaves nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from functools import partial
import os
from pathlib import Path
import shutil
import signal
import sys
import time
from typing import Any, NoReturn, TextIO

from urdf_state_publisher import qos
from urdf_state_publisher.bag_input import BagInputError, open_bag
from urdf_state_publisher.bag_output import DISTROS, open_writer, rosbag_qos, write_for_distro
from urdf_state_publisher.cdr import MalformedMessage
from urdf_state_publisher.description import read_description_file
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

__all__ = ['main']

PROGRAM = 'urdf_state_publisher_bag'
DEFAULT_NODE_NAME = 'urdf_state_publisher'
BILLION = 1_000_000_000
PROGRESS_PERIOD_S = 0.25
INSTALL_HINT = ('pip install rosbags; ROS 2 packages do not ship it, its rosdep key is a pip '
                'key')
TF_TYPE = 'tf2_msgs/msg/TFMessage'


class BagError(Exception):
    """Something about the input, the output or the arguments: one line for the user."""


def main(argv: list[str] | None = None) -> int:
    """Run the command: exit status 0 for a complete output bag, 1 for an error.

    Ctrl-C ends the process by SIGINT. After an error or Ctrl-C nothing is left behind.
    """
    argv = sys.argv[1:] if argv is None else argv
    own, ros_args = _split_ros_args(argv)
    args = _parser().parse_args(own)
    try:
        import rosbags  # noqa: F401 - asked for here to say how to install it
    except ImportError:
        print(f'{PROGRAM}: needs the rosbags package: {INSTALL_HINT}', file=sys.stderr)
        return 1
    try:
        return BagRun(args, ros_args).run()
    except (BagError, BagInputError) as error:
        print(f'{PROGRAM}: {error}', file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f'{PROGRAM}: interrupted; no output written', file=sys.stderr, flush=True)
        _end_by_sigint()


def _end_by_sigint() -> NoReturn:
    """End as an interrupted program does: killed by SIGINT, which a shell shows as status 130.

    A shell script that runs this command then stops too; an exit status of 130 would let it
    go on. Python would end so for an uncaught KeyboardInterrupt, and does for a caught one too
    when the interrupt came inside an exec() of source text (rosbags builds its message classes
    and serializers that way): the same end every time is what a script can rely on.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.raise_signal(signal.SIGINT)
    os._exit(130)  # only if this thread blocks SIGINT


def _split_ros_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The command's own arguments, and the --ros-args (up to a `--`; its own go on after)."""
    words = list(argv)
    if '--ros-args' not in words:
        return words, []
    start = words.index('--ros-args')
    end = words.index('--', start) if '--' in words[start:] else len(words)
    return words[:start] + words[end + 1:], words[start + 1:end]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROGRAM, description="A bag's /tf, /tf_static and robot state computed as "
        'urdf_state_publisher would have published them live; everything else copied.',
        epilog="--ros-args ... after the rest: the node's parameters (-p NAME:=VALUE, "
        '--params-file FILE) and remaps (-r FROM:=TO, -r __ns:=/robot, -r __node:=NAME), '
        'as for the node.')
    parser.add_argument('input', type=Path,
                        help='a rosbag2 bag directory or an .mcap file; a ROS 1 .bag file, or a '
                             'folder of the .bag files of a split recording')
    parser.add_argument('output', type=Path, help='the bag directory to write')
    parser.add_argument('--description', nargs='+', metavar=('FILE', 'NAME:=VALUE'),
                        help='the robot description to use (.urdf, or .xacro with its '
                             "arguments) instead of the bag's robot_description")
    parser.add_argument('--overwrite', action='store_true', help='replace OUTPUT if it exists')
    parser.add_argument('--storage', choices=('mcap', 'sqlite3'),
                        help="the output's storage (default: the input's; sqlite3 for ROS 1)")
    parser.add_argument('--distro', choices=DISTROS,
                        help="the distro whose ros2 bag will play the output (default: the "
                             "input's; humble, which every distro plays, for ROS 1)")
    return parser


class BagRun:
    """One run of the command: the input read, the engine fed, the output written."""

    def __init__(self, args: argparse.Namespace, ros_args: list[str]):
        self.args = args
        self.err: TextIO = sys.stderr
        self.terminal = self.err.isatty()
        self.start_ns = self.now_ns = 0
        if args.output.exists() and not args.overwrite:
            raise BagError(f'{args.output} exists: give --overwrite to replace it')
        try:
            self.ros = parse_ros_arguments(ros_args, DEFAULT_NODE_NAME)
            given = self.ros.parameters()
            config = NodeConfig.from_values(given)
            settings = JointSettings.from_parameters(given, config)
            self.topics = source_topics(config.joint_state_topics, self.ros.resolve_topic)
            self.resolved_topic = self.ros.resolve_topic('joint_states')
            if config.publish_joint_states:
                check_no_feedback(self.topics, self.resolved_topic)
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
            self.input = open_bag(args.input)
        except BagInputError as error:
            raise BagError(str(error)) from None
        self._check_inputs()
        self.storage = args.storage or self.input.storage
        self.distro = args.distro or self.input.distro

        self.start_ns = self.now_ns = self.input.start_ns
        self.end_ns = self.input.end_ns
        try:
            if args.description:
                path, *xacro_args = args.description
                self.description = read_description_file(path, xacro_args), f'file {path}'
            else:
                self.description = configured_description(config)
        except DescriptionError as error:
            raise BagError(str(error)) from None
        self.findings: dict[tuple[str, str], list] = {}  # (level, text) -> [first ns, count]
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

    def _check_inputs(self) -> None:
        """The bag has a topic to read joint states from, unless none is configured."""
        recorded = {t.topic for t in self.input.topics}
        if not self.topics or recorded & {*self.topics, self.multi_dof_topic}:
            return
        raise BagError(
            f'{self.args.input} has no joint-state topic {", ".join(self.topics)}; its topics '
            f'are {", ".join(sorted(recorded)) or "none"}: name yours with -r '
            'joint_states:=/robot/joint_states, -r __ns:=/robot or -p source_list:=[...] after '
            '--ros-args')

    # The run --------------------------------------------------------------------------------

    def run(self) -> int:
        output = self.args.output.resolve()
        staging = output.parent / f'.{output.name}.partial-{os.getpid()}'
        # Folders above OUTPUT that do not exist are made, and go again if the run does not
        # complete.
        made = next((folder for folder in reversed(output.parents) if not folder.exists()), None)
        staging.mkdir(parents=True)
        complete = False
        try:
            self.writer = open_writer(staging / output.name, self.distro, self.storage)
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
            shutil.rmtree(staging if complete or made is None else made, ignore_errors=True)
        self._summary(output)
        return 0

    def _process(self) -> None:
        engine = self.engine
        if self.description is not None:
            try:
                engine.load_at_start(*self.description)
            except StartupError as error:
                raise BagError(str(error)) from None
        elif self.description_topic not in {t.topic for t in self.input.topics}:
            raise BagError(
                f'no robot description: {self.args.input} has no {self.description_topic} '
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
        from rosbags.typesys import get_typestore, Stores

        typestore = get_typestore(Stores.ROS2_JAZZY)
        ours = {self.tf_topic: (TF_TYPE, qos.TF), self.tf_static_topic: (TF_TYPE, qos.LATCHED),
                self.diagnostics_topic: ('diagnostic_msgs/msg/DiagnosticArray',
                                         qos.DIAGNOSTICS)}
        if self.engine.config.publish_joint_states:
            ours[self.resolved_topic] = ('sensor_msgs/msg/JointState', qos.JOINT_STATES)
        if self.description is not None:
            ours[self.description_topic] = ('std_msgs/msg/String', qos.LATCHED)
        self.out: dict[str, Any] = {
            topic: self.writer.add_connection(topic, msgtype, typestore=typestore,
                                              offered_qos_profiles=[rosbag_qos(profile)])
            for topic, (msgtype, profile) in ours.items()}
        self.copies: dict[int, Any] = {}
        known = self.input.typestore
        for recorded in self.input.topics:
            if recorded.topic in ours:
                continue
            msgdef, digest = recorded.msgdef, recorded.digest
            if not msgdef or not digest:
                if recorded.msgtype not in known.types:
                    raise BagError(
                        f'{self.args.input}: topic {recorded.topic} ({recorded.msgtype}) '
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

    def _log(self, level, text: str) -> None:
        name = {Level.OK: 'INFO', Level.WARN: 'WARN', Level.ERROR: 'ERROR'}[level]
        self._say(name, text)
        if level != Level.OK:
            finding = self.findings.setdefault((name, text), [self.now_ns, 0])
            finding[1] += 1

    def _say(self, level: str, text: str) -> None:
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

    def _summary(self, output: Path) -> None:
        duration = (self.end_ns - self.start_ns) / BILLION
        speed = duration / max(self.elapsed, 1e-9)
        lines = [
            f'read {self.read:,} messages ({duration:.1f} s of bag) in {self.elapsed:.1f} s, '
            f'{speed:.0f}x real time',
            'wrote ' + ', '.join(f'{topic} {count:,}' for topic, count in
                                 sorted(self.written.items())),
            f'recorded transforms: {self.replaced_transforms:,} replaced (their child frames '
            f"are this description's), {self.kept_transforms:,} kept",
        ]
        if self.replaced_messages:
            lines.append(f'recorded messages replaced by the computed ones: '
                         f'{self.replaced_messages:,} (robot_description, joint_states)')
        if self.findings:
            lines.append('findings (what the node would have reported):')
            for (level, text), (first_ns, count) in self.findings.items():
                at = (first_ns - self.start_ns) / BILLION
                times = f', {count} times' if count > 1 else ''
                lines.append(f'  [{level}] first at {at:.3f} s{times}: {text}')
        else:
            lines.append('findings: none')
        lines.append(f'output: {output}')
        print('\n'.join(lines))


if __name__ == '__main__':
    sys.exit(main())
