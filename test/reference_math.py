"""Rotation math written independently of the package, for tests to check it against."""

from fractions import Fraction
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


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's fixed-axis rotation: about X by roll, then Y by pitch, then Z by yaw."""
    return (rodrigues((0.0, 0.0, 1.0), yaw) @ rodrigues((0.0, 1.0, 0.0), pitch)
            @ rodrigues((1.0, 0.0, 0.0), roll))


def matrix_quaternion(r: np.ndarray) -> tuple[float, float, float, float]:
    """A unit quaternion (x, y, z, w) of the rotation matrix `r`, from its largest component."""
    r = [[float(c) for c in row] for row in r]
    diagonal = (r[0][0], r[1][1], r[2][2])
    trace = sum(diagonal)
    if trace >= max(diagonal):
        w = math.sqrt(1.0 + trace) / 2
        return ((r[2][1] - r[1][2]) / (4 * w), (r[0][2] - r[2][0]) / (4 * w),
                (r[1][0] - r[0][1]) / (4 * w), w)
    i = diagonal.index(max(diagonal))
    j, k = (i + 1) % 3, (i + 2) % 3
    v = [0.0, 0.0, 0.0]
    v[i] = math.sqrt(1.0 + r[i][i] - r[j][j] - r[k][k]) / 2
    v[j] = (r[j][i] + r[i][j]) / (4 * v[i])
    v[k] = (r[k][i] + r[i][k]) / (4 * v[i])
    return (v[0], v[1], v[2], (r[k][j] - r[j][k]) / (4 * v[i]))


# KDL's quaternion of a rotation, as robot_state_publisher publishes it: kdl_parser makes the
# matrix from urdfdom's quaternion with Rotation::Quaternion, and robot_state_publisher's
# kdlToTransform (ROS 2; tf2_kdl's in ROS 1) reads it back with Rotation::GetQuaternion. Both in
# orocos_kdl/src/frames.cpp, unchanged from orocos_kinematics_dynamics 507de66 (ROS 2 Humble's
# orocos_kdl_vendor) to ce4bcb6 (Jazzy's and Rolling's); all in double since 2013 (247c725).
# Written here from that algorithm, with the matrix and the trace in exact arithmetic, so that
# equal diagonal elements are equal and not whatever rounding makes them.

KDL_TRACE_EPSILON = 1e-12


def kdl_matrix(q) -> list[list[Fraction]]:
    """KDL's Rotation::Quaternion(x, y, z, w), exactly: each entry from the four squares and
    products of the components."""
    x, y, z, w = (Fraction(float(c)) for c in q)
    return [[w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z]]


def kdl_quaternion(r) -> tuple[float, float, float, float]:
    """KDL's Rotation::GetQuaternion of the matrix `r`: (x, y, z, w).

    Trace above 1e-12: w = sqrt(trace + 1)/2, positive, and x, y, z from the differences of the
    off-diagonal pairs. Otherwise from the largest diagonal element, compared strictly in the
    order r00 (if above both others), r11 (if above r22), else r22: that component is
    sqrt(1 + 2·element - trace)/2, positive, and the rest follow from the sums and differences
    of the off-diagonal pairs.
    """
    trace = r[0][0] + r[1][1] + r[2][2]
    if trace > KDL_TRACE_EPSILON:
        w = math.sqrt(float(trace + 1)) / 2
        return (float(r[2][1] - r[1][2]) / (4 * w), float(r[0][2] - r[2][0]) / (4 * w),
                float(r[1][0] - r[0][1]) / (4 * w), w)
    if r[0][0] > r[1][1] and r[0][0] > r[2][2]:
        i = 0
    elif r[1][1] > r[2][2]:
        i = 1
    else:
        i = 2
    j, k = (i + 1) % 3, (i + 2) % 3
    v = [0.0, 0.0, 0.0]
    v[i] = math.sqrt(float(1 + r[i][i] - r[j][j] - r[k][k])) / 2
    v[j] = float(r[j][i] + r[i][j]) / (4 * v[i])
    v[k] = float(r[k][i] + r[i][k]) / (4 * v[i])
    return (v[0], v[1], v[2], float(r[k][j] - r[j][k]) / (4 * v[i]))
