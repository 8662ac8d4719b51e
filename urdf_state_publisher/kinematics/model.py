"""The kinematic model: a validated description turned into arrays for fast transforms."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import math
import os
import re
from typing import NamedTuple
import warnings

import numpy as np

from urdf_state_publisher.description import (
    Description,
    Extensions,
    Joint,
    JointType,
    parse_description,
    read_description_file,
)
from urdf_state_publisher.geometry import (
    Pose,
    quaternion_from_axis_angle,
    quaternion_multiply,
    rotate,
    twist_angle,
)
from urdf_state_publisher.kinematics.kdl_sign import sign_factors

__all__ = ['FrameTransform', 'JointUpdate', 'RobotModel', 'UpdatePlan']

POSE_TYPES = (JointType.FLOATING, JointType.PLANAR)
# Plans are cached per distinct list of joint names; real sources repeat a handful of lists,
# the bounds only keep a hostile stream of random or huge lists from growing memory.
PLAN_CACHE_SIZE = 256
PLAN_CACHE_NAMES = 20_000
# Doubles an end of an admitted interval may move by; past that (a gain so extreme that the
# exact end is far from a double that passes) the interval is left empty, never wrong.
ADMISSION_STEPS = 8

# NaN and infinite joint values are input like any other: update() computes with them, finds
# them by the NaN they leave and reports them by joint name, so numpy's warnings about them
# would only be noise on the node's stderr.
warnings.filterwarnings('ignore', category=RuntimeWarning, module=re.escape(__name__) + '$')


@dataclass(frozen=True)
class FrameTransform:
    """The pose of frame `child` in frame `parent`."""

    parent: str
    child: str
    pose: Pose


@dataclass(frozen=True, eq=False)
class UpdatePlan:
    """What a JointState with a given list of names updates, resolved once per list.

    Outputs are the named single-value joints followed by the mimic followers they drive,
    level by level: a follower comes after its direct leader.
    """

    names: tuple[str, ...]
    message_index: np.ndarray   # positions in the message of the joints used
    joints: tuple[str, ...]     # output joint names, in output order
    joint_index: np.ndarray     # output joints' indices in RobotModel.scalar_joints
    # Per level of followers: the slice of the outputs it fills and, for each follower, the
    # output index of its direct leader, its multiplier and offset, its lower and upper limits.
    levels: tuple[tuple[slice, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], ...]
    # Per output, the position in the message of the value it starts from (its own, or its
    # named leader's for a follower), and the gain and offset that take it there (1 and 0 for
    # a named joint; None when all are).
    gather: np.ndarray
    gain: np.ndarray | None
    bias: np.ndarray | None
    named_outputs: slice        # the outputs that are named joints
    named_root: np.ndarray      # per output: index into the named joints of the one driving it
    lower: np.ndarray           # per output joint
    upper: np.ndarray
    # Per name of the message, the values it may take for this state to need no report: every
    # output joint it drives stays within its limits unclamped and its transform finite. Any
    # other value (NaN included) is outside; unused names admit any number.
    admitted_lower: np.ndarray
    admitted_upper: np.ndarray
    unknown: tuple[str, ...]     # names that are no joint of the model
    not_scalar: tuple[str, ...]  # fixed, floating or planar joints named in a JointState
    duplicated: tuple[str, ...]  # names given more than once (ambiguous: all dropped)
    names_usable: bool           # none of the three above
    # Per output joint, its transform (translation, rotation) is [1, v, cos(v/2), sin(v/2)] ·
    # basis, a 4×7 matrix, for its value v: see RobotModel.__init__.
    _basis: np.ndarray
    # (N, 4): ones, then v, cos(v/2) and sin(v/2), written in place by each evaluation (its
    # columns are views made once, with a buffer for v/2): fewer numpy calls per message.
    _coefficients: np.ndarray
    _columns: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # v, cos, sin; v/2
    # ((7 + sign columns)·N,): a dot product with them is NaN when an operand is not finite
    _zeros: np.ndarray

    def unclamped(self, positions: np.ndarray) -> np.ndarray:
        """The outputs' values before any limit: each follower from the named joint it follows.

        For a state whose values the plan admits, these are the values `RobotModel.update` gives.
        """
        wanted = positions[self.gather]
        if self.gain is not None:
            wanted *= self.gain
        if self.bias is not None:
            wanted += self.bias
        return wanted


class JointUpdate(NamedTuple):
    """The result of applying one JointState: the joints it moved and their transforms.

    A NamedTuple: one is made per JointState, and a frozen dataclass costs twice as much.
    """

    plan: UpdatePlan
    values: np.ndarray        # final (mimic-resolved, clamped) value of each output joint
    transforms: np.ndarray    # (N, 7): translation xyz, quaternion xyzw per output joint
    clamped: tuple[str, ...]  # output joints whose value was outside their limits
    non_finite: tuple[str, ...]  # named joints dropped for a NaN or infinite value


class RobotModel:
    """A robot's kinematic tree, ready to turn joint values into frame transforms.

    All per-model work (joint order, mimic resolution, limits, origin products) happens here,
    once; per call, only the joints being updated are computed. A model is for one thread at a
    time: each plan evaluates in buffers of its own, which two threads updating the same joints
    at once would share (use a model per thread).
    """

    def __init__(self, description: Description, *, use_smallest_joint_limits: bool = False):
        """Build the model of a validated `description`."""
        self.description = description
        self.use_smallest_joint_limits = use_smallest_joint_limits
        joints = description.joints
        self._joints = {j.name: j for j in joints}
        self._parent_joint = {j.child: j for j in joints}
        self._origin = {j.name: Pose(j.origin.xyz, j.origin.rotation) for j in joints}

        self.scalar_joints = tuple(j.name for j in joints if j.type.single_value)
        self.pose_joints = tuple(j.name for j in joints if j.type in POSE_TYPES)
        self.fixed_joints = tuple(j.name for j in joints if j.type is JointType.FIXED)
        self.mimic_joints = tuple(j.name for j in joints if j.mimic is not None)
        self._mimic_order = self._leaders_first(self.mimic_joints)
        self._scalar_index = {name: i for i, name in enumerate(self.scalar_joints)}

        n = len(self.scalar_joints)
        self._lower = np.full(n, -np.inf)
        self._upper = np.full(n, np.inf)
        # Rows: T0, V, A, B; a joint at value v is T0 + v·V + cos(v/2)·A + sin(v/2)·B. The
        # rows a joint type does not use are zero, so every joint takes the same four
        # coefficients and the terms it does not use add exact zeros.
        # Columns past the transform's 7: functions of the joint's value whose product has the
        # sign KDL gives its quaternion (kinematics.kdl_sign.sign_factors), padded with ones.
        factors = []
        for name in self.scalar_joints:
            joint, rotation = self._joints[name], self._origin[name].rotation
            factors.append(sign_factors(rotation, (0.0,) * 4) if joint.type is JointType.PRISMATIC
                           else sign_factors(rotation, quaternion_multiply(rotation,
                                                                            (*joint.axis, 0.0))))
        self._sign_columns = max((len(f) for f in factors), default=1)
        self._basis = np.zeros((n, 4, 7 + self._sign_columns))
        self._basis[:, 0, 7:] = 1.0
        for i, name in enumerate(self.scalar_joints):
            joint = self._joints[name]
            self._lower[i], self._upper[i] = self.limits(name)
            origin = self._origin[name]
            self._basis[i, 0, :3] = origin.translation
            if joint.type is JointType.PRISMATIC:
                self._basis[i, 0, 3:7] = origin.rotation
                self._basis[i, 1, :3] = rotate(origin.rotation, joint.axis)
            else:
                # q(θ) = q_origin ⊗ (axis·sin(θ/2), cos(θ/2)) = cos(θ/2)·A + sin(θ/2)·B
                self._basis[i, 2, 3:7] = origin.rotation
                self._basis[i, 3, 3:7] = quaternion_multiply(origin.rotation, (*joint.axis, 0.0))
            for k, factor in enumerate(factors[i]):
                self._basis[i, (0, 2, 3), 7 + k] = factor
        # Per joint, the largest value whose transform cannot overflow: the terms other than
        # v·V stay below half the largest double, and v·V below the other half.
        largest = np.finfo(float).max
        transform = self._basis[:, :, :7]
        rest = (np.abs(transform[:, 0]) + np.abs(transform[:, 2])
                + np.abs(transform[:, 3])).max(axis=1, initial=0.0)
        slope = np.abs(transform[:, 1]).max(axis=1, initial=0.0)
        with np.errstate(divide='ignore'):
            self._reach = np.where(rest < largest / 2,
                                   np.minimum(largest / 2 / slope, largest), -1.0)
        self._plans: OrderedDict[tuple[str, ...], UpdatePlan] = OrderedDict()
        self._plan_names = 0  # names held by the cached plans' keys
        self._last_plan = self._make_plan(())

    # Loading ------------------------------------------------------------------------------

    @classmethod
    def from_urdf(cls, text: str | bytes, **options) -> RobotModel:
        """Model of a URDF document given as text."""
        return cls(parse_description(text), **options)

    @classmethod
    def from_file(cls, path: str | os.PathLike,
                  xacro_args: Mapping[str, str] | Sequence[str] = (), **options) -> RobotModel:
        """Model of a .urdf file or a .xacro file expanded with `xacro_args`.

        An argument the .xacro neither declares nor reads is one of the model's `warnings`.
        """
        return cls(read_description_file(path, xacro_args).parse(), **options)

    # Structure ----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The robot's name."""
        return self.description.name

    @property
    def root(self) -> str:
        """The root link."""
        return self.description.root

    @property
    def links(self) -> tuple[str, ...]:
        """Every link, root first, parents before children."""
        return self.description.links

    @property
    def sensors(self):
        """The URDF `<sensor>` elements, each a frame on its parent link."""
        return self.description.sensors

    @property
    def warnings(self) -> tuple[str, ...]:
        """Problems found while loading that did not prevent building the model.

        Each changes what is published or is likely a mistake (<orgin> for <origin>); content
        for other tools is in `extensions`.
        """
        return self.description.warnings

    @property
    def extensions(self) -> Extensions:
        """Elements and attributes the description holds for other tools (<gazebo>, ...)."""
        return self.description.extensions

    @property
    def movable_joints(self) -> tuple[str, ...]:
        """Joints that move: single-value, floating and planar ones, mimic followers included."""
        return tuple(j.name for j in self.description.joints if j.type is not JointType.FIXED)

    @property
    def independent_joints(self) -> tuple[str, ...]:
        """Moving joints that are not mimic followers: the ones a joint-state source drives."""
        return tuple(n for n in self.movable_joints if self._joints[n].mimic is None)

    def has_joint(self, name: str) -> bool:
        """Whether the model has a joint called `name`."""
        return name in self._joints

    def joint(self, name: str) -> Joint:
        """The joint called `name` (KeyError if there is none)."""
        return self._joints[name]

    def limits(self, name: str) -> tuple[float, float]:
        """The range a single-value joint's value is clamped to; (-inf, inf) if unbounded.

        With `use_smallest_joint_limits`, a `<safety_controller>` narrows the `<limit>` range
        to [max(lower, soft_lower), min(upper, soft_upper)], unless that leaves it empty.
        """
        joint = self._joints[name]
        if joint.type not in (JointType.REVOLUTE, JointType.PRISMATIC) or joint.limits is None:
            return (-math.inf, math.inf)
        narrowed = joint.soft_limited_range() if self.use_smallest_joint_limits else None
        if narrowed is not None and narrowed[0] <= narrowed[1]:
            return narrowed
        return (joint.limits.lower, joint.limits.upper)

    def mimic_source(self, name: str) -> tuple[str, float, float] | None:
        """(independent leader, multiplier, offset) of a mimic follower, chains composed."""
        chain = list(self.mimic_leaders(name))
        return chain[-1] if chain else None

    def mimic_leaders(self, name: str) -> Iterable[tuple[str, float, float]]:
        """Each leader up the mimic chain of `name`, with the composed multiplier and offset.

        The description guarantees the chain ends (mimic cycles are refused at load).
        """
        joint = self._joints[name]
        multiplier, offset = 1.0, 0.0
        while joint.mimic is not None:
            # value = m·leader + o, with leader = m'·leader' + o'  ⇒  m·m'·leader' + (m·o' + o)
            offset += multiplier * joint.mimic.offset
            multiplier *= joint.mimic.multiplier
            joint = self._joints[joint.mimic.joint]
            yield (joint.name, multiplier, offset)

    # Values -------------------------------------------------------------------------------

    def _leaders_first(self, followers: Iterable[str]) -> tuple[str, ...]:
        """`followers` ordered so that each comes after its leader (mimics form a forest)."""
        order: list[str] = []
        placed: set[str] = set()
        for name in followers:
            chain = []
            while name not in placed and self._joints[name].mimic is not None:
                chain.append(name)
                placed.add(name)
                name = self._joints[name].mimic.joint
            order.extend(reversed(chain))
        return tuple(order)

    def default_positions(self) -> dict[str, float]:
        """A value for every single-value joint, mimic followers resolved.

        From the URDF's `<model_state>` where it has one; otherwise 0 when 0 is within the
        joint's range, else the middle of the range.
        """
        values = self._unresolved_defaults()
        state = self.description.model_state
        values.update({n: min(max(state[n], self.limits(n)[0]), self.limits(n)[1])
                       for n in self.mimic_joints if n in state and n in self._scalar_index})
        names = tuple(values)
        update = self.update(names, np.fromiter(values.values(), float, len(names)))
        return dict(zip(update.plan.joints, update.values.tolist()))

    def _unresolved_defaults(self) -> dict[str, float]:
        """Default values of the single-value joints that are no mimic followers."""
        state = self.description.model_state
        values = {}
        for name in self.scalar_joints:
            if self._joints[name].mimic is not None:
                continue
            lower, upper = self.limits(name)
            if name in state:
                values[name] = min(max(state[name], lower), upper)
            elif lower <= 0.0 <= upper:
                values[name] = 0.0
            else:
                values[name] = (lower + upper) / 2
        return values

    def plan(self, names: Sequence[str]) -> UpdatePlan:
        """The (cached) plan for JointStates naming `names`, in that order."""
        # A JointState source sends the same names message after message, and the node's
        # reader hands over the same tuple for them: that needs no hashing of every name.
        if names is self._last_plan.names:
            return self._last_plan
        key = tuple(names)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._make_plan(key)
            self._plans[key] = plan
            self._plan_names += len(key)
            while len(self._plans) > PLAN_CACHE_SIZE or (
                    self._plan_names > PLAN_CACHE_NAMES and len(self._plans) > 1):
                evicted, _ = self._plans.popitem(last=False)
                self._plan_names -= len(evicted)
        self._last_plan = plan
        return plan

    def _make_plan(self, names: tuple[str, ...]) -> UpdatePlan:
        seen: dict[str, int] = {}
        duplicated = []
        for i, name in enumerate(names):
            if name in seen:
                duplicated.append(name)
            else:
                seen[name] = i
        unknown = tuple(n for n in seen if n not in self._joints)
        not_scalar = tuple(n for n in seen if n in self._joints and n not in self._scalar_index)
        dropped = set(duplicated)
        named = [n for n in seen if n in self._scalar_index and n not in dropped]
        named_position = {n: k for k, n in enumerate(named)}

        # A follower moves with the nearest leader up its chain that this message names (an
        # explicitly sent value wins over the mimic relation); its level is its distance to it.
        # Leaders are resolved before their followers, so each joint is visited once.
        # Its gain and offset from that leader compose the relations along the way.
        level_of: dict[str, int] = {}
        root_of: dict[str, int] = {}
        affine_of: dict[str, tuple[float, float]] = {}
        for name in self._mimic_order:
            if name in named_position:
                continue
            mimic = self._joints[name].mimic
            if mimic.joint in named_position:
                level_of[name], root_of[name] = 1, named_position[mimic.joint]
                affine_of[name] = mimic.multiplier, mimic.offset
            elif mimic.joint in level_of:
                level_of[name] = level_of[mimic.joint] + 1
                root_of[name] = root_of[mimic.joint]
                gain, bias = affine_of[mimic.joint]
                affine_of[name] = gain * mimic.multiplier, bias * mimic.multiplier + mimic.offset
        followers = sorted(level_of, key=level_of.get)  # stable: model order within a level
        outputs = named + followers
        position = {n: k for k, n in enumerate(outputs)}
        levels = []
        start = len(named)
        while start < len(outputs):
            depth = level_of[outputs[start]]
            stop = start
            while stop < len(outputs) and level_of[outputs[stop]] == depth:
                stop += 1
            mimics = [self._joints[n].mimic for n in outputs[start:stop]]
            level_index = [self._scalar_index[n] for n in outputs[start:stop]]
            levels.append((slice(start, stop),
                           np.array([position[m.joint] for m in mimics], dtype=np.intp),
                           np.array([m.multiplier for m in mimics], dtype=float),
                           np.array([m.offset for m in mimics], dtype=float),
                           self._lower[level_index], self._upper[level_index]))
            start = stop
        index = np.array([self._scalar_index[n] for n in outputs], dtype=np.intp)
        message_index = np.array([seen[n] for n in named], dtype=np.intp)
        named_root = np.array(list(range(len(named))) + [root_of[n] for n in followers],
                              dtype=np.intp)
        gain = np.array([1.0] * len(named) + [affine_of[n][0] for n in followers])
        bias = np.array([0.0] * len(named) + [affine_of[n][1] for n in followers])
        gather = message_index[named_root]
        coefficients = np.hstack((np.ones((len(index), 1)), np.zeros((len(index), 3))))
        admitted_lower, admitted_upper = np.full(len(names), -np.inf), np.full(len(names), np.inf)
        for k, i in enumerate(index):
            lower, upper = admitted_values(
                gain[k], bias[k], max(self._lower[i], -self._reach[i]),
                min(self._upper[i], self._reach[i]))
            admitted_lower[gather[k]] = max(admitted_lower[gather[k]], lower)
            admitted_upper[gather[k]] = min(admitted_upper[gather[k]], upper)
        return UpdatePlan(
            names=names,
            message_index=message_index,
            joints=tuple(outputs),
            joint_index=index,
            levels=tuple(levels),
            gather=gather,
            gain=None if (gain == 1.0).all() else gain,
            bias=None if (bias == 0.0).all() else bias,
            named_outputs=slice(0, len(named)),
            named_root=named_root,
            lower=self._lower[index],
            upper=self._upper[index],
            admitted_lower=admitted_lower,
            admitted_upper=admitted_upper,
            unknown=unknown,
            not_scalar=not_scalar,
            duplicated=tuple(dict.fromkeys(duplicated)),
            names_usable=not (unknown or not_scalar or duplicated),
            _basis=self._basis[index],
            _coefficients=coefficients,
            _columns=(coefficients[:, 1], coefficients[:, 2], coefficients[:, 3],
                      np.empty(len(index))),
            _zeros=np.zeros((7 + self._sign_columns) * len(index)),
        )

    def update(self, names: Sequence[str], positions: Sequence[float] | np.ndarray) -> JointUpdate:
        """Apply one joint state: `positions[i]` is the value of joint `names[i]`.

        Names beyond the end of `positions` are ignored; so are unknown names, duplicated
        names and NaN or infinite values (reported in the plan and the result).
        """
        positions = np.asarray(positions, dtype=float)
        if len(names) > len(positions):
            names = names[:len(positions)]
        plan = self._last_plan  # a source's next state names what its last one did
        if names is not plan.names:
            plan = self.plan(names)
        values, wanted, transforms, clamped = self._evaluate(plan, positions)
        # This test settles nearly every state: nothing was clamped, and the dot product of the
        # transforms with zeros is not NaN. A NaN passes the clamp, and a NaN or infinite value
        # left after it (or a finite one that overflows) puts a NaN or an infinity in its
        # transform, which makes that product NaN. Anything else is sorted out joint by joint.
        if not clamped and not math.isnan(transforms.ravel().dot(plan._zeros)):
            return JointUpdate(plan, values, transforms[:, :7], (), ())
        if not clamped and plan.levels:
            # A non-finite transform is judged on followers computed level by level: a gain
            # composed along a chain can overflow where each step does not.
            values, wanted, transforms, _ = self._evaluate(plan, positions, by_level=True)
        return self._checked_update(plan, positions, values, wanted, transforms)

    def _checked_update(self, plan: UpdatePlan, positions: np.ndarray, values: np.ndarray,
                        wanted: np.ndarray, transforms: np.ndarray) -> JointUpdate:
        """`update` for a state with a clamped or a non-finite value: names the joints.

        `values`, `wanted` and `transforms` are what `_evaluate` made of `positions`.
        """
        non_finite: tuple[str, ...] = ()
        named = wanted[plan.named_outputs]
        if math.isnan(named.dot(plan._zeros[:len(named)])):  # a NaN or infinite value sent
            finite = np.isfinite(named)
            plan, positions, non_finite = self._without(plan, positions,
                                                        plan.message_index[~finite])
            values, wanted, transforms, _ = self._evaluate(plan, positions, by_level=True)
        while math.isnan(transforms.ravel().dot(plan._zeros)):
            rows_finite = np.isfinite(transforms).all(axis=1)
            # Finite values can still overflow: a continuous follower of a leader at 1e308 × 2,
            # a prismatic travel of 1e308 on an origin of 1e308. Drop what drives such a row.
            roots = plan.message_index[plan.named_root[~rows_finite]]
            plan, positions, overflowing = self._without(plan, positions, roots)
            non_finite += overflowing
            values, wanted, transforms, _ = self._evaluate(plan, positions, by_level=True)
        # Every value left is finite: an infinite one leaves its transform not finite.
        clamped = tuple(plan.joints[i] for i in np.flatnonzero(values != wanted))
        return JointUpdate(plan, values, transforms[:, :7], clamped, non_finite)

    def _without(self, plan: UpdatePlan, positions: np.ndarray,
                 dropped: np.ndarray) -> tuple[UpdatePlan, np.ndarray, tuple[str, ...]]:
        """The plan and positions of the message without the entries at `dropped`."""
        keep = np.ones(len(plan.names), dtype=bool)
        keep[dropped] = False
        names = tuple(n for n, k in zip(plan.names, keep) if k)
        dropped_names = tuple(dict.fromkeys(plan.names[i] for i in dropped))
        return self.plan(names), positions[:len(keep)][keep], dropped_names

    def _evaluate(self, plan: UpdatePlan, positions: np.ndarray, by_level: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """Values (clamped), wanted values and transforms of `plan`'s outputs; True if clamped.

        The transforms are (N, 7 + sign columns): the first 7 columns each output's transform,
        its quaternion signed as KDL signs it (kinematics.kdl_sign). `positions` are the message's,
        in the
        order of `plan.names`. Followers are computed level by level when a limit is hit or
        `by_level` is true, else each from its named leader with the composed gain and offset.
        """
        # Per message, every numpy operation costs one to three microseconds whatever the
        # robot's size (the process wakes up for it with cold caches), and so does each call
        # of a Python function: fewer of them is what counts. So the values are first computed as
        # if no limit were hit, each follower straight from the named leader it follows, and
        # again level by level only when a limit was hit.
        wanted = plan.unclamped(positions)
        # np.minimum/np.maximum rather than np.clip: the same result, less overhead.
        values = np.minimum(np.maximum(wanted, plan.lower), plan.upper)
        # Bit-identical values were not clamped (a NaN passes the clamp as it is).
        clamped = values.tobytes() != wanted.tobytes()
        if plan.levels and (clamped or by_level):
            # Each follower follows its leader's final (clamped) value, level by level.
            for outputs, source, multiplier, offset, lower, upper in plan.levels:
                level = wanted[outputs]
                np.multiply(values[source], multiplier, out=level)
                level += offset
                np.minimum(np.maximum(level, lower), upper, out=values[outputs])
        # One product of matrices for all the transforms. einsum, not matmul: matmul hands it
        # to the BLAS, whose kernel (chosen per CPU family) rounds differently, so that /tf
        # would differ in the last bit between an Intel and an AMD machine; einsum computes it
        # the same way on every machine of an architecture (its loops are numpy's own).
        value, cosine, sine, half = plan._columns  # column 0 of the coefficients holds the 1
        np.copyto(value, values)
        np.multiply(values, 0.5, out=half)
        np.cos(half, out=cosine)
        np.sin(half, out=sine)
        transforms = np.einsum('nk,nkj->nj', plan._coefficients, plan._basis)
        # KDL's sign: the product of the sign columns'. A multiplication by ±1 costs less than a
        # negation where a mask says, and copysign has no 0 for a product that is 0.
        signs = (transforms[:, 7:] if transforms.shape[1] == 8
                 else transforms[:, 7:].prod(axis=1, keepdims=True))
        transforms[:, 3:7] *= np.copysign(1.0, signs)
        return values, wanted, transforms, clamped

    def joint_pose(self, name: str, value: float | Pose = 0.0) -> Pose:
        """Pose of joint `name`'s child link in its parent link for `value`.

        `value` is a number for single-value joints (ignored for fixed ones) and a Pose for
        floating and planar joints: the joint's motion relative to its origin (a planar joint
        keeps only the part in its plane: the translation normal to the axis and the rotation
        about it).
        """
        joint = self._joints[name]
        origin = self._origin[name]
        if joint.type is JointType.FIXED:
            return origin
        if joint.type.single_value:
            lower, upper = self.limits(name)
            value = min(max(float(value), lower), upper)
            if joint.type is JointType.PRISMATIC:
                return origin * Pose((joint.axis[0] * value, joint.axis[1] * value,
                                      joint.axis[2] * value))
            return origin * Pose(rotation=quaternion_from_axis_angle(joint.axis, value))
        if not isinstance(value, Pose):
            value = Pose()
        if joint.type is JointType.FLOATING:
            return origin * value
        return origin * planar_motion(joint.axis, value)

    def static_transforms(self) -> tuple[FrameTransform, ...]:
        """Transforms that never change: fixed joints, then sensor frames."""
        fixed = tuple(FrameTransform(self._joints[n].parent, self._joints[n].child,
                                     self._origin[n]) for n in self.fixed_joints)
        sensors = tuple(FrameTransform(s.parent, s.name, Pose(s.origin.xyz, s.origin.rotation))
                        for s in self.sensors)
        return fixed + sensors

    def joint_transforms(self, values: Mapping[str, float]) -> tuple[FrameTransform, ...]:
        """Transforms of the single-value joints in `values` and of the mimic joints they drive."""
        names = tuple(values)
        update = self.update(names, [float(values[n]) for n in names])
        return tuple(
            FrameTransform(self._joints[n].parent, self._joints[n].child,
                           Pose(tuple(t[:3]), tuple(t[3:])))
            for n, t in zip(update.plan.joints, update.transforms.tolist()))

    def frame_poses(self, values: Mapping[str, float | Pose] = {}) -> dict[str, Pose]:
        """Pose of every link and sensor frame in the root link's frame.

        Joints missing from `values` are at their default position; mimic followers not in
        `values` follow their leaders. ValueError for an unknown joint or a non-finite value.
        """
        scalar = self._unresolved_defaults()
        for name, value in values.items():
            if name not in self._joints:
                raise ValueError(f'robot {self.name!r} has no joint {name!r}')
            if isinstance(value, Pose):
                continue
            if not math.isfinite(value):
                raise ValueError(f'the value of joint {name!r} is not finite: {value!r}')
            if name in self._scalar_index:
                scalar[name] = float(value)
        resolved = self.update(tuple(scalar), list(scalar.values()))
        scalar = dict(zip(resolved.plan.joints, resolved.values.tolist()))
        poses = {self.root: Pose()}
        for joint in self.description.joints:
            value = values.get(joint.name, Pose()) if joint.type in POSE_TYPES \
                else scalar.get(joint.name, 0.0)
            poses[joint.child] = poses[joint.parent] * self.joint_pose(joint.name, value)
        for sensor in self.sensors:
            poses[sensor.name] = poses[sensor.parent] * Pose(sensor.origin.xyz,
                                                             sensor.origin.rotation)
        return poses

    def frame_pose(self, frame: str, values: Mapping[str, float | Pose] = {},
                   relative_to: str | None = None) -> Pose:
        """Pose of link or sensor `frame` in frame `relative_to` (default: the root link)."""
        poses = self.frame_poses(values)
        for name in (frame, relative_to):
            if name is not None and name not in poses:
                raise KeyError(f'no link or sensor called {name!r} in robot {self.name!r}')
        pose = poses[frame]
        return pose if relative_to is None else poses[relative_to].inverse() * pose


def admitted_values(gain: float, bias: float, lower: float, upper: float) -> tuple[float, float]:
    """The values v for which v·gain + bias, in doubles, is within [lower, upper] (finite).

    As an interval, empty when lower > upper. Rounding is monotonic, so an interval whose
    ends pass passes throughout: the ends computed exactly are moved inwards, a few doubles at
    most, until they pass as `RobotModel.update` computes them.
    """
    def passes(value: float) -> bool:
        return lower <= value * gain + bias <= upper

    empty = (math.inf, -math.inf)
    largest = np.finfo(float).max
    if not lower <= upper:
        return empty
    if gain == 0.0:
        return (-largest, largest) if lower <= bias <= upper else empty
    ends = sorted(((lower - bias) / gain, (upper - bias) / gain))
    low, high = (min(max(v, -largest), largest) for v in ends)
    for _ in range(ADMISSION_STEPS):
        if passes(low) or low > high:
            break
        low = math.nextafter(low, math.inf)
    for _ in range(ADMISSION_STEPS):
        if passes(high) or low > high:
            break
        high = math.nextafter(high, -math.inf)
    return (low, high) if low <= high and passes(low) and passes(high) else empty


def planar_motion(axis: tuple[float, float, float], motion: Pose) -> Pose:
    """The part of `motion` a planar joint allows.

    That is the translation normal to `axis` and the rotation about it.
    """
    t = motion.translation
    along = t[0] * axis[0] + t[1] * axis[1] + t[2] * axis[2]
    in_plane = (t[0] - along * axis[0], t[1] - along * axis[1], t[2] - along * axis[2])
    return Pose(in_plane, quaternion_from_axis_angle(axis, twist_angle(motion.rotation, axis)))

