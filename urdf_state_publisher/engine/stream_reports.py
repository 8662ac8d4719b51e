"""What a JointState's problems count as in the health report (engine/health.py).

A JointStream (engine/stream.py) hands each message's problems here: names and positions of
different
lengths, unknown, duplicated or non-scalar joints, NaN, clamped values, velocities or efforts
of the wrong length. Nothing here imports ROS.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from urdf_state_publisher.description.messages import listing
from urdf_state_publisher.engine.health import (
    CLAMPED,
    DUPLICATED,
    DYNAMICS_MISMATCH,
    JointStateHealth,
    LENGTH_MISMATCH,
    NAMES_KEPT,
    NON_FINITE,
    NOT_SCALAR,
    UNKNOWN,
)
from urdf_state_publisher.kinematics.model import JointUpdate

__all__ = ['fits', 'report_dynamics_mismatch', 'report_length_mismatch', 'report_unknown',
           'report_update']


def report_update(report: JointStateHealth, names: Sequence[str],
                  positions: Sequence[float] | np.ndarray, update: JointUpdate) -> None:
    """Report what is wrong with a JointState."""
    plan = update.plan
    if len(names) != len(positions):
        report_length_mismatch(report, names, len(positions))
    if plan.unknown:
        report_unknown(report, plan.unknown)
    if plan.duplicated:
        report.drop(DUPLICATED, len(plan.duplicated))
        report.event(DUPLICATED, plan.duplicated)
    if plan.not_scalar:
        report.drop(NOT_SCALAR, len(plan.not_scalar))
        report.event(NOT_SCALAR, plan.not_scalar)
    if update.non_finite:
        report.drop(NON_FINITE, len(update.non_finite))
        report.event(NON_FINITE, update.non_finite)
    if update.clamped:
        report.clamped.update(update.clamped)
        report.event(CLAMPED, update.clamped)

def report_length_mismatch(report: JointStateHealth, names: Sequence[str], positions: int
                           ) -> None:
    """Report a JointState with more names than positions, or more positions than names."""
    report.drop(LENGTH_MISMATCH)
    if positions < len(names):
        detail = f'ignoring the joints without a position: {listing(names[positions:])}'
    else:
        detail = f'ignoring the {positions - len(names)} positions without a name'
    report.event(LENGTH_MISMATCH,
                      (f'{len(names)} names but {positions} positions, {detail}',))

def report_dynamics_mismatch(report: JointStateHealth, names: Sequence[str],
                             velocities: Sequence[float] | None,
                             efforts: Sequence[float] | None) -> None:
    """Report velocities or efforts that are neither one per name nor none."""
    report.event(DYNAMICS_MISMATCH, [
        f'{field}: {len(values)} for {len(names)} names ({listing(names)})'
        for field, values in (('velocity', velocities), ('effort', efforts))
        if not fits(values, len(names))])

def report_unknown(report: JointStateHealth, names: tuple[str, ...]) -> None:
    """Note unknown names; keep up to NAMES_KEPT of them for /diagnostics, then count."""
    report.event(UNKNOWN, names)
    if report.unknown_overflow or len(report.unknown) >= NAMES_KEPT:
        report.unknown_overflow += sum(1 for n in names if n not in report.unknown)
        return
    new = [n for n in names if n not in report.unknown]
    room = NAMES_KEPT - len(report.unknown)
    report.unknown.update(new[:room])
    report.unknown_overflow = max(len(new) - room, 0)


def fits(values: Sequence[float] | None, count: int) -> bool:
    """Whether a JointState's velocities or efforts are one per name, or none (not measured)."""
    return values is None or len(values) in (0, count)
