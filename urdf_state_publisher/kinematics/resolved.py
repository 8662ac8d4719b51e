"""The resolved joint state: every single-value joint as /tf shows it, for joint_states readers.

joint_state_publisher's users run it to merge partial states (an arm driver, a gripper driver)
into one JointState for MoveIt, controllers and loggers. The node already merges them for /tf;
a ResolvedState keeps the result per joint: the position used for its transform (mimic
followers computed, values clamped), and the velocity and effort its source gave. Nothing here
imports ROS.

Velocities and efforts: a joint whose latest state gave none has NaN, as ros2_control's
joint_state_broadcaster writes for a joint without that interface; when no joint has one, the
message's array is empty (the JointState convention for "not measured"). Never a made-up zero.
A mimic follower's velocity is its leader's times the composed multiplier; its effort is its
leader's, as joint_state_publisher gives it. Asked for (joint_state_publisher's
publish_default_velocities and publish_default_efforts), an unknown velocity or effort is 0.0
instead, and the array always full.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from urdf_state_publisher.kinematics.model import RobotModel, UpdatePlan

__all__ = ['ResolvedFields', 'ResolvedState']

NEVER_NS = np.iinfo(np.int64).min // 2


class ResolvedFields(NamedTuple):
    """One resolved JointState: `names[i]` has `positions[i]`; None for no velocities/efforts."""

    sec: int
    nanosec: int
    names: tuple[str, ...]
    positions: np.ndarray
    velocities: np.ndarray | None
    efforts: np.ndarray | None


class ResolvedState:
    """The newest value of every single-value joint of a model, in `model.scalar_joints` order.

    Starts at the default positions (`RobotModel.default_positions`, followers resolved), or at
    what an earlier ResolvedState held for joints of the same name (a reload).
    """

    def __init__(self, model: RobotModel, previous: ResolvedState | None = None, *,
                 zero_unknown_velocities: bool = False, zero_unknown_efforts: bool = False):
        self.zero_unknown_velocities = zero_unknown_velocities
        self.zero_unknown_efforts = zero_unknown_efforts
        self.names = model.scalar_joints
        count = len(self.names)
        defaults = model.default_positions()
        self.positions = np.array([defaults[name] for name in self.names], dtype=float)
        self.velocities = np.full(count, np.nan)
        self.efforts = np.full(count, np.nan)
        self.given = np.zeros(count, dtype=bool)  # whether a joint state gave it a value
        self.stamp = (0, 0)  # of the newest state stored
        self.stamp_ns = NEVER_NS
        if previous is not None:
            index = {name: i for i, name in enumerate(self.names)}
            kept = [(index[n], k) for k, n in enumerate(previous.names)
                    if n in index and previous.given[k]]
            if kept:
                mine, theirs = (np.array(column, dtype=np.intp) for column in zip(*kept))
                lower = np.array([model.limits(self.names[i])[0] for i in mine])
                upper = np.array([model.limits(self.names[i])[1] for i in mine])
                self.positions[mine] = np.minimum(np.maximum(previous.positions[theirs],
                                                             lower), upper)
                self.velocities[mine] = previous.velocities[theirs]
                self.efforts[mine] = previous.efforts[theirs]
                self.given[mine] = True
            self.stamp, self.stamp_ns = previous.stamp, previous.stamp_ns

    def store(self, plan: UpdatePlan, values: np.ndarray, velocities: np.ndarray | None,
              efforts: np.ndarray | None, stamp: tuple[int, int], stamp_ns: int) -> None:
        """Keep the outputs of one joint state: `values[k]` of joint `plan.joint_index[k]`.

        `velocities` and `efforts` are the message's, in the order of `plan.names`; any other
        length counts as not given.
        """
        index = plan.joint_index
        self.positions[index] = values
        self.given[index] = True
        self.velocities[index] = _followed(velocities, plan, scaled=True)
        self.efforts[index] = _followed(efforts, plan, scaled=False)
        if stamp_ns > self.stamp_ns:
            self.stamp, self.stamp_ns = stamp, stamp_ns

    def restart_time(self, stamp: tuple[int, int], stamp_ns: int) -> None:
        """Time moved backwards (a simulation reset, a bag loop): `stamp` is the newest again."""
        self.stamp, self.stamp_ns = stamp, stamp_ns

    def fields(self, stamp: tuple[int, int] | None = None) -> ResolvedFields:
        """The JointState to publish, stamped with the newest state stored (or `stamp`)."""
        sec, nanosec = self.stamp if stamp is None else stamp
        return ResolvedFields(sec, nanosec, self.names, self.positions.copy(),
                              _given_or_none(self.velocities, self.zero_unknown_velocities),
                              _given_or_none(self.efforts, self.zero_unknown_efforts))

    def defaulted(self) -> tuple[str, ...]:
        """The joints no joint state has given a value yet: published at their default."""
        return tuple(self.names[i] for i in np.flatnonzero(~self.given))


def _followed(message_values: np.ndarray | None, plan: UpdatePlan, scaled: bool
              ) -> np.ndarray | float:
    """Per output of `plan`, the message's value of the joint it follows (times the gain).

    NaN for all when the message gives none.
    """
    if message_values is None or len(message_values) != len(plan.names):
        return np.nan
    values = np.asarray(message_values, dtype=float)[plan.gather]
    if scaled and plan.gain is not None:
        values = values * plan.gain
    # An infinity is no measurement either; NaN says "unknown" to every reader.
    values[~np.isfinite(values)] = np.nan
    return values


def _given_or_none(values: np.ndarray, zero_unknown: bool) -> np.ndarray | None:
    """The values to publish: unknown ones 0.0 when `zero_unknown`, else NaN (None: all)."""
    if zero_unknown:
        return np.nan_to_num(values, nan=0.0)
    return None if np.isnan(values).all() else values.copy()


def renamed_columns(values: np.ndarray | None, names: Sequence[str],
                    kept: Sequence[str]) -> np.ndarray | None:
    """`values` (one per name of `names`) for the names `kept`, a subsequence of `names`.

    For a state whose NaN positions were dropped: its plan names fewer joints than the message.
    """
    if values is None or len(values) != len(names):
        return None
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        first.setdefault(name, i)
    return np.asarray(values, dtype=float)[[first[n] for n in kept]]
