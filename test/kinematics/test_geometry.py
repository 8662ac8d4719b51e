"""Pure tests of the transform math against independent rotation-matrix constructions."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from reference_math import homogeneous, pose_matrix, quaternion_matrix, rodrigues

from urdf_state_publisher.geometry import (
    normalized,
    Pose,
    quaternion_from_axis_angle,
    quaternion_from_rpy,
    quaternion_multiply,
    rotate,
    rpy_from_quaternion,
    twist_angle,
)

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

TOLERANCE = 1e-12
PROPERTY = settings(max_examples=200, deadline=None)


# Independent constructions: elementary rotation matrices and Rodrigues' formula -----------

def rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# Strategies -------------------------------------------------------------------------------

angles = st.floats(-2 * math.pi, 2 * math.pi, allow_nan=False)
coordinates = st.floats(-10.0, 10.0, allow_nan=False)
vectors = st.tuples(coordinates, coordinates, coordinates)
unit_vectors = st.tuples(coordinates, coordinates, coordinates).filter(
    lambda v: math.hypot(*v) > 1e-3).map(lambda v: tuple(c / math.hypot(*v) for c in v))
quaternions = st.tuples(*[st.floats(-1.0, 1.0, allow_nan=False)] * 4).filter(
    lambda q: math.sqrt(sum(c * c for c in q)) > 0.1).map(
    lambda q: tuple(c / math.sqrt(sum(c * c for c in q)) for c in q))
poses = st.builds(Pose, vectors, quaternions)


# quaternion_from_rpy ----------------------------------------------------------------------

RPY_CASES = [
    (0.0, 0.0, 0.0),
    (math.pi / 2, 0.0, 0.0),
    (0.0, math.pi / 2, 0.0),
    (0.0, 0.0, math.pi / 2),
    (math.pi, 0.0, 0.0),
    (0.0, 0.0, -math.pi),
    (0.3, -0.4, 0.5),
    (0.2, math.pi / 2, -0.7),   # gimbal lock: roll and yaw about the same axis
    (-1.5, -math.pi / 2, 2.5),
    (3.0, 2.0, -3.0),
]


@pytest.mark.parametrize('roll, pitch, yaw', RPY_CASES)
def test_quaternion_from_rpy_is_fixed_axis_xyz(roll, pitch, yaw):
    q = quaternion_from_rpy(roll, pitch, yaw)
    assert abs(math.sqrt(sum(c * c for c in q)) - 1.0) < TOLERANCE
    expected = rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)
    assert np.abs(quaternion_matrix(q) - expected).max() < TOLERANCE


@PROPERTY
@given(angles, angles, angles)
def test_quaternion_from_rpy_matches_rz_ry_rx(roll, pitch, yaw):
    q = quaternion_from_rpy(roll, pitch, yaw)
    assert abs(math.sqrt(sum(c * c for c in q)) - 1.0) < TOLERANCE
    expected = rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)
    assert np.abs(quaternion_matrix(q) - expected).max() < TOLERANCE


def test_quaternion_from_rpy_rotates_unit_vectors_as_urdf_says():
    # Yaw a quarter turn: x goes to y. Pitch a quarter turn: z goes to x. Roll: y goes to z.
    cases = [((0, 0, math.pi / 2), (1, 0, 0), (0, 1, 0)),
             ((0, math.pi / 2, 0), (0, 0, 1), (1, 0, 0)),
             ((math.pi / 2, 0, 0), (0, 1, 0), (0, 0, 1))]
    for rpy, v, expected in cases:
        assert np.allclose(rotate(quaternion_from_rpy(*rpy), v), expected, atol=TOLERANCE)


# Quaternion primitives --------------------------------------------------------------------

@PROPERTY
@given(unit_vectors, angles)
def test_quaternion_from_axis_angle_matches_rodrigues(axis, angle):
    q = quaternion_from_axis_angle(axis, angle)
    assert np.abs(quaternion_matrix(q) - rodrigues(axis, angle)).max() < TOLERANCE


@PROPERTY
@given(quaternions, quaternions)
def test_quaternion_multiply_composes_matrices(a, b):
    product = quaternion_multiply(a, b)
    expected = quaternion_matrix(a) @ quaternion_matrix(b)
    assert np.abs(quaternion_matrix(product) - expected).max() < TOLERANCE


@PROPERTY
@given(quaternions, vectors)
def test_rotate_matches_matrix_product(q, v):
    assert np.abs(np.array(rotate(q, v)) - quaternion_matrix(q) @ np.array(v)).max() < 1e-11


@pytest.mark.parametrize('q, expected', [
    ((0.0, 0.0, 0.0, 2.0), (0.0, 0.0, 0.0, 1.0)),
    ((3.0, 0.0, 4.0, 0.0), (0.6, 0.0, 0.8, 0.0)),
    ((-1.0, -1.0, -1.0, -1.0), (-0.5, -0.5, -0.5, -0.5)),
    ((0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)),
    ((math.nan, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 1.0)),
    ((math.inf, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 1.0)),
])
def test_normalized(q, expected):
    assert normalized(q) == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize('q, expected', [
    ((1e-300, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)),
    ((0.0, 1e200, 0.0, 1e200), (0.0, math.sqrt(0.5), 0.0, math.sqrt(0.5))),
])
def test_normalized_finite_non_zero_quaternion_without_overflow(q, expected):
    assert normalized(q) == pytest.approx(expected, abs=TOLERANCE)


# Pose -------------------------------------------------------------------------------------

@PROPERTY
@given(vectors, angles, angles, angles)
def test_from_xyz_rpy_is_urdf_origin(xyz, roll, pitch, yaw):
    pose = Pose.from_xyz_rpy(xyz, (roll, pitch, yaw))
    expected = homogeneous(xyz, rot_z(yaw) @ rot_y(pitch) @ rot_x(roll))
    assert np.abs(pose.matrix() - expected).max() < TOLERANCE


@PROPERTY
@given(poses)
def test_matrix_is_homogeneous_transform(pose):
    m = pose.matrix()
    assert np.abs(m - pose_matrix(pose)).max() < TOLERANCE
    assert np.abs(m[:3, :3] @ m[:3, :3].T - np.eye(3)).max() < TOLERANCE
    assert np.linalg.det(m[:3, :3]) == pytest.approx(1.0, abs=TOLERANCE)
    assert m[3].tolist() == [0.0, 0.0, 0.0, 1.0]


@PROPERTY
@given(poses, poses)
def test_composition_is_matrix_product(a, b):
    assert np.abs((a * b).matrix() - pose_matrix(a) @ pose_matrix(b)).max() < 1e-11


@PROPERTY
@given(poses, poses, poses)
def test_composition_is_associative(a, b, c):
    assert np.abs(((a * b) * c).matrix() - (a * (b * c)).matrix()).max() < 1e-11


@PROPERTY
@given(poses)
def test_identity_is_neutral(pose):
    for composed in (Pose() * pose, pose * Pose()):
        assert np.abs(composed.matrix() - pose.matrix()).max() < TOLERANCE


@PROPERTY
@given(poses)
def test_inverse_undoes(pose):
    inverse = pose.inverse()
    assert np.abs(inverse.matrix() - np.linalg.inv(pose_matrix(pose))).max() < 1e-11
    for composed in (pose * inverse, inverse * pose):
        assert np.abs(composed.matrix() - np.eye(4)).max() < 1e-11


@PROPERTY
@given(poses, poses)
def test_inverse_of_product_is_reversed_product_of_inverses(a, b):
    left = (a * b).inverse().matrix()
    right = (b.inverse() * a.inverse()).matrix()
    assert np.abs(left - right).max() < 1e-11


@PROPERTY
@given(poses, vectors)
def test_pose_maps_points_like_its_matrix(pose, point):
    # Pose((p), identity) is the point p; composing places it in the parent frame.
    mapped = (pose * Pose(point)).translation
    expected = pose_matrix(pose) @ np.array([*point, 1.0])
    assert np.abs(np.array(mapped) - expected[:3]).max() < 1e-11


@pytest.mark.parametrize('rpy', [(0.0, 0.0, 0.0), (0.2, -0.3, 0.1), (-3.0, 1.2, 2.5),
                                 (0.5, -1.5, -2.9)])
def test_rpy_from_quaternion_inverts_urdf_rpy(rpy):
    # Exact up to rounding (about 1e-15 here, pitch -1.5 included): a 1e-9 bound hid errors.
    assert rpy_from_quaternion(quaternion_from_rpy(*rpy)) == pytest.approx(rpy, abs=TOLERANCE)


TWIST_AXIS = (0.0, 0.6, 0.8)
# Unit axes normal to TWIST_AXIS, and swing angles in (-pi, pi).
SWING_AXES = [(1.0, 0.0, 0.0), (0.0, 0.8, -0.6), (math.sqrt(0.5), -0.8 * math.sqrt(0.5),
                                                   0.6 * math.sqrt(0.5))]


@pytest.mark.parametrize('angle', [0.0, 0.4, -2.5, 3.1])
def test_twist_angle_of_a_pure_twist_is_its_angle(angle):
    assert twist_angle(quaternion_from_axis_angle(TWIST_AXIS, angle), TWIST_AXIS) == \
        pytest.approx(angle, abs=TOLERANCE)


@pytest.mark.parametrize('swing_angle', [0.3, -2.0, 3.0])
@pytest.mark.parametrize('swing_axis', SWING_AXES)
@pytest.mark.parametrize('angle', [0.0, 0.4, -2.5, 3.1])
def test_twist_angle_is_the_rotation_about_the_axis(angle, swing_axis, swing_angle):
    """A swing about an axis normal to the twist axis, before or after it, leaves its angle.

    With q = swing ⊗ twist, q's vector part along the axis is cos(swing/2)·sin(twist/2) and its
    scalar part cos(swing/2)·cos(twist/2): the twist angle is exact, up to rounding.
    """
    assert abs(np.dot(swing_axis, TWIST_AXIS)) < TOLERANCE
    twist = quaternion_from_axis_angle(TWIST_AXIS, angle)
    swing = quaternion_from_axis_angle(swing_axis, swing_angle)
    for rotation in (quaternion_multiply(swing, twist), quaternion_multiply(twist, swing)):
        assert twist_angle(rotation, TWIST_AXIS) == pytest.approx(angle, abs=TOLERANCE)
