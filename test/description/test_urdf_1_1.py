"""URDF 1.1 as urdfdom reads it: versions, quat_xyzw origins, capsules; where ours is stricter.

The rules come from ros/urdfdom (PR #235 and the urdfdom 5.x tests named in each case) and
ros/urdfdom_headers (urdf_model/pose.h). Rotations are checked against test/reference_math.py,
never against the package's own math.
"""

from collections.abc import Callable
import math
import random
import sys
from typing import TypeVar

import numpy as np
import pytest
from reference_math import (
    homogeneous,
    matrix_quaternion,
    pose_matrix,
    quaternion_matrix,
    rodrigues,
    rpy_matrix,
)

from urdf_state_publisher import DescriptionError, parse_description, RobotModel

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

LIMIT = '<limit lower="-3" upper="3" effort="1" velocity="1"/>'
HALF_PI = math.pi / 2
T = TypeVar('T')



def joint_named(description, name: str):
    """The joint of `description` called `name`."""
    [joint] = [j for j in description.joints if j.name == name]
    return joint

def robot(*parts: str, version: str | None = '1.1') -> str:
    """A <robot> of `parts`, declaring `version` (None: no version attribute)."""
    declared = '' if version is None else f' version="{version}"'
    return f'<robot name="r"{declared}>' + ''.join(parts) + '</robot>'


def fixed_joint(origin: str, name: str = 'j') -> str:
    """Links a and b and a fixed joint between them with the given <origin> attributes."""
    return ('<link name="a"/><link name="b"/>'
            f'<joint name="{name}" type="fixed"><parent link="a"/><child link="b"/>'
            f'<origin {origin}/></joint>')


def error_of(text: str) -> str:
    with pytest.raises(DescriptionError) as info:
        parse_description(text)
    return str(info.value)


def rotation_of(text: str) -> np.ndarray:
    """The matrix, by reference math, of joint 'j''s origin rotation as the package reads it."""
    return quaternion_matrix(joint_named(parse_description(text), 'j').origin.rotation)


# --------------------------------------------------------------------------- versions

@pytest.mark.parametrize(('attribute', 'version'), [
    # urdfdom urdf_version_test.cpp URDF_VERSION.test_version_not_specified and
    # URDF_VERSION_CLASS.test_null_ptr: no attribute is 1.0.
    pytest.param(None, '1.0', id='absent'),
    # URDF_VERSION.test_version_one_float.
    pytest.param('1.0', '1.0', id='1.0'),
    # urdf_schema_quaternion_test.cpp parse_rot_quat_version_1_1 (PR #235 allows 1.1).
    pytest.param('1.1', '1.1', id='1.1'),
    # URDFVersion reads each field as an integer: leading zeros change nothing.
    pytest.param('01.01', '1.1', id='leading-zeros'),
])
def test_accepted_versions(attribute: str | None, version: str) -> None:
    assert parse_description(robot('<link name="a"/>', version=attribute)).version == version


@pytest.mark.parametrize(('attribute', 'reason'), [
    # URDF_VERSION.test_version_one_int and URDF_VERSION_CLASS.test_too_many_dots,
    # test_not_enough_numbers, test_no_numbers, URDF_VERSION.test_version_wrong_type: the
    # form must be "x.y" (urdfdom's split_string drops an empty piece after the last dot).
    pytest.param('1', 'form "major.minor"', id='one-int'),
    pytest.param('1.0.0', 'form "major.minor"', id='too-many-dots'),
    pytest.param('1.', 'form "major.minor"', id='not-enough-numbers'),
    pytest.param('abc', 'form "major.minor"', id='no-numbers'),
    pytest.param('foo', 'form "major.minor"', id='wrong-type'),
    pytest.param('', 'form "major.minor"', id='empty'),
    # URDF_VERSION_CLASS.test_no_major_number.
    pytest.param('.1', 'blank', id='no-major-number'),
    # URDF_VERSION_CLASS.test_negative_major_number and test_negative_minor_number.
    pytest.param('-1.0', 'negative', id='negative-major'),
    pytest.param('1.-1', 'negative', id='negative-minor'),
    # URDF_VERSION_CLASS.test_dots_no_numbers and test_dots_one_number.
    pytest.param('a.c', "'a' is not a whole number", id='dots-no-numbers'),
    pytest.param('1.c', "'c' is not a whole number", id='dots-one-number'),
    pytest.param('1.x', "'x' is not a whole number", id='1.x'),
    # URDF_VERSION_CLASS.test_trailing_junk.
    pytest.param('1.0~pre6', "'0~pre6' has characters after the number", id='trailing-junk'),
    # URDF_VERSION.test_version_unsupported_version ("2"): well-formed versions other than
    # 1.0, 1.1 and 1.2 are refused by urdfdom 6's parseURDF (1.2:
    # test/description/test_urdf_1_2.py).
    pytest.param('2.0', 'URDF 2.0 is not supported', id='2.0'),
    pytest.param('1.3', 'URDF 1.3 is not supported', id='1.3'),
    pytest.param('0.9', 'URDF 0.9 is not supported', id='0.9'),
    # Stricter than urdfdom, whose strtol takes a sign or leading blanks in a field.
    pytest.param('+1.1', "'+1' is not a whole number", id='plus-sign'),
    pytest.param(' 1.1', "' 1' is not a whole number", id='leading-blank'),
])
def test_refused_versions_say_why_and_what_to_write(attribute: str, reason: str) -> None:
    message = error_of(robot('<link name="a"/>', version=attribute))
    assert message.startswith(f'<robot version={attribute!r}>: ')
    assert reason in message
    assert 'write version="1.0", "1.1" or "1.2", or leave version out for 1.0' in message


# --------------------------------------------------------------------------- quaternions

def test_quaternion_origin_in_1_1_is_read_exactly() -> None:
    """urdf_schema_quaternion_test.cpp parse_rot_quat_version_1_1: 0.5 0.5 0.5 0.5 as is."""
    text = robot(fixed_joint('xyz="1 2 3" quat_xyzw="0.5 0.5 0.5 0.5"'))
    origin = joint_named(parse_description(text), 'j').origin
    assert origin.quat_xyzw == (0.5, 0.5, 0.5, 0.5)
    assert origin.rotation == (0.5, 0.5, 0.5, 0.5)
    assert origin.xyz == (1.0, 2.0, 3.0)


def test_rpy_origin_gives_the_same_rotation() -> None:
    """urdf_schema_quaternion_test.cpp parse_rot_rpy_version_1_0: rpy 1.5707963 0 1.5707963."""
    rotation = joint_named(parse_description(robot(fixed_joint('rpy="1.5707963 0 1.5707963"'),
                                                   version='1.0')), 'j').origin.rotation
    assert rotation == pytest.approx((0.5, 0.5, 0.5, 0.5), abs=1e-6)


@pytest.mark.parametrize('version', [None, '1.0'])
@pytest.mark.parametrize('origin', ['quat_xyzw="0.5 0.5 0.5 0.5"',
                                    'rpy="0 0 0" quat_xyzw="0.5 0.5 0.5 0.5"'])
def test_quaternion_in_a_1_0_document_is_an_error(version: str | None, origin: str) -> None:
    """Stricter than urdfdom: parse_rot_quat_ignored_version_1_0 and
    parse_rot_both_quat_ignored_version_1_0 show urdfdom dropping quat_xyzw (pose.cpp warns
    'Ignoring quat_xyzw attribute requiring URDF version 1.1') and using rpy or the identity:
    a silently wrong frame. Here it is an error that says how to fix it."""
    message = error_of(robot(fixed_joint(origin), version=version))
    assert "joint 'j' <origin>: quat_xyzw needs URDF 1.1" in message
    assert 'add version="1.1" to <robot>' in message


def test_rpy_and_quaternion_together_in_1_1_is_an_error() -> None:
    """urdf_schema_quaternion_test.cpp parse_rot_both_error_version_1_1: no model."""
    message = error_of(robot(fixed_joint('rpy="0 0 0" quat_xyzw="0.5 0.5 0.5 0.5"')))
    assert "joint 'j' <origin> has both rpy and quat_xyzw" in message


@pytest.mark.parametrize('scale', [1e-300, 1e-3, 0.5, 3.0, 1e5, 1e300, -1.0, -7.5])
def test_quaternion_of_any_length_is_its_unit_quaternion(scale: float) -> None:
    """urdfdom_headers pose.h Rotation::setFromQuaternion normalises what it is given."""
    unit = matrix_quaternion(rpy_matrix(0.3, -1.1, 2.5))
    written = ' '.join(repr(c * scale) for c in unit)
    expected = rpy_matrix(0.3, -1.1, 2.5)
    assert np.abs(rotation_of(robot(fixed_joint(f'quat_xyzw="{written}"'))) - expected).max() \
        < 1e-12


def test_quaternion_near_the_largest_double_is_normalised() -> None:
    """urdfdom's normalize() squares the components and overflows to a zero rotation here."""
    text = robot(fixed_joint('quat_xyzw="1.7e308 0 0 1.7e308"'))
    expected = quaternion_matrix((math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5)))
    assert np.abs(rotation_of(text) - expected).max() < 1e-15


@pytest.mark.parametrize(('quaternion', 'reason'), [
    # Stricter than urdfdom: Rotation::normalize() turns a zero quaternion into the identity.
    pytest.param('0 0 0 0', 'quat_xyzw is zero', id='zero'),
    pytest.param('-0 0 0 -0', 'quat_xyzw is zero', id='negative-zero'),
    pytest.param('0 0 1', 'quat_xyzw needs 4 numbers, got 3', id='three-numbers'),
    pytest.param('0 0 0 1 0', 'quat_xyzw needs 4 numbers, got 5', id='five-numbers'),
    pytest.param('0 0 nan 1', 'quat_xyzw is not finite', id='nan'),
    pytest.param('0 inf 0 1', 'quat_xyzw is not finite', id='inf'),
    pytest.param('0 0 1e999 1', 'quat_xyzw is not finite', id='overflowing-text'),
    pytest.param('0 0 x 1', "quat_xyzw is not a number ('x')", id='not-a-number'),
])
def test_bad_quaternions_are_errors_naming_the_joint(quaternion: str, reason: str) -> None:
    message = error_of(robot(fixed_joint(f'quat_xyzw="{quaternion}"')))
    assert message.startswith("joint 'j' <origin>")
    assert reason in message


# --------------------------------------------------------------------------- equivalence

# Roll, pitch, yaw per joint: general ones, and pitch at and next to ±90°, where rpy loses a
# degree of freedom and a quaternion does not.
ANGLES = [
    (0.3, -0.7, 1.9), (0.0, HALF_PI, 0.0), (0.4, HALF_PI, -1.2), (-2.0, -HALF_PI, 0.5),
    (1.0, HALF_PI - 1e-9, 2.0), (-0.5, -HALF_PI + 1e-7, -3.0), (math.pi, 0.2, -math.pi),
    (0.0, 0.0, 0.0),
]
# Written lengths of the quaternions: unit, and far from it (urdfdom normalises).
SCALES = [1.0, 2.5, -1.0, 1e-4, 3e6, 0.7, -42.0, 1.0]
TYPES = ['revolute', 'continuous', 'prismatic', 'fixed', 'revolute', 'continuous', 'fixed',
         'revolute']
AXES = ['0 0 1', '1 0 0', '0 1 0', '1 0 0', '0.6 0 0.8', '1 1 1', '0 0 1', '0 -1 0']


def chain(rotations: list[str], sensor_rotation: str, version: str | None) -> str:
    """A chain l0 -> ... -> l8 of every joint kind, and a sensor, with the given rotations."""
    parts = [f'<link name="l{i}"/>' for i in range(len(rotations) + 1)]
    for i, (kind, axis, rotation) in enumerate(zip(TYPES, AXES, rotations)):
        limit = LIMIT if kind in ('revolute', 'prismatic') else ''
        parts.append(f'<joint name="j{i}" type="{kind}"><parent link="l{i}"/>'
                     f'<child link="l{i + 1}"/><origin xyz="0.1 {i} -0.2" {rotation}/>'
                     f'<axis xyz="{axis}"/>{limit}</joint>')
    parts.append(f'<sensor name="cam"><parent link="l4"/><origin xyz="0 0.1 0" '
                 f'{sensor_rotation}/></sensor>')
    return robot(*parts, version=version)


def quaternion_text(rpy: tuple[float, float, float], scale: float) -> str:
    return 'quat_xyzw="' + ' '.join(repr(c * scale) for c in matrix_quaternion(
        rpy_matrix(*rpy))) + '"'


def rpy_text(rpy: tuple[float, float, float]) -> str:
    return 'rpy="' + ' '.join(repr(a) for a in rpy) + '"'


RPY_CHAIN = chain([rpy_text(a) for a in ANGLES], rpy_text((0.1, HALF_PI, 0.3)), None)
QUATERNION_CHAIN = chain([quaternion_text(a, s) for a, s in zip(ANGLES, SCALES)],
                         quaternion_text((0.1, HALF_PI, 0.3), -3.0), '1.1')


JOINT_NAMES = [f'j{i}' for i in range(len(ANGLES))]


def test_quaternion_origins_are_the_rotations_of_the_rpy_origins() -> None:
    rpy, quaternion = (parse_description(t) for t in (RPY_CHAIN, QUATERNION_CHAIN))
    assert [j.name for j in rpy.joints] == [j.name for j in quaternion.joints] == JOINT_NAMES
    assert [s.name for s in quaternion.sensors] == ['cam']
    for angles, a, b in zip(ANGLES, rpy.joints, quaternion.joints):
        expected = rpy_matrix(*angles)
        assert a.origin.quat_xyzw is None and b.origin.quat_xyzw is not None
        assert np.abs(quaternion_matrix(a.origin.rotation) - expected).max() < 1e-12, a.name
        assert np.abs(quaternion_matrix(b.origin.rotation) - expected).max() < 1e-12, b.name
    sensor = quaternion_matrix(quaternion.sensors[0].origin.rotation)
    assert np.abs(sensor - rpy_matrix(0.1, HALF_PI, 0.3)).max() < 1e-12


def test_rpy_of_a_quaternion_origin_is_the_same_rotation() -> None:
    """Origin.rpy of a quaternion origin (for code that still reads rpy) is equivalent."""
    joints = parse_description(QUATERNION_CHAIN).joints
    assert [j.name for j in joints] == JOINT_NAMES
    for joint, angles in zip(joints, ANGLES):
        assert np.abs(rpy_matrix(*joint.origin.rpy) - rpy_matrix(*angles)).max() < 1e-12


def reference_joint(index: int, value: float) -> np.ndarray:
    """Joint j<index>'s transform by reference math, from what chain() writes for it."""
    origin = homogeneous((0.1, index, -0.2), rpy_matrix(*ANGLES[index]))
    axis = np.array(AXES[index].split(), dtype=float)
    axis /= np.linalg.norm(axis)
    if TYPES[index] in ('revolute', 'continuous'):
        return origin @ homogeneous((0, 0, 0), rodrigues(axis, value))
    if TYPES[index] == 'prismatic':
        return origin @ homogeneous(axis * value, np.eye(3))
    return origin


SENSOR_ORIGIN = homogeneous((0, 0.1, 0), rpy_matrix(0.1, HALF_PI, 0.3))  # cam on l4


def reference_pose(values: dict[str, float], frame: str) -> np.ndarray:
    """`frame`'s pose in the root l0 by reference math: the chain's joints up to it."""
    if frame == 'cam':
        return reference_pose(values, 'l4') @ SENSOR_ORIGIN
    matrix = np.eye(4)
    for index in range(int(frame[1:])):
        matrix = matrix @ reference_joint(index, values.get(f'j{index}', 0.0))
    return matrix


def row_matrix(row) -> np.ndarray:
    return homogeneous(row[:3], quaternion_matrix(row[3:]))


def test_forward_kinematics_of_quaternion_and_rpy_chains_agree() -> None:
    rpy, quaternion = (RobotModel.from_urdf(t) for t in (RPY_CHAIN, QUATERNION_CHAIN))
    scalar = [f'j{i}' for i, kind in enumerate(TYPES) if kind != 'fixed']
    assert list(rpy.scalar_joints) == list(quaternion.scalar_joints) == scalar
    frames = {f'l{i}' for i in range(len(TYPES) + 1)} | {'cam'}
    rng = random.Random(7)
    for _ in range(20):
        values = {name: rng.uniform(-3, 3) for name in scalar}  # within every limit
        a, b = rpy.frame_poses(values), quaternion.frame_poses(values)
        assert a.keys() == b.keys() == frames
        for frame in frames:
            expected = reference_pose(values, frame)
            assert np.abs(pose_matrix(a[frame]) - expected).max() < 1e-12, frame
            assert np.abs(pose_matrix(b[frame]) - expected).max() < 1e-12, frame
        for model in (rpy, quaternion):
            update = model.update(list(values), list(values.values()))
            assert list(update.plan.joints) == scalar and len(update.transforms) == len(scalar)
            # Rows hold quaternions: q and -q are one rotation, so compare their matrices.
            for name, row in zip(update.plan.joints, update.transforms):
                expected = reference_joint(int(name[1:]), values[name])
                assert np.abs(row_matrix(row) - expected).max() < 1e-12, name
    fixed = [(f'l{i}', f'l{i + 1}', reference_joint(i, 0.0))
             for i, kind in enumerate(TYPES) if kind == 'fixed']
    static = [*fixed, ('l4', 'cam', SENSOR_ORIGIN)]
    for model in (rpy, quaternion):
        transforms = model.static_transforms()
        assert [(t.parent, t.child) for t in transforms] == [(p, c) for p, c, _ in static]
        for transform, (_, child, expected) in zip(transforms, static):
            assert np.abs(pose_matrix(transform.pose) - expected).max() < 1e-12, child


# --------------------------------------------------------------------------- sensors

def test_sensor_quaternion_origin_is_published_rotated() -> None:
    text = robot('<link name="a"/><sensor name="s"><parent link="a"/>'
                 '<origin xyz="1 0 0" quat_xyzw="0 0 2 2"/></sensor>')
    model = RobotModel.from_urdf(text)
    (transform,) = model.static_transforms()
    expected = homogeneous((1, 0, 0), rpy_matrix(0, 0, HALF_PI))
    assert np.abs(pose_matrix(transform.pose) - expected).max() < 1e-15
    assert model.warnings == ()


def test_sensor_quaternion_in_a_1_0_document_skips_the_sensor() -> None:
    """Sensors are skipped with a warning on any origin error, as for rpy errors."""
    description = parse_description(robot(
        '<link name="a"/><sensor name="s"><parent link="a"/><origin quat_xyzw="0 0 0 1"/>'
        '</sensor>', version=None))
    assert description.sensors == ()
    (warning,) = description.warnings
    assert "sensor 's' <origin>: quat_xyzw needs URDF 1.1" in warning
    assert warning.endswith('; sensor skipped')


# --------------------------------------------------------------------------- link contents

CAPSULE_LINK = (
    '<link name="a"><visual><origin quat_xyzw="0 0 0.7071 0.7071"/><geometry>'
    '<capsule radius="0.05" length="0.5"/></geometry></visual><collision><origin xyz="0 0 1" '
    'rpy="0 0 1"/><geometry><capsule radius="0.1" length="1.0"/></geometry></collision>'
    '<inertial><origin quat_xyzw="1 0 0 1"/><mass value="1"/></inertial></link>')


def test_capsules_and_quaternion_link_origins_load_without_warnings() -> None:
    """urdf_schema_capsule_geometry_test.cpp parse_capsule_geometry_version_1_1."""
    description = parse_description(robot(CAPSULE_LINK))
    assert description.links == ('a',)
    assert description.warnings == ()


@pytest.mark.parametrize(('part', 'origin', 'reason'), [
    # urdfdom fails the link, and so the model, on a visual whose origin cannot be parsed.
    ('visual', 'rpy="0 0 0" quat_xyzw="0 0 0 1"', 'has both rpy and quat_xyzw'),
    ('collision', 'xyz="0 nan 0"', 'xyz is not finite'),
    ('inertial', 'quat_xyzw="0 0 0"', 'quat_xyzw needs 4 numbers, got 3'),
    ('visual', 'quat_xyzw="0 0 0 0"', 'quat_xyzw is zero'),
])
def test_bad_link_origins_in_1_1_are_errors_naming_the_link(part: str, origin: str,
                                                            reason: str) -> None:
    message = error_of(robot(f'<link name="a"><{part}><origin {origin}/></{part}></link>'))
    assert message.startswith(f"link 'a' <{part}> <origin>")
    assert reason in message


def test_link_contents_of_a_1_0_document_are_not_read() -> None:
    """A 1.0 document's link contents stay unread (urdfdom drops a 1.0 capsule with a warning,
    parse_capsule_geometry_ignored_version_1_0; the node never uses geometry)."""
    description = parse_description(robot(CAPSULE_LINK.replace('0 0 0.7071', '0 0 0'),
                                          version='1.0'))
    assert description.warnings == ()


def calls_of(name: str, function: Callable[[], T]) -> tuple[int, T]:
    """How many times Python functions called `name` ran while `function` ran, and its result.

    A count, unlike a duration, does not depend on the machine or its load.
    """
    calls = 0

    def count(frame, event: str, argument: object) -> None:
        nonlocal calls
        calls += event == 'call' and frame.f_code.co_name == name

    sys.setprofile(count)
    try:
        result = function()
    finally:
        sys.setprofile(None)
    return calls, result


VISUAL = '<visual><origin {}/><geometry><capsule radius="1" length="1"/></geometry></visual>'
GOOD_ORIGIN = 'xyz="0 0 0.1" quat_xyzw="0 0 0 1"'


def repeated_visuals(count: int, last: str = GOOD_ORIGIN) -> str:
    """Link a with `count` copies of one visual, the last of them with the origin `last`."""
    return robot('<link name="a">' + VISUAL.format(GOOD_ORIGIN) * (count - 1)
                 + VISUAL.format(last) + '</link>')


def test_repeated_link_origins_are_checked_once() -> None:
    """A description repeating one visual many times costs one origin check, not one each.

    The check is the package's read_origin, the one reader of <origin> elements: counting its
    calls, not timing the parse, shows that the cost does not grow with the copies.
    """
    text = repeated_visuals(50_000)
    checks, description = calls_of('read_origin', lambda: parse_description(text))
    assert checks == 1
    assert description.links == ('a',) and description.warnings == ()


def test_a_different_origin_after_many_repeated_ones_is_still_checked() -> None:
    message = error_of(repeated_visuals(50_000, last='xyz="0 0 0.1" quat_xyzw="0 0 0 0"'))
    assert message.startswith("link 'a' <visual> <origin>")
    assert 'quat_xyzw is zero' in message


# --------------------------------------------------------------------------- future elements

def test_unknown_elements_and_attributes_in_1_1_are_extensions() -> None:
    description = parse_description(robot(
        '<link name="a"><spline/></link><link name="b"/>',
        '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
        '<limit lower="0" upper="1" effort="1" velocity="1" acceleration="2" jerk="3"/>'
        '<gearing ratio="2"/></joint>', '<frame name="tool"/>'))
    assert joint_named(description, 'j').limits is not None
    assert description.warnings == ()
    assert {(e.label, e.where) for e in description.extensions.listed} == {
        ('<frame>', '<robot>'),
        ('<spline>', "/robot/link[@name='a']"),
        ("'acceleration'", "/robot/joint[@name='j']/limit"),
        ("'jerk'", "/robot/joint[@name='j']/limit"),
        ('<gearing>', "/robot/joint[@name='j']"),
    }
