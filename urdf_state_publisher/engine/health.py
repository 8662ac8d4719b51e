"""What the node knows about its joint-state inputs, and what it says about them.

A JointStream feeds a JointStateHealth as it handles each message: counters, the problems of
the current period with the names involved, and per source its message count and last receipt.
A source is one list of joint names as the messages carry it on one topic: the node reads raw
bytes and cannot tell publishers apart, but each driver (arm, gripper, wheels) sends its own
list, message after message, on its own topic (source_list) or on a shared one. Once per
period the node calls `assess()`, which judges all that against the clock and returns the
diagnostics level, message and key/values, and the log lines of the conditions that started or
ended since the last assessment. The node only formats and publishes. Nothing here imports
ROS; tests drive it with plain calls and a fake clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
import enum
import time
from typing import NamedTuple

from urdf_state_publisher.description.messages import listing
from urdf_state_publisher.engine.health_names import unknown_names_hint
from urdf_state_publisher.kinematics.model import RobotModel, UpdatePlan
from urdf_state_publisher.kinematics.resolved import ResolvedState
from urdf_state_publisher.wire.diagnostics import ROBOT_KEY

__all__ = [
    'Assessment', 'JointStateHealth', 'Level', 'LogLine', 'Source',
]

# Why input was dropped: the keys of the counts in /diagnostics ('dropped: <reason>').
NO_DESCRIPTION = 'no robot description yet'
RATE_LIMIT = 'rate limit (publish_frequency)'  # a figure, never a problem
LENGTH_MISMATCH = 'names and positions differ in length'
DUPLICATED = 'duplicated joint names'
NOT_SCALAR = 'value for a fixed, floating or planar joint'
NON_FINITE = 'NaN or infinite position'
UNUSABLE_POSE = 'unusable MultiDOFJointState entry'
INTERNAL_ERROR = 'internal error'
MALFORMED = 'malformed JointState bytes'
MALFORMED_MULTI_DOF = 'malformed MultiDOFJointState bytes'
# JointStates in an encoding the node's reader leaves to rclpy's deserializer: a figure (in
# /diagnostics as 'deserialized by rclpy (encapsulation 0007)'), never a problem.
DESERIALIZED_BY_RCLPY = 'deserialized by rclpy'
# Problems that drop nothing. With the ones above, the kinds of `JointStateHealth.events`.
UNKNOWN = 'unknown joint names'
CLAMPED = 'joints clamped'
TIME_BACKWARDS = 'time moved backwards'
ZERO_STAMP = 'zero stamp'
# Read only for the resolved joint_states (publish_joint_states).
DYNAMICS_MISMATCH = 'velocity or effort of the wrong length'
# Conditions judged from the sources and the clock at each assessment.
NO_MODEL = 'no robot description'
WAITING = 'no joint_states yet'
NO_MATCH = 'no joint name matches'
SILENT = 'joint_states stopped'
STALE = 'stale joints'
STOPPED_TOPICS = 'stopped sources'
NEVER_RECEIVED = 'joints never received'
UNHEARD_TOPICS = 'source topics without messages'
# Joints given a value by zeros.<joint> that no source names: passive, a figure, never a problem.
HELD = 'joints held by zeros (named by no source)'

# A source has stopped when it has been silent for longer than STALE_INTERVALS of its own
# typical intervals, and at least STALE_MIN_S: with assessments once a second, a stopped
# 100 Hz source is reported 1 to 2 s after its last message, a 1 Hz one after 5 to 6 s.
STALE_MIN_S = 1.0
STALE_INTERVALS = 5
# Moving joints that no message has named are reported this long after the model is active and
# the first joint state arrived: the sources of one robot start within seconds of each other.
GRACE_S = 5.0
# Waiting for the first joint state, or for a description on the topic, is normal for this long
# (a simulator's bringup takes tens of seconds); after it, it is a problem.
WAIT_S = 30.0
# Names kept per problem and period, and logged per condition while it lasts: a flood of
# random names costs bounded memory and at most this many names in the log.
NAMES_KEPT = 50
MAX_SOURCES = 32  # beyond that, the source heard least recently is forgotten
SOURCES_LISTED = 10  # in /diagnostics, the sources heard most recently
SUMMARY_NAMES = 3  # names in the status message; the values and the log have more


class Level(enum.IntEnum):
    """A diagnostics level, as diagnostic_msgs/DiagnosticStatus numbers them; OK logs as INFO."""

    OK = 0
    WARN = 1
    ERROR = 2


@dataclass(frozen=True)
class LogLine:
    """A line for the node's log: WARN or ERROR when a condition starts, OK (INFO) when it ends.

    `kind`: the condition's, for a log that keeps one line of each (the bag command's); not
    part of what the line says, so not compared.
    """

    level: Level
    text: str
    kind: str = field(default='', compare=False)


class EventTally(NamedTuple):
    """One name's part in one kind of event: when first and last, and in how many messages."""

    first: float
    last: float
    count: int


class Assessment(NamedTuple):
    """One period's /diagnostics status and the log lines of what changed in it."""

    level: Level
    message: str
    values: tuple[tuple[str, str], ...]
    log: tuple[LogLine, ...]


class Source:
    """One list of joint names as messages carry it: the node's proxy for one publisher.

    `count` and `last` are written per message; everything else at creation and assessment.
    """

    __slots__ = ('key', 'topic', 'names', 'multi_dof', 'number', 'plan', 'joints', 'matches',
                 'count', 'last', 'interval', '_mark', 'assessed_count', 'period_count')

    def __init__(self, key: tuple, topic: str, names: tuple[str, ...], multi_dof: bool,
                 number: int, now: float):
        self.key = key
        self.topic = topic  # where its messages arrive ('' when the stream was not told)
        self.names = names
        self.multi_dof = multi_dof
        self.number = number  # in order of first receipt, for the values in /diagnostics
        self.plan: UpdatePlan | None = None  # a JointState source's plan in the current model
        self.joints: tuple[str, ...] = ()  # the model's joints it gives values to
        self.matches = False  # whether any of its names is a joint of the model
        self.count = 0
        self.last = now  # receipt (the health's clock) of its latest message
        self.interval: float | None = None  # typical time between its messages, once known
        self._mark = (1, now)  # (count, receipt) the next interval is measured from
        self.assessed_count = 0  # count at the last assessment
        self.period_count = 0  # messages in the period the last assessment ended

    def stale_after(self) -> float:
        """The silence after which this source counts as stopped."""
        return max(STALE_MIN_S, STALE_INTERVALS * (self.interval or 0.0))

    def measure(self, since: float) -> None:
        """Count the period's messages and update the interval estimate, at an assessment.

        `since` is the time of the previous assessment.
        """
        count, last = self.count, self.last
        self.period_count = count - self.assessed_count
        self.assessed_count = count
        marked_count, marked_time = self._mark
        if count <= marked_count:
            return
        if last - marked_time > self.stale_after() and marked_time < since:
            # It resumed after a stop: the stop is no interval. Its messages of this period
            # came after the last assessment, which bounds their interval from above.
            marked_time = since
        sample = (last - marked_time) / (count - marked_count)
        self.interval = sample if self.interval is None else (self.interval + sample) / 2
        self._mark = (count, last)


@dataclass
class _Finding:
    """A condition that holds in this assessment, with what the status and the log say."""

    kind: str
    level: Level
    summary: str  # in the status message
    what: str  # the log line, before the names
    end: str  # the INFO line when it ends
    names: tuple[str, ...] = ()  # what it is about; the ones not logged yet are logged
    detail: Callable[[Sequence[str]], str] = listing  # the names as the log shows them
    tail: str = ''  # after the names when it starts (a hint)
    end_names: bool = False  # whether the end line names what was logged

    def start_line(self) -> str:
        named = f': {self.detail(self.names)}' if self.names else ''
        return f'{self.what}{named}{self.tail}'


@dataclass
class _Episode:
    """A condition from its start to its end: what was logged of it."""

    logged: dict[str, None]
    end: str
    end_names: bool

    def end_line(self) -> str:
        return f'{self.end}: {listing(list(self.logged))}' if self.end_names else self.end


# Per problem reported by the stream: level, the log line's opening, the end line, the label in
# the status message, and how its names are joined.
_EVENTS: dict[str, tuple[Level, str, str, str, str]] = {
    INTERNAL_ERROR: (Level.ERROR, 'internal error while processing joint states',
                     'joint states processed without internal errors again',
                     'internal error', '; '),
    NON_FINITE: (Level.WARN, 'JointState has NaN or infinite positions (ignored) for',
                 'JointState positions are finite again', 'NaN or infinite positions', ', '),
    CLAMPED: (Level.WARN, 'joint values outside their limits were clamped',
              'joint values are within their limits again', 'joints clamped', ', '),
    DUPLICATED: (Level.WARN, 'JointState names these joints more than once, so their values are '
                 'ambiguous and ignored', 'JointStates name each joint once again',
                 'duplicated joint names', ', '),
    NOT_SCALAR: (Level.WARN, 'JointState gives a value to joints without a single position '
                 '(fixed joints take none; drive floating and planar joints with '
                 'MultiDOFJointState on multi_dof_joint_states); ignored',
                 'JointStates give no value to fixed, floating or planar joints any more',
                 'values for fixed, floating or planar joints', ', '),
    LENGTH_MISMATCH: (Level.WARN, 'JointState names and positions differ in length',
                      'JointStates have as many positions as names again',
                      'names and positions differ in length', '; '),
    DYNAMICS_MISMATCH: (Level.WARN, 'JointState velocity or effort has neither one value per '
                        'name nor none, so joint_states gets NaN for those joints',
                        'JointState velocities and efforts fit their names again',
                        'velocity or effort of the wrong length', '; '),
    MALFORMED: (Level.WARN, 'ignoring a JointState', 'JointState bytes are readable again',
                'malformed JointState bytes', '; '),
    MALFORMED_MULTI_DOF: (Level.WARN, 'ignoring a MultiDOFJointState',
                          'MultiDOFJointState bytes are readable again',
                          'malformed MultiDOFJointState bytes', '; '),
    TIME_BACKWARDS: (Level.WARN, 'joint state time moved backwards (simulation reset, bag loop '
                     'or a restarted source?); publishing these joints again from the new time',
                     'joint state time moves forward again', 'time moved backwards', ', '),
    ZERO_STAMP: (Level.WARN, 'JointStates with a zero stamp are published with the time of '
                 'receipt (stamp joint states at their source); joints',
                 'JointStates are stamped again', 'zero stamps', ', '),
    UNUSABLE_POSE: (Level.WARN, 'MultiDOFJointState entries ignored (not a floating or planar '
                    'joint of the model, a duplicated name, or a non-finite or zero transform)',
                    'MultiDOFJointState entries are usable again',
                    'unusable MultiDOFJointState entries', ', '),
}
# The order of conditions in the status message: the most severe and most telling first.
_ORDER = {kind: k for k, kind in enumerate((
    NO_MODEL, NO_MATCH, INTERNAL_ERROR, WAITING, SILENT, STOPPED_TOPICS, STALE, NEVER_RECEIVED,
    UNHEARD_TOPICS, UNKNOWN,
    NON_FINITE, CLAMPED, DUPLICATED, NOT_SCALAR, LENGTH_MISMATCH, DYNAMICS_MISMATCH, MALFORMED,
    TIME_BACKWARDS, ZERO_STAMP, UNUSABLE_POSE, MALFORMED_MULTI_DOF))}


class JointStateHealth:
    """What the node knows about its joint-state inputs, judged once per period.

    The stream writes the counters, `events` and the sources' `count` and `last` as messages
    arrive (`clock` gives their receipt time); `assess` reads them, ends the period and says what
    holds. It outlives models: the node keeps one and hands it to each JointStream it builds.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic,
                 publishes_defaults: bool = False, reads_joint_states: bool = True,
                 held: frozenset[str] = frozenset()):
        """Start with nothing received.

        `publishes_defaults`: the node publishes the default positions until a JointState
        arrives. `reads_joint_states` False: it reads no JointState topic (no source is
        configured) and publishes the defaults for good. `held`: the joints given a value by
        zeros.<joint>, passive on purpose until a source names them.
        """
        self.clock = clock
        self.publishes_defaults = publishes_defaults
        self.reads_joint_states = reads_joint_states
        self.held = held
        self.model: RobotModel | None = None
        # The topics the node reads JointStates from, when it was given a list (source_list).
        self.topics: tuple[str, ...] = ()
        self.resolved: ResolvedState | None = None  # what joint_states gets, when published
        self.resolved_published = 0
        self.received = 0          # JointStates, since start
        self.period_received = 0   # JointStates, in the current period
        self.last_receipt: float | None = None  # of the last JointState
        self.published = 0         # /tf messages made from joint states
        self.clamped: set[str] = set()  # since the model was activated
        self.unknown: set[str] = set()  # at most NAMES_KEPT; the rest is counted
        self.unknown_overflow = 0
        self.dropped: dict[str, int] = {}
        self.deserialized: dict[str, int] = {}  # by rclpy, per encapsulation ('0007')
        # The problems of the current period, each with the names (or details) involved, in
        # the order met: a dict used as an ordered set.
        self.events: dict[str, dict[str, None]] = {}
        # Every kind of event since start, by name (at most NAMES_KEPT names a kind): its first
        # and last time on the clock, and its count, for a report of a whole recording.
        self.tally: dict[str, dict[str, list]] = {}
        self.joint_states_arrived = False  # a JointState or MultiDOFJointState reached a model
        self.carried: set[str] = set()  # joints of the model that some message has named
        self.sources: dict[tuple, Source] = {}
        # The per-message lookup: a JointState's topic and plan (hashed by identity) to its
        # source.
        self.source_of_plan: dict[tuple[str, UpdatePlan], Source] = {}
        self._sources_made = 0
        self._started = self._activated = self._assessed = clock()
        self._first_arrival: float | None = None
        self._episodes: dict[str, _Episode] = {}
        self._hint: tuple[frozenset[str], RobotModel | None, str] = (frozenset(), None, '')

    # Fed by the stream --------------------------------------------------------------------

    def drop(self, reason: str, count: int = 1) -> None:
        """Count `count` items dropped for `reason`."""
        self.dropped[reason] = self.dropped.get(reason, 0) + count

    def event(self, kind: str, names: Iterable[str] = ()) -> None:
        """Note a problem of kind `kind` in this period, with the names (or details) involved."""
        found = self.events.get(kind)
        if found is None:
            found = self.events[kind] = {}
        tally = self.tally.get(kind)
        if tally is None:
            tally = self.tally[kind] = {}
        now = self.clock()
        for name in names:
            if len(found) < NAMES_KEPT:
                found[name] = None
            record = tally.get(name)
            if record is not None:
                record[1] = now
                record[2] += 1
            elif len(tally) < NAMES_KEPT:
                tally[name] = [now, now, 1]

    def event_tallies(self) -> dict[str, dict[str, EventTally]]:
        """Each kind of event since start: each name's first and last time, and count."""
        return {kind: {name: EventTally(*record) for name, record in names.items()}
                for kind, names in self.tally.items() if names}

    def never_received(self) -> tuple[str, ...]:
        """The moving joints no message has given a value, but those held on purpose."""
        model = self.model
        if model is None:
            return ()
        # Without a JointState topic, single-value joints have their defaults on purpose.
        expected = model.independent_joints if self.reads_joint_states else model.pose_joints
        return tuple(n for n in expected if n not in self.carried and n not in self.held)

    def count_joint_state(self) -> float:
        """Count a JointState received now; returns its receipt time."""
        now = self.clock()
        self.received += 1
        self.period_received += 1
        self.last_receipt = now
        return now

    def received_malformed(self, detail: str) -> None:
        """Count a JointState whose bytes could not be read, and why."""
        self.count_joint_state()
        self.drop(MALFORMED)
        self.event(MALFORMED, (detail,))

    def received_malformed_multi_dof(self, detail: str) -> None:
        """Count a MultiDOFJointState whose bytes could not be read, and why."""
        self.drop(MALFORMED_MULTI_DOF)
        self.event(MALFORMED_MULTI_DOF, (detail,))

    def deserialized_by_rclpy(self, encapsulation: str) -> None:
        """Count a JointState that rclpy's deserializer read for the node's reader."""
        self.deserialized[encapsulation] = self.deserialized.get(encapsulation, 0) + 1

    def received_without_model(self) -> None:
        """Count a JointState that arrived before any robot description."""
        self.count_joint_state()
        self.drop(NO_DESCRIPTION)

    def internal_error(self, detail: str) -> None:
        """Count a message whose processing failed inside the node (a bug), and how."""
        self.drop(INTERNAL_ERROR)
        self.event(INTERNAL_ERROR, (detail,))

    def new_source(self, plan: UpdatePlan, topic: str = '') -> Source:
        """The source of JointStates on `topic` named as `plan` is, met first in this model."""
        key = ('JointState', topic, plan.names)
        source = self.sources.get(key) or self._add_source(key, topic, plan.names,
                                                           multi_dof=False)
        self._describe(source, plan)
        return source

    def multi_dof_source(self, names: Sequence[str]) -> Source:
        """The source of MultiDOFJointStates that name `names`."""
        key = ('MultiDOFJointState', tuple(names))
        source = self.sources.get(key)
        if source is None:
            source = self._add_source(key, '', key[1], multi_dof=True)
            self._describe(source, None)
        return source

    def model_changed(self, model: RobotModel, resolved: ResolvedState | None = None) -> None:
        """Forget what a new model makes stale; sources keep their history under the new one.

        `resolved` is the new model's resolved state, when the node publishes one.
        """
        self.resolved = resolved
        self.unknown = {n for n in self.unknown if not model.has_joint(n)}
        self.unknown_overflow = 0
        self.clamped.clear()
        if model is self.model:  # the same model under another frame prefix
            return
        self.model = model
        self._activated = self.clock()
        self.carried = {n for n in self.carried if model.has_joint(n)}
        self.source_of_plan.clear()
        for source in self.sources.values():
            self._describe(source, None if source.multi_dof else model.plan(source.names))

    def end_period(self) -> None:
        """Start a new period: its count and problems start from nothing."""
        self.period_received = 0
        self.events = {}

    def _add_source(self, key: tuple, topic: str, names: tuple[str, ...], multi_dof: bool
                    ) -> Source:
        if len(self.sources) >= MAX_SOURCES:
            oldest = min(self.sources.values(), key=lambda s: s.last)
            del self.sources[oldest.key]
            if oldest.plan is not None:
                self.source_of_plan.pop((oldest.topic, oldest.plan), None)
        self._sources_made += 1
        source = self.sources[key] = Source(key, topic, names, multi_dof, self._sources_made,
                                            self.clock())
        return source

    def _describe(self, source: Source, plan: UpdatePlan | None) -> None:
        """Set what `source` gives values to in the current model."""
        model = self.model
        if model is None:
            return
        if source.multi_dof:
            pose_joints = set(model.pose_joints)
            source.joints = tuple(dict.fromkeys(n for n in source.names if n in pose_joints))
        else:
            if source.plan is not None and source.plan is not plan:
                # The model made the plan of these names again (its cache is bounded).
                self.source_of_plan.pop((source.topic, source.plan), None)
            source.plan = plan
            source.joints = plan.joints[plan.named_outputs]
            self.source_of_plan[source.topic, plan] = source
        source.matches = any(model.has_joint(n) for n in source.names)
        self.carried.update(source.joints)

    # Judged once per period ---------------------------------------------------------------

    def assess(self, now: float | None = None) -> Assessment:
        """What holds now: the status of the period that ends, and the log lines of changes."""
        now = self.clock() if now is None else now
        elapsed = max(now - self._assessed, 1e-9)
        for source in self.sources.values():
            source.measure(self._assessed)
        findings, facts = self._findings(now)
        findings.sort(key=lambda f: (-f.level, _ORDER[f.kind]))
        log = self._transitions(findings)
        level = max((f.level for f in findings), default=Level.OK)
        message = '; '.join(f.summary for f in findings) or self._quiet_message()
        values = self._values(now, elapsed, facts)
        self._assessed = now
        self.end_period()
        return Assessment(level, message, values, tuple(log))

    def _quiet_message(self) -> str:
        if self.model is None:
            return 'waiting for the robot description'
        if not self.reads_joint_states:
            return 'publishing default positions: no joint-state source is configured'
        if not self.joint_states_arrived:
            if self.publishes_defaults:
                return 'publishing default positions until joint_states arrive'
            return 'waiting for joint_states'
        return 'publishing'

    def _findings(self, now: float) -> tuple[list[_Finding], dict[str, str]]:
        """The conditions that hold, and the values that go with them."""
        findings: list[_Finding] = []
        facts = {NEVER_RECEIVED: '', STALE: '', STOPPED_TOPICS: '', UNHEARD_TOPICS: '',
                 'hint': ''}
        model = self.model
        if model is None:
            if now - self._started > WAIT_S:
                findings.append(_Finding(
                    NO_MODEL, Level.ERROR, 'no robot description',
                    f'no robot description after {WAIT_S:.0f} s: nothing is published',
                    'a robot description is in use'))
        elif not self.joint_states_arrived:
            if not self.publishes_defaults and now - self._activated > WAIT_S:
                findings.append(_Finding(
                    WAITING, Level.WARN, f'no joint_states in {WAIT_S:.0f} s',
                    f'no joint_states received in the {WAIT_S:.0f} s since the robot '
                    'description was loaded: the moving joints have no transform on /tf (is '
                    'the joint-state source running and publishing on joint_states?)',
                    'joint_states are arriving'))
        else:
            if self._first_arrival is None:
                self._first_arrival = now
            findings += self._source_findings(model, now, facts)
        unknown_names = tuple(self.events.get(UNKNOWN, ()))
        no_match = model is not None and self._no_match()
        if unknown_names:
            facts['hint'] = self._prefix_hint(unknown_names)
        if no_match:
            findings.append(_Finding(
                NO_MATCH, Level.ERROR, 'no joint name matches the model',
                f"no name in the JointStates is a joint of robot '{model.name}', so nothing "
                'moves; they name', f"JointStates name joints of robot '{model.name}' again",
                unknown_names, tail=f'. {facts["hint"]}' if facts['hint'] else ''))
        for kind, names in self.events.items():
            names = tuple(names)
            if kind == UNKNOWN:
                if not no_match:
                    findings.append(_Finding(
                        UNKNOWN, Level.WARN, f'unknown joint names: {_short(names)}',
                        f"JointState names joints that robot '{model.name}' does not have "
                        '(ignored)', f"JointStates name only joints of robot '{model.name}' "
                        'again', names, tail=f'. {facts["hint"]}' if facts['hint'] else ''))
                continue
            level, what, end, label, separator = _EVENTS[kind]
            summary = f'{label}: {_short(names, separator)}' if names and separator == ', ' \
                else label
            findings.append(_Finding(kind, level, summary, what, end, names,
                                     detail=lambda items, s=separator: _listed(items, s)))
        return findings, facts

    def _source_findings(self, model: RobotModel, now: float,
                         facts: dict[str, str]) -> list[_Finding]:
        """Joints stale or never received; joint_states stopped altogether."""
        findings = []
        sources = list(self.sources.values())
        streams = [s for s in sources if s.interval is not None]
        if streams and all(now - s.last > s.stale_after() for s in sources):
            silence = now - max(s.last for s in sources)
            findings.append(_Finding(
                SILENT, Level.WARN, f'no joint_states for {silence:.1f} s',
                f'no joint_states for {silence:.1f} s: every source has stopped'
                + (f' ({listing(self.topics)})' if self.topics else ''),
                'joint_states are arriving again'))
        # A joint is stale when the source that updated it last has stopped while another
        # source went on after that.
        latest = max((s.last for s in sources), default=now)

        def stopped_while_others_go_on(source: Source) -> bool:
            limit = source.stale_after()
            return (source.interval is not None and now - source.last > limit
                    and latest > source.last + limit)

        last_from: dict[str, Source] = {}  # joint -> the source that updated it last
        for source in sources:
            for joint in source.joints:
                if joint not in last_from or source.last > last_from[joint].last:
                    last_from[joint] = source
        ages = {joint: now - source.last for joint, source in last_from.items()
                if stopped_while_others_go_on(source)}
        if ages:
            stale = tuple(sorted(ages, key=lambda j: (-ages[j], j)))
            facts[STALE] = _with_ages(stale, ages)
            # With a topic per source (source_list), a topic all of whose sources stopped is
            # named, and its joints are said with it rather than as stale joints.
            stopped = self._stopped_topics(stopped_while_others_go_on, last_from)
            of_stopped = {j for _, joints in stopped.values() for j in joints}
            if stopped:
                facts[STOPPED_TOPICS] = _topics_with_ages(stopped, now)
                findings.append(_Finding(
                    STOPPED_TOPICS, Level.WARN, f'stopped: {_short(list(stopped))}',
                    'joint-state sources stopped while others go on; their joints keep their '
                    'last values', 'joint-state sources publish again', tuple(stopped),
                    detail=lambda topics: _topics_with_ages(
                        {t: stopped[t] for t in topics}, now),
                    end_names=True))
            stale = tuple(j for j in stale if j not in of_stopped)
            if stale:
                findings.append(_Finding(
                    STALE, Level.WARN, f'stale joints: {_short(stale)}',
                    'joint values stopped updating while other joints go on (has their source '
                    'stopped?)', 'joints update again', stale,
                    detail=lambda items: _with_ages(items, ages), end_names=True))
        if now >= max(self._activated, self._first_arrival) + GRACE_S:
            never = self.never_received()
            if never:
                facts[NEVER_RECEIVED] = listing(never)
                findings.append(_Finding(
                    NEVER_RECEIVED, Level.WARN, f'joints never received: {_short(never)}',
                    'no JointState or MultiDOFJointState has given a value to these moving '
                    'joints, so they have no transform on /tf'
                    + (' and their default position on joint_states' if self.resolved else ''),
                    'every moving joint has received a value', never))
            heard = {s.topic for s in sources}
            unheard = tuple(t for t in self.topics if t not in heard)
            if unheard:
                facts[UNHEARD_TOPICS] = listing(unheard)
                findings.append(_Finding(
                    UNHEARD_TOPICS, Level.WARN, f'no message on {_short(unheard)}',
                    'no JointState has arrived on these source_list topics (is their driver '
                    'running, and is the topic name right?)', 'every source_list topic has '
                    'sent a JointState', unheard))
        return findings

    def _stopped_topics(self, stopped: Callable[[Source], bool], last_from: dict[str, Source]
                        ) -> dict[str, tuple[float, tuple[str, ...]]]:
        """The source_list topics all of whose sources are `stopped`.

        Each with its last receipt and the joints whose latest value came from it
        (`last_from`: joint -> the source that updated it last).
        """
        if len(self.topics) < 2:
            return {}
        by_topic: dict[str, list[Source]] = {}
        for source in self.sources.values():
            if not source.multi_dof and source.topic:
                by_topic.setdefault(source.topic, []).append(source)
        return {topic: (max(s.last for s in sources),
                        tuple(j for j, s in last_from.items() if s.topic == topic))
                for topic, sources in by_topic.items() if all(map(stopped, sources))}

    def _no_match(self) -> bool:
        """Whether JointStates arrived in this period and none named a joint of the model."""
        heard = [s for s in self.sources.values()
                 if not s.multi_dof and s.names and s.period_count]
        return bool(heard) and not any(s.matches for s in heard)

    def _prefix_hint(self, names: tuple[str, ...]) -> str:
        """A hint for the unknown `names`; '' for none, which is better than a wrong one.

        A prefix that turns them into joints of the model, else the joints they are near
        misses of. Cached.
        """
        key = frozenset(names)
        if self._hint[0] == key and self._hint[1] is self.model:
            return self._hint[2]
        hint = unknown_names_hint(names[:SUMMARY_NAMES], names, self.model.movable_joints,
                                  self.model.name)
        self._hint = (key, self.model, hint)
        return hint

    def _transitions(self, findings: list[_Finding]) -> list[LogLine]:
        """The log lines of conditions that started, named more, or ended."""
        lines = []
        holding = set()
        for finding in findings:
            holding.add(finding.kind)
            episode = self._episodes.get(finding.kind)
            if episode is None:
                self._episodes[finding.kind] = _Episode(
                    dict.fromkeys(finding.names[:NAMES_KEPT]), finding.end, finding.end_names)
                lines.append(LogLine(finding.level, finding.start_line(), finding.kind))
                continue
            episode.end = finding.end
            room = NAMES_KEPT - len(episode.logged)
            new = [n for n in finding.names if n not in episode.logged][:max(room, 0)]
            if new:
                episode.logged.update(dict.fromkeys(new))
                lines.append(LogLine(finding.level,
                                     f'{finding.what}, now also: {finding.detail(new)}',
                                     finding.kind))
        for kind in [k for k in self._episodes if k not in holding]:
            lines.append(LogLine(Level.OK, self._episodes.pop(kind).end_line(), kind))
        return lines

    def _values(self, now: float, elapsed: float, facts: dict[str, str]
                ) -> tuple[tuple[str, str], ...]:
        model = self.model
        listed = sorted(self.sources.values(), key=lambda s: s.last)[-SOURCES_LISTED:]
        values = [
            (ROBOT_KEY, model.name if model else ''),
            ('joint_states received', str(self.received)),
            ('joint_states rate (Hz)', f'{self.period_received / elapsed:.1f}'),
            ('joint_states age (s)',
             '' if self.last_receipt is None else f'{now - self.last_receipt:.3f}'),
            ('tf messages published', str(self.published)),
            ('sources', str(len(self.sources))),
        ]
        if self.topics:
            values += [('source topics', listing(self.topics)),
                       (UNHEARD_TOPICS, facts[UNHEARD_TOPICS]),
                       (STOPPED_TOPICS, facts[STOPPED_TOPICS])]
        resolved = self.resolved
        if resolved is not None:
            if not self.reads_joint_states:
                output = 'default positions (no source configured)'
            elif self.joint_states_arrived:
                output = 'merged from the sources'
            else:
                output = 'default positions (no joint state yet)'
            defaulted = [n for n in resolved.defaulted() if n not in self.held]
            values += [
                ('joint_states output', output),
                ('joint_states published', str(self.resolved_published)),
                ('joint_states at default position',
                 listing(defaulted) if self.joint_states_arrived else 'all'),
            ]
        if self.held:
            values.append((HELD, listing(sorted(n for n in self.held if n not in self.carried))))
        for source in sorted(listed, key=lambda s: s.number):
            name = f'source {source.number}'
            if source.topic:
                values.append((f'{name} topic', source.topic))
            values += [
                (f'{name} joints', listing(source.joints) if source.matches
                 else f'none of the model ({listing(source.names)})'),
                (f'{name} rate (Hz)', f'{source.period_count / elapsed:.1f}'),
                (f'{name} age (s)', f'{now - source.last:.3f}'),
            ]
        values += [
            (NEVER_RECEIVED, facts[NEVER_RECEIVED]),
            (STALE, facts[STALE]),
            ('joints clamped', ', '.join(sorted(self.clamped))),
            ('unknown joint names', ', '.join(sorted(self.unknown))
             + (f' and {self.unknown_overflow} more' if self.unknown_overflow else '')),
            ('hint', facts['hint']),
        ]
        values += [(f'dropped: {reason}', str(count))
                   for reason, count in sorted(self.dropped.items())]
        values += [(f'{DESERIALIZED_BY_RCLPY} (encapsulation {encapsulation})', str(count))
                   for encapsulation, count in sorted(self.deserialized.items())]
        return tuple(values)


def _listed(items: Sequence[str], separator: str) -> str:
    """Like `listing`, with another separator (for details that hold commas)."""
    items = list(items)
    return listing(items) if separator == ', ' else separator.join(
        items[:10] + ([f'... and {len(items) - 10} more'] if len(items) > 10 else []))


def _short(names: Sequence[str], separator: str = ', ') -> str:
    """A few names for the status message, then how many more."""
    names = list(names)
    rest = len(names) - SUMMARY_NAMES
    shown = separator.join(names[:SUMMARY_NAMES])
    return shown if rest <= 0 else f'{shown} and {rest} more'


def _with_ages(joints: Sequence[str], ages: dict[str, float]) -> str:
    return listing([f'{j} ({ages[j]:.1f} s ago)' for j in joints])


def _topics_with_ages(stopped: dict[str, tuple[float, Sequence[str]]], now: float) -> str:
    """Topics, each with the time since its last message and the joints it leaves behind."""
    return '; '.join(f'{t} ({now - last:.1f} s ago' + (f': {listing(j)})' if j else ')')
                     for t, (last, j) in stopped.items())
