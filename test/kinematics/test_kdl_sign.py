"""Published quaternions carry the sign KDL's Rotation::GetQuaternion gives them.

robot_state_publisher publishes KDL's quaternion of each transform's rotation; q and -q are one
rotation, so a comparison of components sees a difference unless the sign is KDL's. The
expected quaternions come from reference_math.kdl_quaternion, written from KDL's algorithm
(orocos_kdl/src/frames.cpp) in exact arithmetic, applied to the matrix of the rotation that the
published quaternion represents.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from reference_math import kdl_matrix, kdl_quaternion
from test_engine import engine, Recorded
from xcdr import joint_state_bytes

from urdf_state_publisher.description import DescriptionText
from urdf_state_publisher.engine.health import JointStateHealth
from urdf_state_publisher.engine.stream import JointStream
from urdf_state_publisher.geometry import quaternion_from_rpy
from urdf_state_publisher.kinematics.kdl_sign import kdl_signed
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.wire.tf import read_tf_message

pytestmark = pytest.mark.ros_free

TOLERANCE = 1e-12
HALF_PI = math.pi / 2


def unit(q) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return q / np.linalg.norm(q)


def rotations_near_the_rules_boundaries(rng: np.random.Generator) -> list[np.ndarray]:
    """Unit quaternions of both signs: random ones and those where KDL's choice changes."""
    found = [unit(rng.normal(size=4)) for _ in range(3000)]
    for _ in range(300):
        axis = unit(rng.normal(size=3))
        # Trace near 0 (w near ±1/2) and near KDL's 1e-12 (w² near (1 + 1e-12)/4): a few
        # 1e-13 to either side, far beyond rounding.
        for w2 in (0.25, 0.25 + 1e-9, 0.25 - 1e-9, 0.25 + 2e-13, 0.25 + 3e-13, 0.25 + 5e-13,
                   0.25 - 2e-13):
            for w in (math.sqrt(w2), -math.sqrt(w2)):
                found.append(np.array([*(axis * math.sqrt(1 - w2)), w]))
        # 180-degree rotations (w = 0), and close to them.
        for w in (0.0, 1e-7, -1e-7):
            found.append(np.array([*(axis * math.sqrt(1 - w * w)), w]))
    # Equal diagonal elements: components of equal magnitude, every sign, with w from 0 to 1/2.
    for w in (0.0, 0.1, 0.3, 0.5, -0.2, -0.5):
        for a, b in ((1.0, 0.0), (1.0, 0.5), (1.0, 1.0), (0.5, 1.0)):
            for signs in itertools.product((1.0, -1.0), repeat=3):
                for order in ((0, 1, 2), (0, 2, 1), (2, 0, 1)):
                    v = np.array([a, a, b])[list(order)] * signs
                    found.append(np.array([*(v / np.linalg.norm(v) * math.sqrt(1 - w * w)), w]))
    # URDF origins of quarter turns (optical frames among them), as written.
    angles = (0.0, HALF_PI, -HALF_PI, math.pi, -math.pi)
    for rpy in itertools.product(angles, repeat=3):
        q = np.array(quaternion_from_rpy(*rpy))
        found += [q, -q]
    return found


def kdl(q) -> np.ndarray:
    return np.array(kdl_quaternion(kdl_matrix(q)))


def rounding_decides(q, *, equal_diagonal: bool) -> bool:
    """Whether KDL's choice for `q` is within rounding of another: its trace within 1e-15 of
    the bound, or its two largest diagonal elements apart by less than 1e-15 (or equal, with
    `equal_diagonal`).

    There KDL's own double arithmetic on its own matrix decides, as it does for a moving
    joint's rotation at equal elements: those are equal by the rounding of a product.
    """
    r = kdl_matrix(q)
    trace = float(r[0][0] + r[1][1] + r[2][2])
    diagonal = sorted(float(r[i][i]) for i in range(3))
    gap = diagonal[2] - diagonal[1]
    return abs(trace - 1e-12) < 1e-15 or 0.0 < gap < 1e-15 or (equal_diagonal and gap == 0.0)


def assert_kdls_sign(q, *, equal_diagonal: bool = False) -> None:
    """`q` is KDL's quaternion of its rotation, sign included; where rounding decides the
    choice (`rounding_decides`), the same rotation."""
    expected = kdl(q)
    if rounding_decides(q, equal_diagonal=equal_diagonal):
        expected = expected if np.abs(q - expected).max() <= TOLERANCE else -expected
    assert np.abs(q - expected).max() <= TOLERANCE, (q, expected)


def test_the_sign_is_kdls_for_any_rotation():
    rotations = rotations_near_the_rules_boundaries(np.random.default_rng(51))
    rows = np.array([[1.0, 2.0, 3.0, *q] for q in rotations])
    signed = kdl_signed(rows)
    assert (signed[:, :3] == rows[:, :3]).all()
    negated = 0
    for q, ours in zip(rotations, signed[:, 3:]):
        # Only the sign changes: the same four numbers or their negatives, bit for bit.
        assert (ours == q).all() or (ours == -q).all(), q
        negated += bool((ours == -q).all())
        # Ties within rounding too: these are settled as exact arithmetic settles them.
        assert np.abs(ours - kdl(q)).max() <= TOLERANCE, (q, ours, kdl(q))
    assert 0 < negated < len(rotations)  # both cases are exercised


# A robot whose joints sit on the rule's boundaries: camera optical frames (a rotation of 120
# degrees about (1, 1, 1), trace 0, equal diagonal elements), quarter turns about x as the
# Panda's joints have, half turns, and random origins and axes.
def boundary_robot(rng: np.random.Generator) -> str:
    links, joints = ['<link name="base"/>'], []

    def joint(name, kind, rpy, axis=(0.0, 0.0, 1.0), parent='base'):
        links.append(f'<link name="{name}_link"/>')
        limit = '<limit lower="-10" upper="10" effort="1" velocity="1"/>' \
            if kind in ('revolute', 'prismatic') else ''
        joints.append(
            f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{name}_link"/>'
            f'<origin xyz="0.1 0.2 0.3" rpy="{" ".join(map(repr, rpy))}"/>'
            f'<axis xyz="{" ".join(map(repr, axis))}"/>{limit}</joint>')

    special = [(-HALF_PI, 0.0, -HALF_PI), (HALF_PI, 0.0, HALF_PI), (HALF_PI, 0.0, 0.0),
               (-HALF_PI, 0.0, 0.0), (math.pi, 0.0, HALF_PI), (math.pi, 0.0, -HALF_PI),
               (0.0, 0.0, math.pi), (0.0, 0.0, 0.0)]
    for k, rpy in enumerate(special):
        joint(f'fixed{k}', 'fixed', rpy)
        for kind in ('revolute', 'continuous', 'prismatic'):
            for a, axis in enumerate(((0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, -1.0, 0.0))):
                joint(f'{kind}{k}_{a}', kind, rpy, axis)
    for k in range(40):
        joint(f'random{k}', 'continuous', tuple(rng.uniform(-math.pi, math.pi, 3).tolist()),
              tuple(unit(rng.normal(size=3)).tolist()))
    return f'<robot name="boundaries">{"".join(links)}{"".join(joints)}</robot>'


def assert_kdls(transforms, *, equal_diagonal: bool = False) -> None:
    for t in transforms:
        assert_kdls_sign(np.array(t.values[3:]), equal_diagonal=equal_diagonal)


def test_tf_static_carries_kdls_quaternions():
    recorded = Recorded()
    engine(recorded).load(DescriptionText(boundary_robot(np.random.default_rng(1))))
    [static] = recorded.messages['/tf_static']
    transforms = read_tf_message(static)
    assert len(transforms) == 8
    assert_kdls(transforms)


@pytest.mark.parametrize('seed', range(4))
def test_tf_carries_kdls_quaternions_for_any_joint_values(seed):
    rng = np.random.default_rng(seed)
    text = boundary_robot(rng)
    model = RobotModel.from_urdf(text)
    names = list(model.scalar_joints)
    recorded = Recorded()
    state_engine = engine(recorded, ignore_timestamp=True)
    state_engine.load(DescriptionText(text))
    # Every joint at zero (its origin's rotation, on a boundary for the special ones), then
    # random values over two turns and more.
    values = [np.zeros(len(names))] + [rng.uniform(-8.0, 8.0, len(names)) for _ in range(40)]
    for k, positions in enumerate(values):
        state_engine.joint_state('/joint_states', joint_state_bytes(
            k + 1, 0, '', names, positions.tolist()))
    assert len(recorded.messages['/tf']) == len(values)
    for message in recorded.messages['/tf']:
        transforms = read_tf_message(message)
        assert len(transforms) == len(names)
        assert_kdls(transforms, equal_diagonal=True)


def test_the_joint_value_does_not_change_the_rotation_only_its_sign():
    """Against the rotation itself: the published quaternion is the joint's rotation."""
    model = RobotModel.from_urdf(boundary_robot(np.random.default_rng(7)))
    names = [n for n in model.scalar_joints if model.joint(n).type.value != 'prismatic']
    rng = np.random.default_rng(8)
    for _ in range(20):
        positions = rng.uniform(-8.0, 8.0, len(names))
        update = model.update(tuple(names), positions)
        for name, row in zip(update.plan.joints, update.transforms):
            expected = model.joint_pose(name, float(update.values[update.plan.joints.index(name)]))
            q = np.array(expected.rotation)
            assert min(np.abs(row[3:] - q).max(), np.abs(row[3:] + q).max()) <= TOLERANCE


def test_floating_and_planar_joints_carry_kdls_quaternions():
    text = ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
            '<joint name="float" type="floating"><parent link="a"/><child link="b"/>'
            '<origin rpy="1.5707963267948966 0 1.5707963267948966"/></joint>'
            '<joint name="plane" type="planar"><parent link="a"/><child link="c"/>'
            '<axis xyz="0 0 1"/></joint></robot>')
    model = RobotModel.from_urdf(text)
    stream = JointStream(model, report=JointStateHealth(clock=lambda: 0.0),
                         clock=lambda: (1, 0), publish_interval_ns=0, ignore_timestamp=True)
    rng = np.random.default_rng(3)
    for k in range(200):
        poses = np.array([[*rng.normal(size=3), *rng.normal(size=4)] for _ in range(2)])
        publication = stream.multi_dof_joint_state(['float', 'plane'], poses, (k + 1, 0))
        assert len(publication.rows) == 2
        for row in publication.rows:
            assert_kdls_sign(np.array(row[3:]))


def test_a_joint_at_zero_is_signed_as_its_origin_on_tf_static():
    """At zero a joint's rotation is its origin's, as a fixed joint's is: the C++ node's matrix
    is then the origin's own, and its quaternion what /tf_static gets for that origin, even
    where the origin sits on a tie of the rule (optical frames, quarter turns)."""
    model = RobotModel.from_urdf(boundary_robot(np.random.default_rng(5)))
    names = tuple(model.scalar_joints)
    update = model.update(names, np.zeros(len(names)))
    origins = np.array([[0.0, 0.0, 0.0, *model.joint(n).origin.rotation]
                        for n in update.plan.joints])
    # The origin's rotation, as the fixed joints' rows are signed for /tf_static.
    assert (update.transforms[:, 3:] == kdl_signed(origins)[:, 3:]).all()
    assert (kdl_signed(origins)[:, 3:] != origins[:, 3:]).any()  # some origins are negated
