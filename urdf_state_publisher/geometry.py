"""Rigid transforms as (translation, unit quaternion) pairs, quaternions ordered (x, y, z, w)."""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

__all__ = ['Pose', 'Quaternion', 'Vector3', 'normalized', 'quaternion_from_axis_angle',
           'quaternion_from_rpy', 'quaternion_multiply', 'rotate', 'rpy_from_quaternion',
           'twist_angle']

Vector3 = tuple[float, float, float]
Quaternion = tuple[float, float, float, float]


def quaternion_from_rpy(roll: float, pitch: float, yaw: float) -> Quaternion:
    """Quaternion of URDF's fixed-axis roll (X), then pitch (Y), then yaw (Z)."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    )


def quaternion_multiply(a: Quaternion, b: Quaternion) -> Quaternion:
    """Hamilton product a ⊗ b: the rotation b followed, in the parent frame, by a."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def quaternion_from_axis_angle(axis: Vector3, angle: float) -> Quaternion:
    """Rotation by `angle` radians about the unit vector `axis`."""
    s = math.sin(angle / 2)
    return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2))


def rotate(q: Quaternion, v: Vector3) -> Vector3:
    """Vector `v` rotated by the unit quaternion `q`."""
    qx, qy, qz, qw = q
    # v + 2w(u×v) + 2u×(u×v), with u the vector part: cheaper than forming q v q*.
    tx = 2 * (qy * v[2] - qz * v[1])
    ty = 2 * (qz * v[0] - qx * v[2])
    tz = 2 * (qx * v[1] - qy * v[0])
    return (
        v[0] + qw * tx + qy * tz - qz * ty,
        v[1] + qw * ty + qz * tx - qx * tz,
        v[2] + qw * tz + qx * ty - qy * tx,
    )


def normalized(q: Quaternion) -> Quaternion:
    """`q` scaled to unit length; the identity for a zero or non-finite quaternion."""
    # hypot overflows to inf near the largest double: scale to a largest |component| of 1 first.
    scale = max(abs(q[0]), abs(q[1]), abs(q[2]), abs(q[3]))
    if not math.isfinite(scale) or scale == 0.0:
        return (0.0, 0.0, 0.0, 1.0)
    x, y, z, w = q[0] / scale, q[1] / scale, q[2] / scale, q[3] / scale
    n = math.hypot(x, y, z, w)
    return (x / n, y / n, z / n, w / n)


def twist_angle(q: Quaternion, axis: Vector3) -> float:
    """The angle of the rotation `q` about the unit `axis` (swing-twist decomposition).

    The twist of q = (v, w) about `axis` has angle 2·atan2(v·axis, w), in (-2π, 2π].
    """
    x, y, z, w = q
    return 2.0 * math.atan2(x * axis[0] + y * axis[1] + z * axis[2], w)


def rpy_from_quaternion(q: Quaternion) -> Vector3:
    """Fixed-axis roll, pitch, yaw of the unit quaternion `q`: the inverse of quaternion_from_rpy.

    Roll and pitch are read after undoing the yaw, from matrix entries of size ~1, so that
    near pitch ±90° (where yaw is ill-defined) roll absorbs whatever yaw's rounding leaves.
    """
    x, y, z, w = q
    r00, r10, r20 = 1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)
    r01, r11 = 2 * (x * y - w * z), 1 - 2 * (x * x + z * z)
    r02, r12 = 2 * (x * z + w * y), 2 * (y * z - w * x)
    yaw = math.atan2(r10, r00)
    cy, sy = math.cos(yaw), math.sin(yaw)
    pitch = math.atan2(-r20, cy * r00 + sy * r10)
    roll = math.atan2(sy * r02 - cy * r12, cy * r11 - sy * r01)
    return (roll, pitch, yaw)


@dataclass(frozen=True)
class Pose:
    """A rigid transform: first rotate by `rotation`, then translate by `translation`."""

    translation: Vector3 = (0.0, 0.0, 0.0)
    rotation: Quaternion = (0.0, 0.0, 0.0, 1.0)

    @classmethod
    def from_xyz_rpy(cls, xyz: Vector3, rpy: Vector3) -> Pose:
        """Pose of a URDF `<origin xyz rpy>`."""
        return cls(tuple(float(c) for c in xyz), quaternion_from_rpy(*rpy))

    def __mul__(self, other: Pose) -> Pose:
        """Composition: `self * other` maps `other`'s child frame into `self`'s parent frame."""
        t = rotate(self.rotation, other.translation)
        return Pose(
            (self.translation[0] + t[0], self.translation[1] + t[1], self.translation[2] + t[2]),
            quaternion_multiply(self.rotation, other.rotation),
        )

    def inverse(self) -> Pose:
        """The transform that undoes this one."""
        x, y, z, w = self.rotation
        conjugate = (-x, -y, -z, w)
        t = rotate(conjugate, self.translation)
        return Pose((-t[0], -t[1], -t[2]), conjugate)

    def matrix(self) -> np.ndarray:
        """Homogeneous 4×4 matrix."""
        x, y, z, w = self.rotation
        m = np.eye(4)
        m[:3, :3] = (
            (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
            (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
            (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
        )
        m[:3, 3] = self.translation
        return m
