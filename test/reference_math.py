"""Rotation math written independently of the package, for tests to check it against."""

import math

import numpy as np


def skew(v) -> np.ndarray:
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rodrigues(axis, angle: float) -> np.ndarray:
    """Rotation by `angle` about the unit vector `axis`: I + sin·K + (1 - cos)·K²."""
    k = skew(axis)
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * k @ k


def quaternion_matrix(q) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w): (w² - v·v)I + 2vvᵀ + 2w[v]×."""
    v, w = np.array(q[:3], dtype=float), float(q[3])
    return (w * w - v @ v) * np.eye(3) + 2 * np.outer(v, v) + 2 * w * skew(v)


def homogeneous(translation, rotation: np.ndarray) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = rotation
    m[:3, 3] = translation
    return m


def pose_matrix(pose) -> np.ndarray:
    """4×4 matrix of anything with `translation` and a quaternion `rotation`."""
    return homogeneous(pose.translation, quaternion_matrix(pose.rotation))
