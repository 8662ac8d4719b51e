"""The joint-state stream: what each JointState or MultiDOFJointState puts on /tf, and why not.

Everything here is decided per message without ROS: rate limiting and time going backwards
(both per joint), the zero-stamp rule, what is dropped and what is reported. The node converts
messages to names and arrays, publishes what a JointStream returns and logs its notices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
import time
from typing import NamedTuple

import numpy as np

from urdf_state_publisher.description.messages import listing
from urdf_state_publisher.geometry import normalized, Pose
from urdf_state_publisher.model import JointUpdate, RobotModel

__all__ = ['JointStream', 'Notice', 'Publication', 'StreamReport', 'UNKNOWN_NAMES_REPORTED']

NEVER_NS = np.iinfo(np.int64).min // 2  # a stamp before any other, with room to add to it
UNKNOWN_NAMES_REPORTED = 50  # by name; beyond that a flood of random names is only counted

# Why input was dropped: the keys of the counts in /diagnostics.
NO_DESCRIPTION = 'no robot description yet'
RATE_LIMIT = 'rate limit (publish_frequency)'
LENGTH_MISMATCH = 'names and positions differ in length'
DUPLICATED = 'duplicated joint names'
NOT_SCALAR = 'value for a fixed, floating or planar joint'
NON_FINITE = 'NaN or infinite position'
UNUSABLE_POSE = 'unusable MultiDOFJointState entry'
INTERNAL_ERROR = 'internal error'
MALFORMED = 'malformed JointState bytes'
# Problems that drop nothing, named in the diagnostics summary of the period they occur in.
UNKNOWN = 'unknown joint names'
CLAMPED = 'joints clamped'


class Notice(NamedTuple):
    """A line for the log.

    `kind` groups notices for throttling; None for a notice the stream already gives only once.
    """

    kind: str | None
    text: str


class Publication(NamedTuple):
    """One /tf message: `rows[k]` is the transform of joint `index[k]`, stamped (sec, nanosec).

    Rows hold translation x, y, z and a unit quaternion x, y, z, w. `key` is hashable and
    cheap to hash; one key always stands for the same `index` of the same JointStream, so a
    cache of serialized messages can be looked up by it.
    """

    key: object
    index: np.ndarray
    sec: int
    nanosec: int
    rows: np.ndarray


class StreamReport:
    """What the stream saw: counts for /diagnostics and notices for the log.

    It outlives models: the node keeps one and hands it to each JointStream it builds.
    Counters are updated in place; `notices` only fills when something is wrong.
    """

    def __init__(self):
        """Start with nothing received."""
        self.received = 0          # JointStates, since start
        self.period_received = 0   # JointStates, since `end_period`
        self.last_receipt: float | None = None  # time.monotonic() of the last JointState
        self.clamped: set[str] = set()
        self.unknown: set[str] = set()
        self.unknown_overflow = 0  # unknown names beyond the ones kept in `unknown`
        self.dropped: dict[str, int] = {}
        self.period_problems: set[str] = set()  # what went wrong since `end_period`
        self.notices: list[Notice] = []
        self.zero_stamp_reported = False
        self.joint_states_arrived = False  # a JointState or MultiDOFJointState reached a model

    def drop(self, reason: str, count: int = 1) -> None:
        """Count `count` items dropped for `reason`."""
        self.dropped[reason] = self.dropped.get(reason, 0) + count
        self.period_problems.add(reason)

    def received_malformed(self) -> None:
        """Count a JointState whose bytes could not be read."""
        self.count_joint_state()
        self.drop(MALFORMED)

    def received_without_model(self) -> None:
        """Count a JointState that arrived before any robot description."""
        self.count_joint_state()
        self.drop(NO_DESCRIPTION)

    def take_notices(self) -> list[Notice]:
        """The notices since the last call, oldest first."""
        notices, self.notices = self.notices, []
        return notices

    def end_period(self) -> None:
        """Start a new diagnostics period."""
        self.period_received = 0
        self.period_problems.clear()

    def model_changed(self, model: RobotModel) -> None:
        """Forget what a new model makes stale: names it has, the joints clamped so far."""
        self.unknown = {n for n in self.unknown if not model.has_joint(n)}
        self.unknown_overflow = 0
        self.clamped.clear()

    def count_joint_state(self) -> None:
        """Count a JointState received now."""
        self.received += 1
        self.period_received += 1
        self.last_receipt = time.monotonic()


class JointStream:
    """Joint states in, publications for /tf out, for one model and frame prefix.

    Single-value joints and floating/planar joints share one index space (`joints`, `frames`):
    the model's scalar joints, then its pose joints. Per joint it keeps the stamp it last
    published (rate limiting) and the latest stamp it received (time going backwards is judged
    per joint, so sources with offset clocks coexist). A reload is a new JointStream.
    """

    def __init__(self, model: RobotModel, *, report: StreamReport,
                 clock: Callable[[], tuple[int, int]], frame_prefix: str = '',
                 publish_interval_ns: int = 50_000_000, ignore_timestamp: bool = False):
        """Start streaming `model`; `clock` gives (sec, nanosec) of now, for zero stamps."""
        self.model = model
        self.report = report
        self.frame_prefix = frame_prefix
        self._clock = clock
        self.joints = model.scalar_joints + model.pose_joints
        self.frames = tuple((frame_prefix + model.joint(n).parent,
                             frame_prefix + model.joint(n).child) for n in self.joints)
        self._pose_index = {n: len(model.scalar_joints) + k
                            for k, n in enumerate(model.pose_joints)}
        self._last_published_ns = np.full(len(self.joints), NEVER_NS)
        self._last_seen_ns = np.full(len(self.joints), NEVER_NS)
        # Bounds of the two arrays: a stamp past them is checked without indexing them.
        self._latest_published_ns = NEVER_NS
        self._latest_seen_ns = NEVER_NS
        self._interval_ns = 0
        self.limit_rate(publish_interval_ns, ignore_timestamp)
        report.model_changed(model)

    def limit_rate(self, publish_interval_ns: int, ignore_timestamp: bool) -> None:
        """Publish a joint at most once per `publish_interval_ns` of stamps, or every time."""
        # Ignoring timestamps is a zero interval: a stamp never precedes the last published
        # one of its joint without a jump back, which clears that joint's limit anyway.
        interval_ns = 0 if ignore_timestamp else publish_interval_ns
        if interval_ns and not self._interval_ns:
            # Without an interval every joint seen was published, and only the stamps seen
            # were kept.
            self._last_published_ns = self._last_seen_ns.copy()
            self._latest_published_ns = self._latest_seen_ns
        self._interval_ns = interval_ns

    # Messages -----------------------------------------------------------------------------

    def joint_state(self, names: Sequence[str], positions: Sequence[float] | np.ndarray,
                    stamp: tuple[int, int]) -> Publication | None:
        """The publication for a JointState: `positions[i]` is the value of `names[i]`."""
        report = self.report
        report.count_joint_state()
        report.joint_states_arrived = True
        if len(names) != len(positions):
            self._report_length_mismatch(names, len(positions))
        update = self.model.update(names, positions)
        plan = update.plan
        if plan.unknown or plan.duplicated or plan.not_scalar or update.non_finite \
                or update.clamped:
            self._report_update(update)
        if not len(update.values):
            return None
        return self._due(plan, plan.joint_index, update.transforms, stamp)

    def multi_dof_joint_state(self, names: Sequence[str], poses: np.ndarray,
                              stamp: tuple[int, int]) -> Publication | None:
        """The publication for a MultiDOFJointState.

        `poses[i]` is the motion of floating or planar joint `names[i]` from its origin:
        translation x, y, z and quaternion x, y, z, w (normalised here).
        """
        self.report.joint_states_arrived = True
        count = min(len(names), len(poses))
        names, poses = names[:count], np.asarray(poses, dtype=float).reshape(-1, 7)[:count]
        index = np.fromiter((self._pose_index.get(n, -1) for n in names), np.intp, count)
        usable = (index >= 0) & np.isfinite(poses).all(axis=1) & poses[:, 3:].any(axis=1)
        if len(set(names)) < count:  # ambiguous, as in a JointState: every copy is dropped
            seen, again = set(), set()
            for name in names:
                (again if name in seen else seen).add(name)
            usable &= np.fromiter((n not in again for n in names), bool, count)
        rows = np.empty((count, 7))
        for k in np.flatnonzero(usable):
            values = poses[k].tolist()
            pose = self.model.joint_pose(names[k], Pose(tuple(values[:3]),
                                                        normalized(tuple(values[3:]))))
            rows[k] = (*pose.translation, *pose.rotation)
        # Finite input can still overflow on the joint's origin.
        usable &= np.isfinite(rows).all(axis=1)
        if not usable.all():
            ignored = [names[k] for k in np.flatnonzero(~usable)]
            self.report.drop(UNUSABLE_POSE, len(ignored))
            self.report.notices.append(Notice('multi_dof_ignored',
                'MultiDOFJointState entries ignored (not a floating or planar joint of the '
                'model, a duplicated name, or a non-finite or zero transform): '
                f'{listing(ignored)}'))
            index, rows = index[usable], rows[usable]
        if not len(index):
            return None
        return self._due(index.tobytes(), index, rows, stamp)

    def default_positions(self, stamp: tuple[int, int]) -> Publication | None:
        """Every movable joint at its default position; None once a joint state arrived."""
        if self.report.joint_states_arrived:
            return None
        key, index, rows = self._defaults
        return Publication(key, index, stamp[0], stamp[1], rows)

    # Time ---------------------------------------------------------------------------------

    def _due(self, key: object, index: np.ndarray, rows: np.ndarray,
             stamp: tuple[int, int]) -> Publication | None:
        """The rows of `index` whose joints are due at `stamp`; remembers what it publishes."""
        sec, nanosec = stamp
        if sec == 0 and nanosec == 0:
            sec, nanosec = self._receipt_stamp()
        stamp_ns = sec * 1_000_000_000 + nanosec
        if stamp_ns >= self._latest_seen_ns:
            self._latest_seen_ns = stamp_ns
        else:
            back = stamp_ns < self._last_seen_ns[index]
            if back.any():
                self.report.notices.append(Notice('time',
                    'joint state time moved backwards (simulation reset, bag loop or a '
                    f'restarted source?) for: {listing([self.joints[i] for i in index[back]])}; '
                    'publishing them again from the new time'))
                self._last_published_ns[index[back]] = NEVER_NS
        self._last_seen_ns[index] = stamp_ns
        if self._interval_ns:
            if stamp_ns < self._latest_published_ns + self._interval_ns:
                due = stamp_ns >= self._last_published_ns[index] + self._interval_ns
                if not due.all():
                    if not due.any():
                        self.report.drop(RATE_LIMIT)
                        return None
                    key, index, rows = (key, due.tobytes()), index[due], rows[due]
            self._last_published_ns[index] = stamp_ns
            self._latest_published_ns = max(self._latest_published_ns, stamp_ns)
        return Publication(key, index, sec, nanosec, rows)

    def _receipt_stamp(self) -> tuple[int, int]:
        # An unstamped state would be published at time 0, which tf2 reads as "latest", and
        # rate limiting would then drop every later one: stamp it on receipt instead.
        report = self.report
        if not report.zero_stamp_reported:
            report.zero_stamp_reported = True
            report.notices.append(Notice(None,
                'received a JointState with a zero stamp; publishing such states with the '
                'time of receipt. Stamp joint states at their source.'))
        return self._clock()

    # Reports ------------------------------------------------------------------------------

    def _report_length_mismatch(self, names: Sequence[str], positions: int) -> None:
        self.report.drop(LENGTH_MISMATCH)
        if positions < len(names):
            detail = f'ignoring the joints without a position: {listing(names[positions:])}'
        else:
            detail = f'ignoring the {positions - len(names)} positions without a name'
        self.report.notices.append(Notice('length',
            f'JointState has {len(names)} names but {positions} positions: {detail}'))

    def _report_update(self, update: JointUpdate) -> None:
        report, plan = self.report, update.plan
        if plan.unknown:
            report.period_problems.add(UNKNOWN)
            self._report_unknown(plan.unknown)
        if plan.duplicated:
            report.drop(DUPLICATED, len(plan.duplicated))
            report.notices.append(Notice('duplicated',
                'JointState names these joints more than once, so their values are ambiguous '
                f'and ignored: {listing(plan.duplicated)}'))
        if plan.not_scalar:
            report.drop(NOT_SCALAR, len(plan.not_scalar))
            report.notices.append(Notice('not_scalar',
                'JointState gives a value to joints without a single position (fixed joints '
                'take none; drive floating and planar joints with MultiDOFJointState on '
                f'multi_dof_joint_states): {listing(plan.not_scalar)}'))
        if update.non_finite:
            report.drop(NON_FINITE, len(update.non_finite))
            report.notices.append(Notice('non_finite',
                f'JointState has NaN or infinite positions for: {listing(update.non_finite)} '
                '(ignored)'))
        if update.clamped:
            report.clamped.update(update.clamped)
            report.period_problems.add(CLAMPED)
            report.notices.append(Notice('clamped',
                f'joint values outside their limits were clamped: {listing(update.clamped)}'))

    def _report_unknown(self, names: tuple[str, ...]) -> None:
        """Report each unknown name once, up to UNKNOWN_NAMES_REPORTED of them, then count."""
        report = self.report
        new = [n for n in names if n not in report.unknown]
        room = UNKNOWN_NAMES_REPORTED - len(report.unknown)
        if report.unknown_overflow or room <= 0:
            report.unknown_overflow += len(new)
            return
        if not new:
            return
        report.unknown.update(new[:room])
        text = (f"JointState names joints that robot '{self.model.name}' does not have "
                f'(ignored; reported once): {", ".join(new[:room])}')
        if len(new) > room:
            report.unknown_overflow = len(new) - room
            text += (f'; {UNKNOWN_NAMES_REPORTED} unknown names reported, further ones are '
                     'only counted in /diagnostics')
        report.notices.append(Notice(None, text))

    # Defaults -----------------------------------------------------------------------------

    @cached_property
    def _defaults(self) -> tuple[bytes, np.ndarray, np.ndarray]:
        """Key, index and rows of every movable joint at its default position (once per model).

        Single-value joints take the model's default positions; floating and planar joints
        sit at their origins.
        """
        model = self.model
        defaults = model.default_positions()
        update = model.update(tuple(defaults), list(defaults.values()))
        poses = [model.joint_pose(n, Pose()) for n in model.pose_joints]
        index = np.concatenate([update.plan.joint_index,
                                [self._pose_index[n] for n in model.pose_joints]]).astype(np.intp)
        rows = np.concatenate([update.transforms.reshape(-1, 7),
                               np.array([(*p.translation, *p.rotation) for p in poses]
                                        ).reshape(-1, 7)])
        return index.tobytes(), index, rows
