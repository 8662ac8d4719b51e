"""A run of urdf_state_publisher_bag planned from names, before a message is read.

`plan_run` checks the arguments (paths, --ros-args, parameters), opens the recording, gives each
recorded topic its role (recorded.routing) and lists the output's connections: a RunPlan. Here too
are what a run is asked (RunOptions) and what it answers (RunSummary, its exit status). Nothing
here imports numpy or the engine, so that a lone run's writer process (recorded.writer) starts
copying the recording while the run loads them (recorded.feed).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from urdf_state_publisher.engine.parameters import NodeConfig, ParameterValueError
from urdf_state_publisher.engine.ros_arguments import (
    parse_ros_arguments,
    RosArguments,
    RosArgumentsError,
)
from urdf_state_publisher.engine.source_topics import check_no_feedback, source_topics
from urdf_state_publisher.errors import StartupError
from urdf_state_publisher.exit_status import FAILED, FINDINGS, OK, UNFIT
from urdf_state_publisher.recorded.folders import Recording, SplitRecording
from urdf_state_publisher.recorded.input import BagInputError, InputBag, open_bag
from urdf_state_publisher.recorded.output import (
    OUTPUT_TYPES,
    OutputConnection,
    OutputFormat,
    rosbag_qos,
)
from urdf_state_publisher.recorded.routing import our_topics, Role, route, TopicNames
from urdf_state_publisher.recorded.types import check_read_types, copied_definition

__all__ = ['BagError', 'check_paths', 'EXIT_FAILED', 'EXIT_FINDINGS', 'EXIT_OK', 'EXIT_UNFIT',
           'Finding', 'NameTally', 'plan_run', 'RunOptions', 'RunPlan', 'RunSummary']

# A run's statuses are the command's (exit_status), named for what a run answers.
EXIT_OK, EXIT_FAILED, EXIT_UNFIT, EXIT_FINDINGS = OK, FAILED, UNFIT, FINDINGS
DEFAULT_NODE_NAME = 'urdf_state_publisher'
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
    compression: str | None = None  # recorded.output.COMPRESSIONS; None: the input's
    strict: bool = False  # the node's warnings fail the run (EXIT_FINDINGS)
    ros_args: tuple[str, ...] = ()
    live: bool = True  # the node's log and a progress line on stderr, as they come
    # The output written, and the recording copied, by a process of its own
    # (recorded/writer.py): for a run with a core to spare, as a lone run of the command has.
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
    and last message it was in, and in how many. `kind`: the condition's, as the node's health
    names it ('joints clamped'), or 'unknown parameter'; '' for a line of its own (a warning of
    the description).
    """

    level: str
    text: str
    first: float
    count: int
    names: tuple[NameTally, ...]
    kind: str = ''


@dataclass(frozen=True)
class RunSummary:
    """What one run did: plain values, for a table, a script or another process.

    `joint_states`: the JointStates the engine was fed; `rate_limited`: how many of them made
    no /tf because `publish_frequency` (Hz) limits each joint's rate on their stamps; 0 with
    ignore_timestamp, which publishes every one. `never_named`: every moving joint of the
    description that the recording never gives a value (what `unfit` lists the first of).
    """

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
    # The recorded messages that what the run writes replaced, per topic.
    replaced_messages: dict[str, int] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    joint_states: int = 0
    rate_limited: int = 0
    publish_frequency: float = 0.0
    never_named: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunPlan:
    """A run decided from names, before a message is read.

    The output's connections are the run's own topics (`ours`: topic -> index), then the
    recorded topics it copies (`copies`: input id -> index).
    """

    input_path: Recording
    output: Path
    options: RunOptions
    ros: RosArguments
    parameters: dict[str, object]  # given with --ros-args
    config: NodeConfig
    names: TopicNames
    input: InputBag
    roles: dict[int, Role]  # each recorded topic's, by input id
    connections: tuple[OutputConnection, ...]
    ours: dict[str, int]
    copies: dict[int, int]
    output_format: OutputFormat


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


def plan_run(input_path: Recording, output: Path, options: RunOptions) -> RunPlan:
    """The run's plan; BagError (one line) for arguments or a recording it cannot run on."""
    for source in (input_path.pieces if isinstance(input_path, SplitRecording)
                   else (input_path,)):
        check_paths(source, output, options.overwrite)
    try:
        ros = parse_ros_arguments(list(options.ros_args), DEFAULT_NODE_NAME)
        parameters = ros.parameters()
        config = NodeConfig.from_values(parameters)
        sources = source_topics(config.joint_state_topics, ros.resolve_topic)
        resolved = ros.resolve_topic('joint_states')
        if config.publish_joint_states:
            check_no_feedback(sources, resolved)
        names = TopicNames(
            tf=ros.resolve_topic('/tf'), tf_static=ros.resolve_topic('/tf_static'),
            diagnostics=ros.resolve_topic('/diagnostics'),
            description=ros.resolve_topic('robot_description'),
            multi_dof=ros.resolve_topic('multi_dof_joint_states'), sources=sources,
            resolved=resolved if config.publish_joint_states else None,
            description_given=bool(options.description))
    except (RosArgumentsError, ParameterValueError, StartupError) as error:
        raise BagError(str(error)) from None
    try:
        recording = open_bag(input_path)
    except BagInputError as error:
        raise BagError(str(error)) from None
    try:
        _check_inputs(input_path, recording, names, resolved, config.publish_joint_states)
        roles = route({t.id: t.topic for t in recording.topics}, names)
        check_read_types(input_path, recording.topics, roles, names)
        connections = [
            OutputConnection(topic, msgtype, *OUTPUT_TYPES[msgtype], [rosbag_qos(profile)])
            for topic, (msgtype, profile) in our_topics(names).items()]
        ours = {c.topic: k for k, c in enumerate(connections)}
        copies = {}
        for recorded in recording.topics:
            if roles[recorded.id] in (Role.COPY, Role.FEED):
                copies[recorded.id] = len(connections)
                connections.append(OutputConnection(
                    recorded.topic, recorded.msgtype, *copied_definition(recording, recorded),
                    recorded.offered_qos_profiles))
    except BagInputError as error:
        recording.close()
        raise BagError(str(error)) from None
    except BaseException:
        recording.close()
        raise
    if recording.compression == 'file':
        # rosbags decompresses such a recording whole into a temporary folder as it opens it:
        # a writer process reading it too would take that room twice, and the time.
        options = replace(options, writer_process=False)
    return RunPlan(input_path, output, options, ros, parameters, config, names, recording,
                   roles, tuple(connections), ours, copies,
                   OutputFormat(options.distro or recording.distro,
                                options.storage or recording.storage,
                                options.compression or recording.compression))


def _check_inputs(input_path: Recording, recording: InputBag, names: TopicNames, resolved: str,
                  publishes_joint_states: bool) -> None:
    """The bag has the joint-state topics read, and keeps its recorded motion."""
    recorded = {t.topic for t in recording.topics}
    states = sorted(t.topic for t in recording.topics if t.msgtype == JOINT_STATE_TYPE)
    if publishes_joint_states and resolved in states and not recorded & set(names.sources):
        # The resolved state would replace the recorded motion it is to be computed from. Where
        # the motion is read from other recorded topics, what the resolved topic holds is a
        # resolved state computed before (this command's output, processed again): replaced.
        raise BagError(
            f'publish_joint_states writes the resolved state on {resolved}, where the '
            'recording has its joint states: read them and write it elsewhere, with '
            f'--ros-args -p publish_joint_states:=true -p source_list:=[{resolved}] -r '
            '__ns:=/resolved (the resolved state then goes on /resolved/joint_states)')
    if not names.sources or recorded & {*names.sources, names.multi_dof}:
        return
    if states:
        listed = ', '.join(states)
        raise BagError(
            f'{input_path} has no joint-state topic {", ".join(names.sources)}; its '
            f'JointState topics are {listed}: read them with --ros-args -p '
            f'source_list:=[{listed}]' + (f' (or -r joint_states:={states[0]})'
                                           if len(states) == 1 else ''))
    raise BagError(
        f'{input_path} has no joint-state topic {", ".join(names.sources)}, nor any '
        f'topic of JointStates; its topics are {", ".join(sorted(recorded)) or "none"}')
