"""The joint-state stream: what each JointState or MultiDOFJointState puts on /tf, and why not.

Everything here is decided per message without ROS: rate limiting and time going backwards
(both per joint), the zero-stamp rule, what is dropped. What it notices goes to a
JointStateHealth (urdf_state_publisher.health), which judges it once per period. The node
converts messages to names and arrays and publishes what a JointStream returns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import NamedTuple

import numpy as np

from urdf_state_publisher.description.messages import listing
from urdf_state_publisher.geometry import normalized, Pose
from urdf_state_publisher.health import (
    CLAMPED,
    DUPLICATED,
    JointStateHealth,
    LENGTH_MISMATCH,
    NAMES_KEPT,
    NON_FINITE,
    NOT_SCALAR,
    RATE_LIMIT,
    TIME_BACKWARDS,
    UNKNOWN,
    UNUSABLE_POSE,
    ZERO_STAMP,
)
from urdf_state_publisher.model import JointUpdate, RobotModel, UpdatePlan

__all__ = ['JointStream', 'Publication']

NEVER_NS = np.iinfo(np.int64).min // 2  # a stamp before any other, with room to add to it


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


class JointStream:
    """Joint states in, publications for /tf out, for one model and frame prefix.

    Single-value joints and floating/planar joints share one index space (`joints`, `frames`):
    the model's scalar joints, then its pose joints. Per joint it keeps the stamp it last
    published (rate limiting) and the latest stamp it received (time going backwards is judged
    per joint, so sources with offset clocks coexist). A reload is a new JointStream.
    """

    def __init__(self, model: RobotModel, *, report: JointStateHealth,
                 clock: Callable[[], tuple[int, int]], frame_prefix: str = '',
                 publish_interval_ns: int = 50_000_000, ignore_timestamp: bool = False):
        """Start streaming `model`, reporting to `report`.

        `clock` gives (sec, nanosec) of now, for zero stamps.
        """
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
        # Per message the health gets its counters (JointStateHealth.count_joint_state, inline:
        # a call costs more than the writes), the source's count and receipt time, and one dict
        # lookup, by the plan's identity, to find that source. The rest is judged once a second.
        report = self.report
        now = report.clock()
        report.received += 1
        report.period_received += 1
        report.last_receipt = now
        report.joint_states_arrived = True
        update = self.model.update(names, positions)
        plan = update.plan
        if plan.unknown or plan.duplicated or plan.not_scalar or update.non_finite \
                or update.clamped or len(names) != len(positions):
            source_plan = self._report_update(names, positions, update)
        else:
            source_plan = plan
        source = report.source_of_plan.get(source_plan)
        if source is None:
            source = report.new_source(source_plan)
        source.count += 1
        source.last = now
        if not len(update.values):
            return None
        return self._due(plan, plan.joint_index, update.transforms, stamp)

    def multi_dof_joint_state(self, names: Sequence[str], poses: np.ndarray,
                              stamp: tuple[int, int]) -> Publication | None:
        """The publication for a MultiDOFJointState.

        `poses[i]` is the motion of floating or planar joint `names[i]` from its origin:
        translation x, y, z and quaternion x, y, z, w (normalised here).
        """
        report = self.report
        now = report.clock()
        report.joint_states_arrived = True
        source = report.multi_dof_source(names)
        source.count += 1
        source.last = now
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
            report.drop(UNUSABLE_POSE, len(ignored))
            report.event(UNUSABLE_POSE, ignored)
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
            sec, nanosec = self._receipt_stamp(index)
        stamp_ns = sec * 1_000_000_000 + nanosec
        if stamp_ns >= self._latest_seen_ns:
            self._latest_seen_ns = stamp_ns
        else:
            back = stamp_ns < self._last_seen_ns[index]
            if back.any():
                self.report.event(TIME_BACKWARDS, [self.joints[i] for i in index[back]])
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
        self.report.published += 1
        return Publication(key, index, sec, nanosec, rows)

    def _receipt_stamp(self, index: np.ndarray) -> tuple[int, int]:
        # An unstamped state would be published at time 0, which tf2 reads as "latest", and
        # rate limiting would then drop every later one: stamp it on receipt instead.
        self.report.event(ZERO_STAMP, [self.joints[i] for i in index[:NAMES_KEPT]])
        return self._clock()

    # Reports ------------------------------------------------------------------------------

    def _report_update(self, names: Sequence[str], positions: Sequence[float] | np.ndarray,
                       update: JointUpdate) -> UpdatePlan:
        """Report what is wrong with a JointState; returns the plan that stands for its source.

        That is the plan of its names as sent (cut to the positions there are), not the plan of
        what was left usable once NaN values were dropped.
        """
        report, plan = self.report, update.plan
        if len(names) != len(positions):
            self._report_length_mismatch(names, len(positions))
        if plan.unknown:
            self._report_unknown(plan.unknown)
        if plan.duplicated:
            report.drop(DUPLICATED, len(plan.duplicated))
            report.event(DUPLICATED, plan.duplicated)
        if plan.not_scalar:
            report.drop(NOT_SCALAR, len(plan.not_scalar))
            report.event(NOT_SCALAR, plan.not_scalar)
        if update.non_finite:
            report.drop(NON_FINITE, len(update.non_finite))
            report.event(NON_FINITE, update.non_finite)
            plan = self.model.plan(names if len(names) <= len(positions)
                                   else names[:len(positions)])
        if update.clamped:
            report.clamped.update(update.clamped)
            report.event(CLAMPED, update.clamped)
        return plan

    def _report_length_mismatch(self, names: Sequence[str], positions: int) -> None:
        self.report.drop(LENGTH_MISMATCH)
        if positions < len(names):
            detail = f'ignoring the joints without a position: {listing(names[positions:])}'
        else:
            detail = f'ignoring the {positions - len(names)} positions without a name'
        self.report.event(LENGTH_MISMATCH,
                          (f'{len(names)} names but {positions} positions, {detail}',))

    def _report_unknown(self, names: tuple[str, ...]) -> None:
        """Note unknown names; keep up to NAMES_KEPT of them for /diagnostics, then count."""
        report = self.report
        report.event(UNKNOWN, names)
        if report.unknown_overflow or len(report.unknown) >= NAMES_KEPT:
            report.unknown_overflow += sum(1 for n in names if n not in report.unknown)
            return
        new = [n for n in names if n not in report.unknown]
        room = NAMES_KEPT - len(report.unknown)
        report.unknown.update(new[:room])
        report.unknown_overflow = max(len(new) - room, 0)

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
