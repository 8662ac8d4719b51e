"""What the node publishes on its timer: the joints no source sends, at the values they are given.

robot_state_publisher publishes a transform only when a JointState names its joint;
joint_state_publisher publishes every joint on a timer, at `rate`. This node publishes what the
sources send as they send it (JointStream), and on its timer only what no source sends:

- every moving joint at its default position (floating and planar ones at their origin),
  until the first JointState arrives, when the node publishes defaults (publish_default_positions
  or publish_joint_states); and for as long as it runs when it reads no JointState topic at all
  (publish_joint_states without a source_list: joint_state_publisher's most common use);
- the joints held by `zeros.<joint>` that no source has named, with the mimic followers they
  drive: passive joints, fixed on purpose (robot_state_publisher #57).

A joint that a source has named is the source's from then on: the timer leaves it, and the mimic
followers it drives, alone. Publications are stamped with the node's clock. Nothing here imports
ROS.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from urdf_state_publisher.engine.health import JointStateHealth
from urdf_state_publisher.engine.stream import Publication
from urdf_state_publisher.geometry import Pose
from urdf_state_publisher.kinematics.kdl_sign import kdl_signed
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.kinematics.resolved import ResolvedFields, ResolvedState

__all__ = ['TimerOutput']


class TimerOutput:
    """The timer's /tf publication and resolved joint_states for one model (a reload: a new one).

    Its index space is the JointStream's of the same model: scalar joints, then pose joints.
    """

    def __init__(self, model: RobotModel, report: JointStateHealth, *,
                 resolved: ResolvedState | None, defaults: bool, reads_joint_states: bool,
                 held: frozenset[str]):
        """`defaults`: publish the default positions until the first JointState arrives.

        `reads_joint_states` False: the node reads no JointState topic, so the defaults go out
        for good. `held`: the joints given a value by zeros.<joint>.
        """
        self.model = model
        self.report = report
        self._resolved = resolved
        self._defaults_until_state = defaults
        self._reads_joint_states = reads_joint_states
        self._held = held
        self._selected: tuple[tuple[bool, int], Publication | None] | None = None

    @property
    def finished(self) -> bool:
        """Whether nothing will ever be published on the timer again, for this model."""
        return (self._reads_joint_states and not self._held
                and (self.report.joint_states_arrived or not self._defaults_until_state))

    def publication(self, stamp: tuple[int, int]) -> Publication | None:
        """The /tf publication of this tick, stamped `stamp`; None when it has no joint."""
        every = self._publishes_every_joint
        carried = self.report.carried
        # `carried` only grows while a model is active: its size tells whether it changed.
        key = (every, len(carried))
        if self._selected is None or self._selected[0] != key:
            self._selected = key, self._select(every, carried)
        selected = self._selected[1]
        if selected is None:
            return None
        return selected._replace(sec=stamp[0], nanosec=stamp[1])

    def resolved_fields(self, stamp: tuple[int, int]) -> ResolvedFields | None:
        """The resolved joint_states of this tick, at the defaults, stamped `stamp`.

        None once the sources drive it (a JointState arrived), and without a resolved state.
        """
        if self._resolved is None or not self._publishes_every_joint:
            return None
        return self._resolved.fields(stamp)

    @property
    def _publishes_every_joint(self) -> bool:
        return not self._reads_joint_states or (
            self._defaults_until_state and not self.report.joint_states_arrived)

    def _select(self, every: bool, carried: set[str]) -> Publication | None:
        """The rows of the default publication the timer sends (at a placeholder stamp)."""
        names, leaders, key, index, rows = self._defaults
        free = np.array([n not in carried and leader not in carried
                         for n, leader in zip(names, leaders)], dtype=bool)
        if not every:
            free &= np.array([leader in self._held for leader in leaders], dtype=bool)
        if not free.any():
            return None
        if not free.all():
            key, index, rows = (key, free.tobytes()), index[free], rows[free]
        return Publication(key, index, 0, 0, rows)

    @cached_property
    def _defaults(self) -> tuple[tuple[str, ...], tuple[str, ...], bytes, np.ndarray,
                                 np.ndarray]:
        """Every moving joint at its default position (once per model).

        Names, the independent joint each one's value comes from, key, index and rows.
        Single-value joints take the model's default positions; floating and planar joints sit
        at their origins.
        """
        model = self.model
        defaults = model.default_positions()
        update = model.update(tuple(defaults), list(defaults.values()))
        scalar = tuple(update.plan.joints)
        poses = [model.joint_pose(n, Pose()) for n in model.pose_joints]
        pose_index = [len(model.scalar_joints) + k for k in range(len(model.pose_joints))]
        index = np.concatenate([update.plan.joint_index, pose_index]).astype(np.intp)
        rows = np.concatenate([update.transforms.reshape(-1, 7),
                               kdl_signed(np.array([(*p.translation, *p.rotation) for p in poses]
                                                   ).reshape(-1, 7))])
        names = scalar + model.pose_joints
        leaders = tuple((model.mimic_source(n) or (n,))[0] for n in names)
        return names, leaders, index.tobytes(), index, rows
