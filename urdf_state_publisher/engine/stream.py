"""The joint-state stream: what each JointState or MultiDOFJointState puts on /tf, and why not.

Everything here is decided per message without ROS: rate limiting and time going backwards
(both per joint), the zero-stamp rule, what is dropped. What it notices goes to a
JointStateHealth (urdf_state_publisher.engine.health), which judges it once per period. The engine
(urdf_state_publisher.engine.state_engine) reads messages into names and arrays and publishes each
publication a JointStream hands to its `on_publication`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from urdf_state_publisher.engine.health import (
    JointStateHealth,
    NAMES_KEPT,
    RATE_LIMIT,
    TIME_BACKWARDS,
    UNUSABLE_POSE,
    ZERO_STAMP,
)
from urdf_state_publisher.engine.stream_reports import (
    fits,
    report_dynamics_mismatch,
    report_update,
)
from urdf_state_publisher.geometry import normalized, Pose
from urdf_state_publisher.kinematics.kdl_sign import kdl_signed
from urdf_state_publisher.kinematics.model import JointUpdate, RobotModel, UpdatePlan
from urdf_state_publisher.kinematics.resolved import renamed_columns, ResolvedFields, ResolvedState
from urdf_state_publisher.wire.joint_state import velocity_and_effort

__all__ = ['JointStream', 'Publication']

NEVER_NS = np.iinfo(np.int64).min // 2  # a stamp before any other, with room to add to it
LAST_NS = np.iinfo(np.int64).max  # a stamp after any other
# Joint indices whose earliest due time is kept, one per source: each publication updates
# them all.
EARLIEST_DUE_KEPT = 32
HELD_KEPT = 64  # states held back before their values are checked anyway


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
                 publish_interval_ns: int = 50_000_000, ignore_timestamp: bool = False,
                 resolved: ResolvedState | None = None,
                 on_resolved: Callable[[ResolvedFields], None] | None = None,
                 on_publication: Callable[[Publication], None] | None = None):
        """Start streaming `model`, reporting to `report`.

        `clock` gives (sec, nanosec) of now, for zero stamps. With `resolved` (a ResolvedState
        of `model`), every state's values are kept in it, and `on_resolved` gets its fields
        whenever a state's stamp is a publish interval past the last call's.
        `on_publication` gets each publication as soon as it is known, before the stream does
        anything else: the engine publishes it there. The methods also return it.
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
        # Bumped whenever _last_published_ns changes; what was derived from it is valid as
        # long as its version is the current one.
        self._published_version = 0
        # Per key of a joint index: (version, the earliest stamp at which one of its joints
        # is due, the index).
        self._earliest_due_of: dict[object, tuple[int, int, np.ndarray]] = {}
        # States held back unchecked (JointStream.joint_state), and the latest stamp of the
        # states seen or held. Each: plan, names, buffer, offset, dtype, stamp, its ns, and the
        # velocities and efforts when not in the buffer.
        self._held: list[tuple[UpdatePlan, Sequence[str], bytes | np.ndarray, int, np.dtype,
                               tuple[int, int], int, tuple | None]] = []
        self._held_latest_ns = NEVER_NS
        self._on_publication = on_publication
        # What the last _schedule saw and published, for _record_schedule: (index, stamp in
        # ns, True when every joint of index was published or a mask of those, None if none).
        self._recording: tuple | None = None
        # Whether a publication changed the due times that _earliest_due_of knows.
        self._earliest_due_stale = False
        # Per topic, the plan of its last state: each source repeats its names.
        self._last_plan_of: dict[str, UpdatePlan] = {}
        self._resolved = resolved
        self._on_resolved = on_resolved
        # The last state of each plan not yet in the resolved state, as it came, oldest first.
        # A source sends several states per publish interval and only its last one shows: they
        # are put in when the resolved state is read (_fold_unresolved), not as they come.
        self._unresolved: dict[UpdatePlan, tuple] = {}
        # The stamp from which the resolved state is due again; never without one.
        self._resolved_due_ns = NEVER_NS if resolved is not None else LAST_NS
        self._last_seen_ns = np.full(len(self.joints), NEVER_NS)
        # Bounds of the two arrays: a stamp past them is checked without indexing them.
        self._latest_published_ns = NEVER_NS
        self._latest_seen_ns = NEVER_NS
        self._interval_ns = 0
        self.limit_rate(publish_interval_ns, ignore_timestamp)
        report.model_changed(model, resolved)

    def limit_rate(self, publish_interval_ns: int, ignore_timestamp: bool) -> None:
        """Publish a joint at most once per `publish_interval_ns` of stamps, or every time."""
        # Ignoring timestamps is a zero interval: a stamp never precedes the last published
        # one of its joint without a jump back, which clears that joint's limit anyway.
        interval_ns = 0 if ignore_timestamp else publish_interval_ns
        if self._held:
            self.check_held()
        self._published_version += 1  # earliest due times depend on the interval too
        if interval_ns and not self._interval_ns:
            # Without an interval every joint seen was published, and only the stamps seen
            # were kept.
            self._last_published_ns = self._last_seen_ns.copy()
            self._latest_published_ns = self._latest_seen_ns
        self._interval_ns = interval_ns

    # Messages -----------------------------------------------------------------------------

    def joint_state(self, names: Sequence[str], positions: Sequence[float] | np.ndarray,
                    stamp: tuple[int, int], topic: str = '',
                    velocities: Sequence[float] | None = None,
                    efforts: Sequence[float] | None = None) -> Publication | None:
        """The publication for a JointState: `positions[i]` is the value of `names[i]`.

        `topic` is where it came from (sources are told apart by it and by their names);
        `velocities` and `efforts` matter only to the resolved state.
        """
        values = np.ascontiguousarray(positions, dtype=float)
        return self.joint_state_at(names, values, 0, len(values), values.dtype, stamp, topic,
                                   (velocities, efforts))

    def joint_state_at(self, names: Sequence[str], buffer: bytes | np.ndarray, offset: int,
                       count: int, double: np.dtype, stamp: tuple[int, int], topic: str = '',
                       dynamics: tuple | None = None) -> Publication | None:
        """`joint_state` for positions that are `count` doubles at `offset` in `buffer`.

        `buffer` is then the serialized JointState, whose velocities and efforts are read from
        it when the resolved state needs them, unless `dynamics` gives them.

        Whether anything is due is decided before any kinematics. With the default
        publish_frequency and a faster source most states are not: such a state is held, and
        its values are checked (NaN, limits) with the others held, at the latest after the
        next publication, or by `check_held`. Reports are the same as if each were checked on
        arrival. `buffer` is kept until then: it must not change.

        A state that is due is computed and handed to `on_publication` first: what does not
        change what is published (the states held before it, its reports, the resolved state,
        the bookkeeping of due times) follows, whether publishing succeeded or not.
        """
        # A source sends the same names message after message, and the reader hands over the
        # same tuple for them: the plan of the last state is the one, without a call.
        plan = self._last_plan_of.get(topic)
        if plan is None or names is not plan.names:
            plan = self._last_plan_of[topic] = self.model.plan(
                names if len(names) <= count else names[:count])
        sec, nanosec = stamp
        stamp_ns = sec * 1_000_000_000 + nanosec
        # Not due, whatever its values: stamped, not before any state seen or held, before
        # the earliest due time of its joints as last computed. Settled without a numpy call
        # (a process woken for each message pays tens of microseconds for its first one), or
        # any call that can be left out.
        if (stamp_ns >= self._held_latest_ns and stamp_ns
                and stamp_ns < self._latest_published_ns + self._interval_ns
                and stamp_ns < self._resolved_due_ns
                and len(names) == count and plan.names_usable):
            known = self._earliest_due_of.get(plan)
            if known is not None and known[0] == self._published_version \
                    and stamp_ns < known[1]:
                self._received(plan, topic)
                held = self._held
                held.append((plan, names, buffer, offset, double, stamp, stamp_ns, dynamics))
                self._held_latest_ns = stamp_ns
                dropped = self.report.dropped
                dropped[RATE_LIMIT] = dropped.get(RATE_LIMIT, 0) + 1
                if len(held) >= HELD_KEPT:
                    self.check_held()
                return None
        if self._held and not (stamp_ns and stamp_ns >= self._held_latest_ns):
            # Time moved back, or an unstamped state: the states held first, as they came.
            self.check_held()
        positions = np.ndarray((count,), double, buffer, offset)
        update = self.model.update(names, positions)
        publication = None
        if len(update.values):
            index = update.plan.joint_index
            stamp = self._stamped(stamp, index)
            publication = self._due(update.plan, index, update.transforms, stamp)
        try:
            if publication is not None and self._on_publication is not None:
                self._on_publication(publication)
        finally:
            self._received(plan, topic)
            self._finish(names, positions, count, update, plan, buffer, offset, double,
                         dynamics, stamp)
        return publication

    def _received(self, plan: UpdatePlan, topic: str) -> None:
        """Count a JointState of `plan` on `topic` in the health.

        Its counters (JointStateHealth.count_joint_state, inline: a call costs more than the
        writes), the source's count and receipt time, and one dict lookup, by the plan's
        identity, to find that source. The rest is judged once a second.
        """
        report = self.report
        now = report.clock()
        report.received += 1
        report.period_received += 1
        report.last_receipt = now
        report.joint_states_arrived = True
        source = report.source_of_plan.get((topic, plan))
        if source is None:
            source = report.new_source(plan, topic)
        source.count += 1
        source.last = now

    def _finish(self, names: Sequence[str], positions: np.ndarray, count: int,
                update: JointUpdate, plan: UpdatePlan, buffer: bytes | np.ndarray, offset: int,
                double: np.dtype, dynamics: tuple | None, stamp: tuple[int, int]) -> None:
        """What follows a state's publication, in the order of arrival.

        The stamps seen and published, the states held before it, its reports, the due times,
        the resolved state.
        """
        self._record_schedule()
        if self._held:
            self.check_held()
        if not plan.names_usable or update.non_finite or update.clamped or len(names) != count:
            report_update(self.report, names, positions, update)
        if self._earliest_due_stale:
            self._refresh_earliest_due()
        if self._resolved is not None and len(update.values):
            self._resolve(update, plan, buffer, offset, count, double, dynamics, stamp)

    def check_held(self) -> None:
        """Check the values of the states held back, and remember and report what they carry.

        In arrival order, as `joint_state` would have on arrival: none of them was due, and
        none moved time backwards. Each was counted as rate limited when it arrived. A state
        published after them may have been handled already (its publication comes first): its
        stamps, later than theirs, are kept.
        """
        held, self._held = self._held, []
        if not held:
            return
        # The values of each plan's states, as one array: one check for all of them. Clamped
        # to what the plan admits (NaN becomes a bound), they keep their bytes only if every
        # one was admitted: two numpy calls, which is what counts in a process woken for this.
        chunks: dict[tuple[UpdatePlan, np.dtype], list[bytes]] = {}
        for plan, names, buffer, offset, double, _, _, _ in held:
            size = 8 * len(names)
            chunks.setdefault((plan, double), []).append(buffer[offset:offset + size])
        admitted = {}
        for (plan, double), values in chunks.items():
            raw = b''.join(values)
            values = np.frombuffer(raw, double).reshape(len(values), -1)
            admitted[plan, double] = values, np.fmax(
                np.fmin(values, plan.admitted_upper), plan.admitted_lower).tobytes() == raw
        if all(all_admitted for _, all_admitted in admitted.values()):
            # Nearly always. Stamps of held states never decrease: each joint saw last the
            # latest stamp of the plans that name it, written last.
            latest = {row[0]: row[6] for row in held}
            for plan, stamp_ns in sorted(latest.items(), key=lambda item: item[1]):
                self._seen(plan.joint_index, stamp_ns)
            self._held_latest_ns = self._latest_seen_ns
            if self._resolved is not None:
                self._resolve_held(held, admitted)
            return
        # Which were not: row by row, in order, as on arrival.
        rows = {}
        for (plan, double), (values, _) in admitted.items():
            within = (plan.admitted_lower <= values) & (values <= plan.admitted_upper)
            rows[plan, double] = iter(within.all(axis=1).tolist())
        for plan, names, buffer, offset, double, stamp, stamp_ns, dynamics in held:
            if next(rows[plan, double]):
                self._seen(plan.joint_index, stamp_ns)
                if self._resolved is not None:
                    positions = np.ndarray((len(names),), double, buffer, offset)
                    self._keep_for_resolved(plan, plan, None, positions, buffer, offset,
                                            len(names), double, dynamics, stamp)
                continue
            # Counted as rate limited on arrival; what follows counts it as it finds it.
            self.report.dropped[RATE_LIMIT] -= 1
            positions = np.ndarray((len(names),), double, buffer, offset)
            update = self.model.update(names, positions)
            report_update(self.report, names, positions, update)
            if len(update.values):  # not due either: its joints are some of the plan's
                self._seen(update.plan.joint_index, stamp_ns)
                self.report.drop(RATE_LIMIT)
                if self._resolved is not None:
                    self._keep_for_resolved(update.plan, plan, update.values, None, buffer,
                                            offset, len(names), double, dynamics, stamp)
        self._held_latest_ns = self._latest_seen_ns

    def _seen(self, index: np.ndarray, stamp_ns: int) -> None:
        """Remember a held state's stamp as the latest seen of the joints of `index`.

        Later stamps stay: a state published after it was held may have been handled first.
        """
        self._latest_seen_ns = max(self._latest_seen_ns, stamp_ns)
        self._last_seen_ns[index] = np.maximum(self._last_seen_ns[index], stamp_ns)

    def multi_dof_joint_state(self, names: Sequence[str], poses: np.ndarray,
                              stamp: tuple[int, int]) -> Publication | None:
        """The publication for a MultiDOFJointState.

        `poses[i]` is the motion of floating or planar joint `names[i]` from its origin:
        translation x, y, z and quaternion x, y, z, w (normalised here).
        """
        if self._held:
            self.check_held()
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
        rows = np.zeros((count, 7))  # rows left unused stay finite for kdl_signed
        for k in np.flatnonzero(usable):
            values = poses[k].tolist()
            pose = self.model.joint_pose(names[k], Pose(tuple(values[:3]),
                                                        normalized(tuple(values[3:]))))
            rows[k] = (*pose.translation, *pose.rotation)
        rows = kdl_signed(rows)
        # Finite input can still overflow on the joint's origin.
        usable &= np.isfinite(rows).all(axis=1)
        if not usable.all():
            ignored = [names[k] for k in np.flatnonzero(~usable)]
            report.drop(UNUSABLE_POSE, len(ignored))
            report.event(UNUSABLE_POSE, ignored)
            index, rows = index[usable], rows[usable]
        if not len(index):
            return None
        publication = self._due(index.tobytes(), index, rows, self._stamped(stamp, index))
        try:
            if publication is not None and self._on_publication is not None:
                self._on_publication(publication)
        finally:
            self._record_schedule()
            if self._earliest_due_stale:
                self._refresh_earliest_due()
        return publication

    # Time ---------------------------------------------------------------------------------

    def _due(self, key: object, index: np.ndarray, rows: np.ndarray,
             stamp: tuple[int, int]) -> Publication | None:
        """The rows of `index` whose joints are due at `stamp`; remembers what it publishes."""
        timing = self._schedule(key, index, stamp)
        if timing is None:
            return None
        sec, nanosec, due = timing
        if due is not None:
            key, index, rows = (key, due.tobytes()), index[due], rows[due]
        return Publication(key, index, sec, nanosec, rows)

    def _schedule(self, key: object, index: np.ndarray, stamp: tuple[int, int]
                  ) -> tuple[int, int, np.ndarray | None] | None:
        """Which joints of `index` are published at `stamp`, before anything is computed.

        (sec, nanosec, due) with `due` None when all are, else a mask; None when none is.
        Reports time going backwards; the stamps seen and published are remembered by
        `_record_schedule`, which the caller calls once the publication is out. `key` stands
        for `index` (as Publication.key does).
        """
        sec, nanosec = stamp
        stamp_ns = sec * 1_000_000_000 + nanosec
        if stamp_ns >= self._latest_seen_ns:
            self._latest_seen_ns = stamp_ns
            self._held_latest_ns = max(self._held_latest_ns, stamp_ns)
        else:
            back = stamp_ns < self._last_seen_ns[index]
            if back.any():
                self.report.event(TIME_BACKWARDS, [self.joints[i] for i in index[back]])
                self._last_published_ns[index[back]] = NEVER_NS
                self._published_version += 1
                if self._resolved is not None:
                    self._fold_unresolved()  # their stamps are from before the restart
                    self._resolved.restart_time(stamp, stamp_ns)
                    self._resolved_due_ns = NEVER_NS
        self._recording = index, stamp_ns, None
        due = None
        if self._interval_ns:
            if stamp_ns < self._latest_published_ns + self._interval_ns:
                # Until a joint of `index` is published again, no stamp before its earliest
                # due time makes any of them due: most states are settled by that one number.
                if stamp_ns < self._earliest_due(key, index):
                    self.report.drop(RATE_LIMIT)
                    return None
                due = stamp_ns >= self._last_published_ns[index] + self._interval_ns
                if due.all():
                    due = None
                elif not due.any():
                    self.report.drop(RATE_LIMIT)
                    return None
            self._recording = index, stamp_ns, True if due is None else due
        self.report.published += 1
        return sec, nanosec, due

    def _record_schedule(self) -> None:
        """Remember the stamps the last `_schedule` saw and published."""
        recording, self._recording = self._recording, None
        if recording is not None:
            index, stamp_ns, published = recording
            self._last_seen_ns[index] = stamp_ns
            if published is not None:
                self._published(index if published is True else index[published], stamp_ns)

    def _earliest_due(self, key: object, index: np.ndarray) -> int:
        """The earliest stamp at which a joint of `index` (`key` stands for it) is due."""
        known = self._earliest_due_of.get(key)
        if known is not None and known[0] == self._published_version:
            return known[1]
        if known is None and len(self._earliest_due_of) >= EARLIEST_DUE_KEPT:
            self._earliest_due_of.clear()
        earliest_due = int(self._last_published_ns[index].min()) + self._interval_ns
        self._earliest_due_of[key] = self._published_version, earliest_due, index
        return earliest_due

    def _published(self, index: np.ndarray, stamp_ns: int) -> None:
        """Remember that the joints of `index` were published at `stamp_ns`."""
        self._last_published_ns[index] = stamp_ns
        self._latest_published_ns = max(self._latest_published_ns, stamp_ns)
        self._published_version += 1
        self._earliest_due_stale = True

    def _refresh_earliest_due(self) -> None:
        """Bring every known earliest due time up to date after a publication.

        The states of each source until its next publication are then held without a numpy
        call.
        """
        self._earliest_due_stale = False
        for key, (_, _, known_index) in list(self._earliest_due_of.items()):
            self._earliest_due(key, known_index)

    def _stamped(self, stamp: tuple[int, int], index: np.ndarray) -> tuple[int, int]:
        """`stamp`, or for a zero stamp the time of receipt (reported, naming the joints)."""
        if stamp[0] or stamp[1]:
            return stamp
        # An unstamped state would be published at time 0, which tf2 reads as "latest", and
        # rate limiting would then drop every later one: stamp it on receipt instead.
        self.report.event(ZERO_STAMP, [self.joints[i] for i in index[:NAMES_KEPT]])
        return self._clock()

    # The resolved state -------------------------------------------------------------------

    @property
    def resolved(self) -> ResolvedState | None:
        """The resolved state with every state received so far; None without one."""
        if self._resolved is not None:
            self._fold_unresolved()
        return self._resolved

    def _resolve(self, update: JointUpdate, plan: UpdatePlan, buffer: bytes | np.ndarray,
                 offset: int, count: int, double: np.dtype, dynamics: tuple | None,
                 stamp: tuple[int, int]) -> None:
        """Keep a state computed on arrival, and hand the resolved state over if it is due."""
        stamp_ns = self._keep_for_resolved(update.plan, plan, update.values, None, buffer,
                                           offset, count, double, dynamics, stamp)
        # Without an interval (ignore_timestamp) every state goes out, whatever its source's
        # clock says next to the others'.
        if stamp_ns >= self._resolved_due_ns or not self._interval_ns:
            self._resolved_due_ns = stamp_ns + self._interval_ns
            self._fold_unresolved()
            self._on_resolved(self._resolved.fields())

    def _resolve_held(self, held: list, admitted: dict) -> None:
        """Keep the last held state of each plan, all of them admitted, in arrival order."""
        # Ordered by their last state: held states of several plans can share a stamp (sources
        # on one simulated clock), and a later one overrides the joints it shares with another.
        last = {}
        for row in held:
            key = row[0], row[4]
            last.pop(key, None)
            last[key] = row
        for (plan, double), row in last.items():
            _, names, buffer, offset, _, stamp, _, dynamics = row
            self._keep_for_resolved(plan, plan, None, admitted[plan, double][0][-1], buffer,
                                    offset, len(names), double, dynamics, stamp)

    def _keep_for_resolved(self, used: UpdatePlan, plan: UpdatePlan, values: np.ndarray | None,
                           positions: np.ndarray | None, buffer: bytes | np.ndarray,
                           offset: int, count: int, double: np.dtype, dynamics: tuple | None,
                           stamp: tuple[int, int]) -> int:
        """Keep a state for the resolved state; its stamp in ns.

        `values` are the outputs of `used` (`plan`, or less after a NaN), or None for those of
        admitted `positions`, the message's. It replaces a state of the same plan kept before.
        """
        unresolved = self._unresolved
        unresolved.pop(used, None)
        unresolved[used] = (plan, values, positions, buffer, offset, count, double, dynamics,
                            stamp)
        return stamp[0] * 1_000_000_000 + stamp[1]

    def _fold_unresolved(self) -> None:
        """Put the states kept by _keep_for_resolved in the resolved state, oldest first.

        As if each had been put in as it came: each joint ends with the last state that gave
        it a value, and the newest stamp is the last kept of its plan (held states come in stamp
        order, and time going backwards folds in what was kept before it).
        """
        unresolved, self._unresolved = self._unresolved, {}
        for used, (plan, values, positions, buffer, offset, count, double, dynamics,
                   stamp) in unresolved.items():
            if values is None:
                values = used.unclamped(positions)
            velocities, efforts = (velocity_and_effort(buffer, offset, count, double)
                                   if dynamics is None else dynamics)
            named = len(plan.names)
            if not (fits(velocities, named) and fits(efforts, named)):
                report_dynamics_mismatch(self.report, plan.names, velocities, efforts)
            if used is not plan:
                velocities = renamed_columns(velocities, plan.names, used.names)
                efforts = renamed_columns(efforts, plan.names, used.names)
            self._resolved.store(used, values, velocities, efforts, stamp,
                                 stamp[0] * 1_000_000_000 + stamp[1])
