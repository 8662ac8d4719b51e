"""The kinematic model against independent references: yourdfpy, the URDF text, numpy.

Expected values never come from the model itself: joint limits, mimic relations and origins
are read from the XML with the standard library, forward kinematics comes from yourdfpy (given
every joint's value explicitly, its <mimic> tags removed) and rotations from numpy matrices.
"""

from dataclasses import dataclass
import io
import math
from pathlib import Path
import string
from xml.etree import ElementTree

from hypothesis import given, settings
from hypothesis import strategies as st
import jvrc_description
import numpy as np
import pytest
from reference_math import homogeneous, pose_matrix, quaternion_matrix, rodrigues
import yourdfpy

from urdf_state_publisher import Pose, RobotModel

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

REPO = Path(__file__).resolve().parents[2]
SAMPLE_URDF = REPO / 'urdf' / 'sample_arm.urdf'
SCALAR_TYPES = ('revolute', 'continuous', 'prismatic')
# yourdfpy multiplies the same matrices in its own order: both agree to rounding (~1e-15).
FK_TOLERANCE = 1e-12
CONTINUOUS_RANGE = (-4 * math.pi, 4 * math.pi)
PROPERTY = settings(max_examples=100, deadline=None)
# Random configurations per robot for the forward-kinematics comparisons.
CONFIGURATIONS = {'sample_arm': 150, 'jvrc1': 60}


def jvrc_urdf() -> Path:
    return Path(jvrc_description.__file__).parent / 'urdf' / 'jvrc1.urdf'


ROBOT_FILES = {'sample_arm': lambda: SAMPLE_URDF, 'jvrc1': jvrc_urdf}


# Independent math -------------------------------------------------------------------------

def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's fixed-axis rpy: Rz(yaw)·Ry(pitch)·Rx(roll)."""
    return (rodrigues((0, 0, 1), yaw) @ rodrigues((0, 1, 0), pitch)
            @ rodrigues((1, 0, 0), roll))


def hamilton(a, b) -> tuple[float, ...]:
    """Quaternion product a ⊗ b, written from the vector form (w, v)."""
    va, wa, vb, wb = np.array(a[:3]), a[3], np.array(b[:3]), b[3]
    v = wa * vb + wb * va + np.cross(va, vb)
    return (*v.tolist(), wa * wb - va @ vb)


def axis_angle_quaternion(axis, angle: float) -> tuple[float, ...]:
    s = math.sin(angle / 2)
    return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2))


# The URDF read independently of the package ------------------------------------------------

@dataclass(frozen=True)
class RefJoint:
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float
    soft: tuple[float, float] | None
    mimic: tuple[str, float, float] | None

    @property
    def scalar(self) -> bool:
        return self.type in SCALAR_TYPES

    def clamp(self, value: float) -> float:
        return min(max(value, self.lower), self.upper)

    def motion(self, value: float) -> np.ndarray:
        """Transform of the joint's child in its parent for `value` (not clamped)."""
        if self.type == 'prismatic':
            return self.origin @ homogeneous(value * self.axis, np.eye(3))
        if self.type in ('revolute', 'continuous'):
            return self.origin @ homogeneous((0, 0, 0), rodrigues(self.axis, value))
        return self.origin


@dataclass(frozen=True)
class RefRobot:
    root: str
    links: tuple[str, ...]
    joints: dict[str, RefJoint]
    sensors: dict[str, tuple[str, np.ndarray]]

    @property
    def scalar(self) -> tuple[str, ...]:
        return tuple(n for n, j in self.joints.items() if j.scalar)

    @property
    def independent(self) -> tuple[str, ...]:
        return tuple(n for n, j in self.joints.items() if j.scalar and j.mimic is None)

    @property
    def followers(self) -> tuple[str, ...]:
        return tuple(n for n, j in self.joints.items() if j.scalar and j.mimic is not None)

    @property
    def frames(self) -> tuple[str, ...]:
        return self.links + tuple(self.sensors)

    def composed_mimic(self, name: str) -> tuple[str, float, float]:
        """(independent leader, m, o) with value(name) = m·leader + o, limits ignored."""
        multiplier, offset = 1.0, 0.0
        joint = self.joints[name]
        while joint.mimic is not None:
            leader, m, o = joint.mimic
            multiplier, offset = multiplier * m, multiplier * o + offset
            joint = self.joints[leader]
        return joint.name, multiplier, offset

    def resolve(self, given: dict[str, float]) -> dict[str, float]:
        """Every single-value joint's value that `given` determines.

        Given values win; a follower not given takes multiplier·(its leader's final value) +
        offset; every value is then clamped to its own joint's limits.
        """
        values: dict[str, float] = {}

        def value(name: str) -> float | None:
            if name not in values:
                joint = self.joints[name]
                if name in given:
                    raw = given[name]
                elif joint.mimic is not None:
                    leader = value(joint.mimic[0])
                    if leader is None:
                        return None
                    raw = joint.mimic[1] * leader + joint.mimic[2]
                else:
                    return None
                values[name] = joint.clamp(raw)
            return values[name]

        for name in self.scalar:
            value(name)
        return values

    def sampling_ranges(self) -> dict[str, tuple[float, float]]:
        """For each independent joint, a range that keeps it and all its followers in limits."""
        ranges = {}
        for name in self.independent:
            joint = self.joints[name]
            ranges[name] = CONTINUOUS_RANGE if joint.type == 'continuous' else (
                joint.lower, joint.upper)
        for name in self.followers:
            joint = self.joints[name]
            leader, m, o = self.composed_mimic(name)
            if m == 0.0 or joint.type == 'continuous':
                continue
            a, b = sorted(((joint.lower - o) / m, (joint.upper - o) / m))
            lo, hi = ranges[leader]
            ranges[leader] = (max(lo, a), min(hi, b))
        for lo, hi in ranges.values():
            assert lo <= hi
        return ranges

    def default_values(self) -> dict[str, float]:
        """Values with no <model_state>: 0 if within limits, else the middle, followers follow."""
        given = {}
        for name in self.independent:
            joint = self.joints[name]
            given[name] = 0.0 if joint.lower <= 0.0 <= joint.upper else (
                (joint.lower + joint.upper) / 2)
        return self.resolve(given)


def _numbers(text: str | None, default: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(float(c) for c in text.split()) if text else default


def _origin(element) -> np.ndarray:
    if element is None:
        return np.eye(4)
    xyz = _numbers(element.get('xyz'), (0.0, 0.0, 0.0))
    rpy = _numbers(element.get('rpy'), (0.0, 0.0, 0.0))
    return homogeneous(xyz, rpy_matrix(*rpy))


def read_robot(text: str | bytes) -> RefRobot:
    root = ElementTree.fromstring(text)
    joints = {}
    for element in root.findall('joint'):
        kind = element.get('type')
        axis_element = element.find('axis')
        axis = np.array(_numbers(None if axis_element is None else axis_element.get('xyz'),
                                 (1.0, 0.0, 0.0)))
        lower, upper = -math.inf, math.inf
        limit = element.find('limit')
        if kind in ('revolute', 'prismatic'):
            lower, upper = float(limit.get('lower', 0)), float(limit.get('upper', 0))
        safety = element.find('safety_controller')
        soft = None if safety is None else (float(safety.get('soft_lower_limit', 0)),
                                            float(safety.get('soft_upper_limit', 0)))
        mimic_element = element.find('mimic')
        mimic = None if mimic_element is None else (
            mimic_element.get('joint'), float(mimic_element.get('multiplier', 1)),
            float(mimic_element.get('offset', 0)))
        joints[element.get('name')] = RefJoint(
            name=element.get('name'), type=kind, parent=element.find('parent').get('link'),
            child=element.find('child').get('link'), origin=_origin(element.find('origin')),
            axis=axis / np.linalg.norm(axis), lower=lower, upper=upper, soft=soft, mimic=mimic)
    links = tuple(e.get('name') for e in root.findall('link'))
    children = {j.child for j in joints.values()}
    (root_link,) = [link for link in links if link not in children]
    sensors = {e.get('name'): (e.find('parent').get('link'), _origin(e.find('origin')))
               for e in root.findall('sensor')}
    return RefRobot(root_link, links, joints, sensors)


def without_mimics(text: bytes) -> bytes:
    root = ElementTree.fromstring(text)
    for joint in root.findall('joint'):
        for mimic in joint.findall('mimic'):
            joint.remove(mimic)
    return ElementTree.tostring(root)


def load_yourdfpy(text: bytes):
    return yourdfpy.URDF.load(io.BytesIO(text), load_meshes=False,
                              build_collision_scene_graph=False, load_collision_meshes=False)


class Subject:
    """A robot three ways: our model, its XML read independently, yourdfpy without mimics."""

    def __init__(self, name: str, path: Path):
        self.name = name
        self.path = path
        text = path.read_bytes()
        self.ref = read_robot(text)
        self.model = RobotModel.from_file(path)
        self._urdf = load_yourdfpy(without_mimics(text))

    def expected_frames(self, values: dict[str, float]) -> dict[str, np.ndarray]:
        """yourdfpy's pose of every link, and of every sensor on its link, in the root frame."""
        self._urdf.update_cfg({n: float(values[n]) for n in self.ref.scalar})
        poses = {link: self._urdf.get_transform(frame_to=link, frame_from=self.ref.root)
                 for link in self.ref.links}
        for sensor, (parent, origin) in self.ref.sensors.items():
            poses[sensor] = poses[parent] @ origin
        return poses

    def random_independent(self, rng: np.random.Generator) -> dict[str, float]:
        """Random values of the independent joints that keep every follower in its limits."""
        return {n: float(rng.uniform(lo, hi)) for n, (lo, hi)
                in self.ref.sampling_ranges().items()}

    def random_outside(self, rng: np.random.Generator, names) -> dict[str, float]:
        """Random values, mostly beyond the joints' limits (continuous ones: huge)."""
        values = {}
        for name in names:
            joint = self.ref.joints[name]
            if joint.type == 'continuous':
                values[name] = float(rng.choice([-1, 1]) * rng.uniform(10, 1e6))
                continue
            span = joint.upper - joint.lower + 0.1
            where = rng.choice(['below', 'above', 'inside'], p=[0.45, 0.45, 0.1])
            values[name] = float(
                joint.lower - rng.uniform(1e-6, 2) * span if where == 'below' else
                joint.upper + rng.uniform(1e-6, 2) * span if where == 'above' else
                rng.uniform(joint.lower, joint.upper))
        return values


def max_error(ours: dict[str, Pose], expected: dict[str, np.ndarray]) -> float:
    assert set(ours) == set(expected)
    return max(float(np.abs(pose_matrix(ours[f]) - expected[f]).max()) for f in expected)


def compose_local(root: str, local: dict[str, tuple[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Root-frame poses from {child frame: (parent frame, pose in parent)}."""
    poses = {root: np.eye(4)}

    def pose(frame: str) -> np.ndarray:
        if frame not in poses:
            parent, transform = local[frame]
            poses[frame] = pose(parent) @ transform
        return poses[frame]

    for frame in local:
        pose(frame)
    return poses


def poses_from_update(subject: Subject, update) -> dict[str, np.ndarray]:
    """Chain the model's static transforms and the transforms of one update, as tf would."""
    local = {t.child: (t.parent, pose_matrix(t.pose)) for t in subject.model.static_transforms()}
    for name, row in zip(update.plan.joints, update.transforms.tolist()):
        joint = subject.ref.joints[name]
        local[joint.child] = (joint.parent, homogeneous(row[:3], quaternion_matrix(row[3:])))
    return compose_local(subject.ref.root, local)


@pytest.fixture(scope='module', params=sorted(ROBOT_FILES))
def subject(request) -> Subject:
    return Subject(request.param, ROBOT_FILES[request.param]())


class OnDemand(dict):
    """A dict that makes each robot's entry on first use: a sample-arm test loads no jvrc1."""

    def __init__(self, make):
        super().__init__()
        self._make = make

    def __missing__(self, name: str):
        self[name] = self._make(ROBOT_FILES[name]())
        return self[name]


@pytest.fixture(scope='module')
def models() -> dict[str, RobotModel]:
    return OnDemand(RobotModel.from_file)


@pytest.fixture(scope='module')
def refs() -> dict[str, RefRobot]:
    return OnDemand(lambda path: read_robot(path.read_bytes()))


# The test's own reading of the files -------------------------------------------------------

def test_jvrc1_is_the_fixture_the_issue_describes():
    ref = read_robot(jvrc_urdf().read_bytes())
    assert len(ref.joints) == 59
    assert len(ref.followers) == 10
    assert {abs(j.mimic[1]) for j in ref.joints.values() if j.mimic} == {2.0}


def test_reference_mimic_resolution_agrees_with_yourdfpy_native_mimic():
    """jvrc1's mimics are one level deep: yourdfpy can resolve them, checking `resolve`."""
    path = jvrc_urdf()
    ref = read_robot(path.read_bytes())
    native = load_yourdfpy(path.read_bytes())
    plain = load_yourdfpy(without_mimics(path.read_bytes()))
    rng = np.random.default_rng(7)
    for _ in range(5):
        given = {n: float(rng.uniform(lo, hi)) for n, (lo, hi) in ref.sampling_ranges().items()}
        native.update_cfg(given)
        plain.update_cfg(ref.resolve(given))
        for link in ref.links:
            expected = native.get_transform(frame_to=link, frame_from=ref.root)
            assert np.abs(plain.get_transform(frame_to=link, frame_from=ref.root)
                          - expected).max() < 1e-12


# Forward kinematics against yourdfpy --------------------------------------------------------

def test_frame_poses_match_yourdfpy_within_limits(subject):
    """Every link and sensor, every single-value joint given (followers: computed here)."""
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(CONFIGURATIONS[subject.name]):
        values = subject.ref.resolve(subject.random_independent(rng))
        assert set(values) == set(subject.ref.scalar)
        worst = max(worst, max_error(subject.model.frame_poses(values),
                                     subject.expected_frames(values)))
    assert worst <= FK_TOLERANCE


def test_update_resolves_mimics_and_transforms_match_yourdfpy(subject):
    """Only independent joints sent, in random order: followers and all frames as expected."""
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(CONFIGURATIONS[subject.name]):
        given = subject.random_independent(rng)
        names = list(given)
        rng.shuffle(names)
        update = subject.model.update(names, [given[n] for n in names])
        expected_values = subject.ref.resolve(given)
        assert set(update.plan.joints) == set(subject.ref.scalar)
        for name, value in zip(update.plan.joints, update.values.tolist()):
            assert value == pytest.approx(expected_values[name], rel=1e-12, abs=1e-12), name
        assert update.clamped == ()
        expected = subject.expected_frames(expected_values)
        ours = poses_from_update(subject, update)
        assert set(ours) == set(expected)
        worst = max(worst, max(float(np.abs(ours[f] - expected[f]).max()) for f in expected))
    assert worst <= FK_TOLERANCE


def test_frame_poses_followers_follow_leaders_given_in_values(subject):
    rng = np.random.default_rng(3)
    for _ in range(20):
        given = subject.random_independent(rng)
        expected = subject.expected_frames(subject.ref.resolve(given))
        assert max_error(subject.model.frame_poses(given), expected) <= FK_TOLERANCE


def test_values_outside_limits_give_the_pose_at_the_clamped_value(subject):
    rng = np.random.default_rng(4)
    for _ in range(CONFIGURATIONS[subject.name] // 2):
        # Every joint named explicitly, mostly out of range: each clamps to its own limits.
        given = subject.random_outside(rng, subject.ref.scalar)
        expected_values = subject.ref.resolve(given)
        assert any(expected_values[n] != given[n] for n in given)
        assert max_error(subject.model.frame_poses(given),
                         subject.expected_frames(expected_values)) <= FK_TOLERANCE

        # Only the independent joints sent: followers follow their (clamped) leaders.
        given = subject.random_outside(rng, subject.ref.independent)
        update = subject.model.update(list(given), list(given.values()))
        expected_values = subject.ref.resolve(given)
        ours = dict(zip(update.plan.joints, update.values.tolist()))
        assert ours == pytest.approx(expected_values, rel=1e-12, abs=1e-12)
        outside = {n for n, v in given.items() if v != subject.ref.joints[n].clamp(v)}
        assert outside <= set(update.clamped)
        assert not set(update.clamped) & (set(given) - outside)
        expected = subject.expected_frames(expected_values)
        mine = poses_from_update(subject, update)
        assert max(float(np.abs(mine[f] - expected[f]).max()) for f in expected) <= FK_TOLERANCE


def test_frame_poses_without_values_are_at_default_positions(subject):
    expected = subject.expected_frames(subject.ref.default_values())
    assert max_error(subject.model.frame_poses(), expected) <= FK_TOLERANCE
    assert subject.model.default_positions() == pytest.approx(subject.ref.default_values(),
                                                              abs=1e-12)


def test_frame_pose_relative_to_another_frame(subject):
    rng = np.random.default_rng(5)
    frames = list(subject.ref.frames)
    for _ in range(5):
        values = subject.ref.resolve(subject.random_independent(rng))
        expected = subject.expected_frames(values)
        for _ in range(20):
            frame, other = (str(f) for f in rng.choice(frames, size=2))
            pose = subject.model.frame_pose(frame, values, relative_to=other)
            reference = np.linalg.inv(expected[other]) @ expected[frame]
            assert np.abs(pose_matrix(pose) - reference).max() <= FK_TOLERANCE, (frame, other)
        root_pose = subject.model.frame_pose(frames[-1], values)
        assert np.abs(pose_matrix(root_pose) - expected[frames[-1]]).max() <= FK_TOLERANCE


@pytest.mark.parametrize('frame, relative_to', [('no_such_frame', None),
                                                ('__root__', 'no_such_frame')])
def test_frame_pose_of_unknown_frame_is_a_key_error(models, frame, relative_to):
    model = models['sample_arm']
    with pytest.raises(KeyError, match='no_such_frame'):
        model.frame_pose(model.root if frame == '__root__' else frame, relative_to=relative_to)


def test_joint_pose_of_single_value_joints_clamps(subject):
    rng = np.random.default_rng(6)
    for name in subject.ref.scalar:
        joint = subject.ref.joints[name]
        for _ in range(5):
            value = subject.random_outside(rng, [name])[name]
            pose = subject.model.joint_pose(name, value)
            expected = joint.motion(joint.clamp(value))
            assert np.abs(pose_matrix(pose) - expected).max() <= FK_TOLERANCE, (name, value)


def test_static_transforms_are_fixed_joints_then_sensors(subject):
    fixed = [j for j in subject.ref.joints.values() if j.type == 'fixed']
    expected = {(j.parent, j.child): j.origin for j in fixed}
    expected.update({(parent, name): origin
                     for name, (parent, origin) in subject.ref.sensors.items()})
    statics = subject.model.static_transforms()
    assert [(t.parent, t.child) for t in statics][len(fixed):] == [
        (parent, name) for name, (parent, _) in subject.ref.sensors.items()]
    assert {(t.parent, t.child) for t in statics} == set(expected)
    assert len(statics) == len(expected)
    for t in statics:
        assert np.abs(pose_matrix(t.pose) - expected[t.parent, t.child]).max() < 1e-12


# Limits -------------------------------------------------------------------------------------

def test_limits_are_the_urdf_limits(subject):
    for name in subject.ref.scalar:
        joint = subject.ref.joints[name]
        assert subject.model.limits(name) == (joint.lower, joint.upper), name


def test_use_smallest_joint_limits_narrows_to_the_safety_controller():
    ref = read_robot(SAMPLE_URDF.read_bytes())
    joint = ref.joints['shoulder_lift_joint']
    assert (joint.lower, joint.upper, joint.soft) == (-1.6, 1.6, (-1.4, 1.2))
    wide = RobotModel.from_file(SAMPLE_URDF)
    narrow = RobotModel.from_file(SAMPLE_URDF, use_smallest_joint_limits=True)
    assert wide.limits('shoulder_lift_joint') == (-1.6, 1.6)
    assert narrow.limits('shoulder_lift_joint') == (-1.4, 1.2)
    for value, clamped in ((1.5, 1.2), (-1.5, -1.4), (1.0, 1.0)):
        update = narrow.update(['shoulder_lift_joint'], [value])
        assert update.values.tolist() == [clamped]
        assert update.clamped == (() if value == clamped else ('shoulder_lift_joint',))
        assert wide.update(['shoulder_lift_joint'], [value]).values.tolist() == [value]
        expected = joint.motion(clamped)
        assert np.abs(pose_matrix(narrow.joint_pose('shoulder_lift_joint', value))
                      - expected).max() < 1e-12
    for name in ref.scalar:
        if ref.joints[name].soft is None:
            assert narrow.limits(name) == wide.limits(name), name


# Small URDFs written here ------------------------------------------------------------------

def joint_xml(name: str, kind: str = 'revolute', *, parent: str = 'base',
              child: str | None = None, xyz: str = '0 0 0', rpy: str = '0 0 0',
              axis: str | None = '0 0 1', limit: tuple[float, float] | None = None,
              soft: tuple[float, float] | None = None,
              mimic: tuple[str, float, float] | None = None) -> str:
    child = child or f'{name}_link'
    parts = [f'<joint name="{name}" type="{kind}">', f'<parent link="{parent}"/>',
             f'<child link="{child}"/>', f'<origin xyz="{xyz}" rpy="{rpy}"/>']
    if axis is not None:
        parts.append(f'<axis xyz="{axis}"/>')
    if limit is not None:
        parts.append(f'<limit lower="{limit[0]!r}" upper="{limit[1]!r}" effort="1" '
                     'velocity="1"/>')
    if soft is not None:
        parts.append(f'<safety_controller soft_lower_limit="{soft[0]!r}" '
                     f'soft_upper_limit="{soft[1]!r}" k_position="1" k_velocity="1"/>')
    if mimic is not None:
        parts.append(f'<mimic joint="{mimic[0]}" multiplier="{mimic[1]!r}" '
                     f'offset="{mimic[2]!r}"/>')
    return ''.join(parts) + '</joint>'


def robot_xml(*joints: str, state: dict[str, float] | None = None) -> str:
    children = [ElementTree.fromstring(j).find('child').get('link') for j in joints]
    links = ''.join(f'<link name="{link}"/>' for link in ['base', *children])
    model_state = ''
    if state:
        model_state = '<model_state model="test">' + ''.join(
            f'<joint_state joint="{n}" position="{v!r}"/>' for n, v in state.items()
        ) + '</model_state>'
    return f'<robot name="test">{links}{"".join(joints)}{model_state}</robot>'


DEFAULT_CASES = {
    'zero within limits': ([joint_xml('j', limit=(-1.0, 2.0))], {}, {}, {'j': 0.0}),
    'zero is the lower limit': ([joint_xml('j', limit=(0.0, 1.0))], {}, {}, {'j': 0.0}),
    'zero is the upper limit': ([joint_xml('j', limit=(-1.0, 0.0))], {}, {}, {'j': 0.0}),
    'range above zero': ([joint_xml('j', limit=(0.5, 1.5))], {}, {}, {'j': 1.0}),
    'range below zero': ([joint_xml('j', limit=(-3.0, -1.0))], {}, {}, {'j': -2.0}),
    'prismatic': ([joint_xml('j', 'prismatic', limit=(0.1, 0.3))], {}, {}, {'j': 0.2}),
    'continuous': ([joint_xml('j', 'continuous')], {}, {}, {'j': 0.0}),
    'continuous with a <limit>': (
        [joint_xml('j', 'continuous', limit=(1.0, 2.0))], {}, {}, {'j': 0.0}),
    'model_state wins over zero': (
        [joint_xml('j', limit=(-1.0, 2.0))], {'j': 0.7}, {}, {'j': 0.7}),
    'model_state wins over the middle': (
        [joint_xml('j', limit=(0.5, 1.5))], {'j': 0.6}, {}, {'j': 0.6}),
    'model_state of a continuous joint': (
        [joint_xml('j', 'continuous')], {'j': 12.0}, {}, {'j': 12.0}),
    'model_state outside the limits is clamped': (
        [joint_xml('j', limit=(-1.0, 1.0))], {'j': 3.0}, {}, {'j': 1.0}),
    'some joints in model_state, others not': (
        [joint_xml('a', limit=(0.5, 1.5)), joint_xml('b', limit=(0.5, 1.5))], {'b': 0.75}, {},
        {'a': 1.0, 'b': 0.75}),
    'follower follows the middle of its leader': (
        [joint_xml('lead', limit=(1.0, 3.0)),
         joint_xml('follow', limit=(-5.0, 5.0), mimic=('lead', -0.5, 0.25))], {}, {},
        {'lead': 2.0, 'follow': -0.75}),
    'follower follows a model_state leader': (
        [joint_xml('lead', limit=(-1.0, 1.0)),
         joint_xml('follow', limit=(-5.0, 5.0), mimic=('lead', 2.0, 0.1))], {'lead': 0.4}, {},
        {'lead': 0.4, 'follow': 0.9}),
    'follower with its own model_state keeps it': (
        [joint_xml('lead', limit=(-1.0, 1.0)),
         joint_xml('follow', limit=(-5.0, 5.0), mimic=('lead', 2.0, 0.1))],
        {'lead': 0.4, 'follow': -3.0}, {}, {'lead': 0.4, 'follow': -3.0}),
    'follower clamped to its own limits': (
        [joint_xml('lead', 'continuous'),
         joint_xml('follow', limit=(0.5, 1.0), mimic=('lead', 1.0, 2.0))], {}, {},
        {'lead': 0.0, 'follow': 1.0}),
    'smallest limits: middle of the soft range': (
        [joint_xml('j', limit=(-1.0, 1.0), soft=(0.2, 0.8))], {},
        {'use_smallest_joint_limits': True}, {'j': 0.5}),
    'smallest limits off: soft range ignored': (
        [joint_xml('j', limit=(-1.0, 1.0), soft=(0.2, 0.8))], {}, {}, {'j': 0.0}),
    'smallest limits: model_state clamped to the soft range': (
        [joint_xml('j', limit=(-1.0, 1.0), soft=(-0.5, 0.5))], {'j': 0.9},
        {'use_smallest_joint_limits': True}, {'j': 0.5}),
    'smallest limits: no common range falls back to <limit>': (
        [joint_xml('j', limit=(1.0, 2.0), soft=(3.0, 4.0))], {},
        {'use_smallest_joint_limits': True}, {'j': 1.5}),
}


@pytest.mark.parametrize('joints, state, options, expected', DEFAULT_CASES.values(),
                         ids=DEFAULT_CASES.keys())
def test_default_positions(joints, state, options, expected):
    model = RobotModel.from_urdf(robot_xml(*joints, state=state), **options)
    defaults = model.default_positions()
    assert defaults == pytest.approx(expected, abs=1e-12)
    for name, value in defaults.items():
        lower, upper = model.limits(name)
        assert lower <= value <= upper


def test_limits_fall_back_when_soft_range_is_empty():
    model = RobotModel.from_urdf(robot_xml(joint_xml('j', limit=(1.0, 2.0), soft=(3.0, 4.0))),
                                 use_smallest_joint_limits=True)
    assert model.limits('j') == (1.0, 2.0)


# update(): what a JointState does --------------------------------------------------------

NAN, INF = math.nan, math.inf
SAMPLE_GRIPPER = ('left_finger_joint', 'right_finger_joint', 'right_finger_tip_joint')
UPDATE_CASES = {
    'unknown name reported': (
        ['elbow_joint', 'no_such_joint'], [0.1, 0.2],
        {'elbow_joint'}, {'unknown': ('no_such_joint',)}),
    'duplicated name dropped': (
        ['elbow_joint', 'torso_lift_joint', 'elbow_joint'], [0.1, 0.2, 0.3],
        {'torso_lift_joint'}, {'duplicated': ('elbow_joint',)}),
    'duplicated leader: followers not updated': (
        ['left_finger_joint', 'left_finger_joint', 'elbow_joint'], [0.01, 0.02, 0.1],
        {'elbow_joint'}, {'duplicated': ('left_finger_joint',)}),
    'leader moves its mimic chain': (
        ['left_finger_joint'], [0.02], set(SAMPLE_GRIPPER), {}),
    'mid-chain joint sent: only its follower follows it': (
        ['right_finger_joint'], [0.01], set(SAMPLE_GRIPPER[1:]), {}),
    'NaN dropped, followers not updated': (
        ['left_finger_joint', 'elbow_joint'], [NAN, 0.3],
        {'elbow_joint'}, {'non_finite': ('left_finger_joint',)}),
    'infinities dropped': (
        ['elbow_joint', 'torso_lift_joint', 'shoulder_pan_joint'], [INF, 0.1, -INF],
        {'torso_lift_joint'}, {'non_finite': ('elbow_joint', 'shoulder_pan_joint')}),
    'all non-finite': (
        ['elbow_joint', 'left_finger_joint'], [NAN, INF],
        set(), {'non_finite': ('elbow_joint', 'left_finger_joint')}),
    'more names than positions: truncated': (
        ['elbow_joint', 'torso_lift_joint', 'wrist_roll_joint', 'no_such_joint'], [0.1, 0.2],
        {'elbow_joint', 'torso_lift_joint'}, {}),
    'more positions than names: extra ignored': (
        ['elbow_joint'], [0.1, 0.2, 0.3], {'elbow_joint'}, {}),
    'fixed joint named: not scalar': (
        ['base_joint', 'elbow_joint', 'tool0_joint'], [0.0, 0.1, 0.0],
        {'elbow_joint'}, {'not_scalar': ('base_joint', 'tool0_joint')}),
    'empty message': ([], [], set(), {}),
    'everything at once': (
        ['no_such_joint', 'elbow_joint', 'base_joint', 'torso_lift_joint', 'elbow_joint',
         'left_finger_joint', 'wrist_roll_joint'], [1.0, 0.1, 0.0, NAN, 0.2, 0.01, 9.0],
        {'left_finger_joint', 'right_finger_joint', 'right_finger_tip_joint',
         'wrist_roll_joint'},
        {'unknown': ('no_such_joint',), 'duplicated': ('elbow_joint',),
         'not_scalar': ('base_joint',), 'non_finite': ('torso_lift_joint',)}),
}


@pytest.mark.parametrize('names, positions, joints, reports', UPDATE_CASES.values(),
                         ids=UPDATE_CASES.keys())
def test_update(models, refs, names, positions, joints, reports):
    model, ref = models['sample_arm'], refs['sample_arm']
    update = model.update(names, positions)
    assert set(update.plan.joints) == joints
    assert len(update.plan.joints) == len(joints)
    assert update.values.shape == (len(joints),)
    assert update.transforms.shape == (len(joints), 7)
    for field in ('unknown', 'duplicated', 'not_scalar'):
        assert getattr(update.plan, field) == reports.get(field, ()), field
    assert update.non_finite == reports.get('non_finite', ())
    # The values: explicit finite ones, clamped; followers from their nearest named leader.
    used = {n: p for n, p in zip(names, positions)
            if n in joints and math.isfinite(p) and names.count(n) == 1}
    expected = ref.resolve(used)
    assert dict(zip(update.plan.joints, update.values.tolist())) == pytest.approx(
        {n: expected[n] for n in joints}, abs=1e-12)
    for name, row in zip(update.plan.joints, update.transforms.tolist()):
        joint = ref.joints[name]
        local = homogeneous(row[:3], quaternion_matrix(row[3:]))
        assert np.abs(local - joint.motion(expected[name])).max() < 1e-12, name


def test_update_accepts_numpy_arrays_and_reuses_the_plan(models):
    model = models['sample_arm']
    names = ('elbow_joint', 'left_finger_joint')
    first = model.update(names, np.array([0.1, 0.02]))
    second = model.update(list(names), (0.2, 0.03))
    assert first.plan is second.plan
    assert dict(zip(second.plan.joints, second.values.tolist()))['elbow_joint'] == 0.2


TILTED_URDF = robot_xml(
    joint_xml('slide', 'prismatic', xyz='0.1 -0.2 0.3', rpy='0.7 -0.4 1.2', axis='1 -2 0.5',
              limit=(-0.5, 0.8)),
    joint_xml('hinge', 'revolute', parent='slide_link', xyz='-0.3 0.2 0.1', rpy='-1.1 0.3 2.0',
              axis='0.2 0.9 -0.4', limit=(-2.0, 1.5)),
    joint_xml('spin', 'continuous', parent='hinge_link', xyz='0 0.4 -0.2', rpy='2.5 1.2 -0.3',
              axis='-1 1 1'),
    joint_xml('slave', 'prismatic', parent='spin_link', xyz='0.2 0 0', rpy='0 1.5 0',
              axis='0 1 1', limit=(-1.0, 1.0), mimic=('slide', -1.5, 0.2)),
)


@PROPERTY
@given(st.floats(-10.0, 10.0), st.floats(-0.5, 0.8), st.floats(-3.0, 3.0))
def test_tilted_origins_and_axes(spin, slide, hinge):
    """Single-value joints whose origins rotate and whose axes are not along x, y or z."""
    model, ref = RobotModel.from_urdf(TILTED_URDF), read_robot(TILTED_URDF)
    given = {'spin': spin, 'slide': slide, 'hinge': hinge}
    values = list(given.values())
    expected = ref.resolve(given)
    update = model.update(list(given), values)
    assert dict(zip(update.plan.joints, update.values.tolist())) == pytest.approx(
        expected, abs=1e-12)
    for name, row in zip(update.plan.joints, update.transforms.tolist()):
        motion = ref.joints[name].motion(expected[name])
        assert np.abs(homogeneous(row[:3], quaternion_matrix(row[3:])) - motion).max() < 1e-12
        assert np.abs(pose_matrix(model.joint_pose(name, expected[name])) - motion).max() < 1e-12
    frames = compose_local('base', {j.child: (j.parent, j.motion(expected[n]))
                                    for n, j in ref.joints.items()})
    assert max_error(model.frame_poses(expected), frames) < 1e-12


# Properties ---------------------------------------------------------------------------------

finite = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def joint_states(draw, model: RobotModel, values=finite):
    names = draw(st.lists(st.sampled_from(model.scalar_joints), unique=True, min_size=1))
    positions = draw(st.lists(values, min_size=len(names), max_size=len(names)))
    return names, positions


def unit_and_finite(transforms: np.ndarray) -> bool:
    norms = np.linalg.norm(transforms[:, 3:], axis=1)
    return bool(np.isfinite(transforms).all() and (np.abs(norms - 1.0) < 1e-12).all())


@pytest.mark.filterwarnings('ignore:overflow:RuntimeWarning')  # a follower's ±inf, clamped
@pytest.mark.parametrize('robot', sorted(ROBOT_FILES))
@PROPERTY
@given(data=st.data())
def test_update_quaternions_are_unit_for_any_finite_input(models, refs, robot, data):
    model = models[robot]
    names, positions = data.draw(joint_states(model))
    update = model.update(names, positions)
    assert update.non_finite == ()
    # Every named joint and every follower of one is there: none was dropped to stay finite.
    assert sorted(update.plan.joints) == sorted(refs[robot].resolve(dict(zip(names, positions))))
    assert unit_and_finite(update.transforms)


@pytest.mark.parametrize('robot', sorted(ROBOT_FILES))
@PROPERTY
@given(data=st.data())
def test_update_clamps_to_limits_and_keeps_values_inside(models, refs, robot, data):
    model, ref = models[robot], refs[robot]
    names, positions = data.draw(joint_states(model, st.floats(-10.0, 10.0)))
    update = model.update(names, positions)
    values = dict(zip(update.plan.joints, update.values.tolist()))
    for name, value in values.items():
        lower, upper = model.limits(name)
        assert lower <= value <= upper, name
        assert ref.joints[name].lower <= value <= ref.joints[name].upper, name
    for name, position in zip(names, positions):
        joint = ref.joints[name]
        assert values[name] == joint.clamp(position)
        assert (name in update.clamped) == (not joint.lower <= position <= joint.upper)


@PROPERTY
@given(data=st.data())
def test_continuous_joints_are_never_clamped(models, refs, data):
    model = models['sample_arm']
    continuous = [n for n, j in refs['sample_arm'].joints.items() if j.type == 'continuous']
    assert continuous == ['shoulder_pan_joint', 'wrist_roll_joint']
    names = data.draw(st.permutations(continuous))
    positions = data.draw(st.lists(finite, min_size=len(names), max_size=len(names)))
    update = model.update(names, positions)
    assert update.values.tolist() == positions
    assert update.clamped == ()
    assert unit_and_finite(update.transforms)
    for name in continuous:
        assert model.limits(name) == (-math.inf, math.inf)


@PROPERTY
@given(st.floats(-1e300, 1e300))
def test_continuous_joint_with_a_limit_element_is_not_clamped(value):
    model = RobotModel.from_urdf(robot_xml(joint_xml('c', 'continuous', limit=(-1.0, 1.0))))
    update = model.update(['c'], [value])
    assert update.values.tolist() == [value]
    assert update.clamped == ()
    assert unit_and_finite(update.transforms)


@pytest.mark.filterwarnings('ignore::RuntimeWarning')
@pytest.mark.parametrize('multiplier, offset, leader', [(2.0, 0.0, 1e308),
                                                        (1.0, 1e308, 1e308)])
def test_continuous_follower_of_huge_leader_stays_finite(multiplier, offset, leader):
    """The follower's value overflows: the leader that drives it is dropped, nothing else."""
    joints = (joint_xml('lead', 'continuous'),
              joint_xml('follow', 'continuous', mimic=('lead', multiplier, offset)),
              joint_xml('side', 'continuous', xyz='0.1 0.2 0.3', axis='0 1 0'))
    model, ref = RobotModel.from_urdf(robot_xml(*joints)), read_robot(robot_xml(*joints))
    update = model.update(['lead', 'side'], [leader, 0.7])
    assert update.non_finite == ('lead',)
    assert update.plan.joints == ('side',)
    assert update.values.tolist() == [0.7]
    assert unit_and_finite(update.transforms)
    row = update.transforms[0].tolist()
    assert np.abs(homogeneous(row[:3], quaternion_matrix(row[3:]))
                  - ref.joints['side'].motion(0.7)).max() < 1e-12
    # A quarter of that leader does not overflow: leader and follower are both there.
    update = model.update(['lead'], [leader / 4])
    assert update.plan.joints == ('lead', 'follow') and update.non_finite == ()
    assert update.values.tolist() == [leader / 4, multiplier * (leader / 4) + offset]


@pytest.mark.filterwarnings('ignore::RuntimeWarning')
@pytest.mark.parametrize('leader, expected', [(0.0, 0.0), (1e-300, 1e-300 * 1e200 * 1e200),
                                              (-1e-250, -1e-250 * 1e200 * 1e200)])
def test_a_chain_whose_composed_gain_overflows_is_computed_step_by_step(leader, expected):
    """1e200 × 1e200 is infinite, but each step of lead → mid → tip is finite."""
    model = RobotModel.from_urdf(robot_xml(
        joint_xml('lead', 'continuous'),
        joint_xml('mid', 'continuous', mimic=('lead', 1e200, 0.0)),
        joint_xml('tip', 'continuous', child='tip_link', parent='mid_link',
                  mimic=('mid', 1e200, 0.0))))
    update = model.update(['lead'], [leader])
    assert update.non_finite == ()
    assert dict(zip(update.plan.joints, update.values.tolist())) == {
        'lead': leader, 'mid': leader * 1e200, 'tip': expected}
    assert unit_and_finite(update.transforms)


@pytest.mark.parametrize('joints, sent, expected', [
    ([joint_xml('lead', limit=(-1.0, 1.0)),
      joint_xml('follow', limit=(-5.0, 5.0), mimic=('lead', 2.0, 0.5))],
     {'lead': 3.0}, {'lead': 1.0, 'follow': 2.5}),
    ([joint_xml('a', limit=(-5.0, 5.0)),
      joint_xml('b', limit=(-1.0, 1.0), mimic=('a', 1.0, 0.0)),
      joint_xml('c', limit=(-5.0, 5.0), mimic=('b', 1.0, 0.0))],
     {'a': 3.0}, {'a': 3.0, 'b': 1.0, 'c': 1.0}),
], ids=['leader clamped', 'mid-chain joint clamped'])
def test_followers_follow_the_clamped_value_of_their_leader(joints, sent, expected):
    model = RobotModel.from_urdf(robot_xml(*joints))
    ref = read_robot(robot_xml(*joints))
    assert ref.resolve(sent) == expected  # the test's own semantics
    update = model.update(list(sent), list(sent.values()))
    assert dict(zip(update.plan.joints, update.values.tolist())) == pytest.approx(expected)


# Mimic chains with random names ----------------------------------------------------------

names_text = st.text(string.ascii_letters + string.digits + '_', min_size=1, max_size=10)


@st.composite
def mimic_chains(draw):
    """A leader and k followers, each mimicking the previous; names random, order shuffled."""
    k = draw(st.integers(1, 6))
    names = draw(st.lists(names_text, min_size=k + 1, max_size=k + 1, unique=True))
    multipliers = draw(st.lists(st.floats(-3.0, 3.0), min_size=k, max_size=k))
    offsets = draw(st.lists(st.floats(-2.0, 2.0), min_size=k, max_size=k))
    order = draw(st.permutations(range(k + 1)))
    joints = [joint_xml(names[0], 'continuous', child='link0')] + [
        joint_xml(names[i], 'continuous', child=f'link{i}',
                  mimic=(names[i - 1], multipliers[i - 1], offsets[i - 1]))
        for i in range(1, k + 1)]
    return names, multipliers, offsets, robot_xml(*(joints[i] for i in order))


@PROPERTY
@given(mimic_chains(), st.data())
def test_mimic_chain_followers_in_any_name_order(chain, data):
    names, multipliers, offsets, text = chain
    model = RobotModel.from_urdf(text)
    # Send the leader or not, and any set of followers explicitly, in a random order.
    sent = {}
    if data.draw(st.booleans(), label='leader sent'):
        sent[names[0]] = data.draw(st.floats(-10.0, 10.0), label='leader')
    for name in data.draw(st.lists(st.sampled_from(names[1:]), unique=True), label='explicit'):
        sent[name] = data.draw(st.floats(-10.0, 10.0), label=name)
    order = data.draw(st.permutations(list(sent)), label='message order')
    update = model.update(order, [sent[n] for n in order])

    expected: dict[str, float] = {}
    previous = None
    for i, name in enumerate(names):
        if name in sent:
            previous = sent[name]
        elif previous is not None:
            previous = multipliers[i - 1] * previous + offsets[i - 1]
        if previous is not None:
            expected[name] = previous
    values = dict(zip(update.plan.joints, update.values.tolist()))
    assert set(values) == set(expected)
    for name, value in expected.items():
        assert values[name] == pytest.approx(value, rel=1e-9, abs=1e-9), name
    assert unit_and_finite(update.transforms)
    for name, row in zip(update.plan.joints, update.transforms.tolist()):
        assert np.abs(quaternion_matrix(row[3:]) - rodrigues((0, 0, 1), values[name])).max() \
            < 1e-9

    # mimic_source composes the whole chain up to the leader.
    multiplier, offset = 1.0, 0.0
    for i in range(1, len(names)):
        multiplier, offset = multipliers[i - 1] * multiplier, multipliers[i - 1] * offset + (
            offsets[i - 1])
        leader, m, o = model.mimic_source(names[i])
        assert leader == names[0]
        assert (m, o) == pytest.approx((multiplier, offset), rel=1e-9, abs=1e-9)
    assert model.mimic_source(names[0]) is None


# Floating and planar joints ---------------------------------------------------------------

PLANAR_AXIS = np.array([1.0, 2.0, 2.0]) / 3.0
POSE_JOINTS_URDF = robot_xml(
    joint_xml('float_joint', 'floating', xyz='0.5 -1 2', rpy='0.3 -0.2 1.1', axis=None),
    joint_xml('planar_joint', 'planar', xyz='-1 0.25 0.75', rpy='-0.6 0.4 0.2',
              axis='1 2 2'),
    joint_xml('fixed_joint', 'fixed', parent='planar_joint_link', xyz='0 0 1'),
    joint_xml('spin_joint', 'continuous', parent='float_joint_link'),
)

coordinates = st.floats(-10.0, 10.0)
vectors = st.tuples(coordinates, coordinates, coordinates)
unit_vectors = vectors.filter(lambda v: math.hypot(*v) > 1e-3).map(
    lambda v: np.array(v) / math.hypot(*v))
quaternions = st.tuples(*[st.floats(-1.0, 1.0)] * 4).filter(
    lambda q: math.sqrt(sum(c * c for c in q)) > 0.1).map(
    lambda q: tuple(c / math.sqrt(sum(c * c for c in q)) for c in q))


@pytest.fixture(scope='module')
def pose_model() -> RobotModel:
    return RobotModel.from_urdf(POSE_JOINTS_URDF)


@pytest.fixture(scope='module')
def pose_ref() -> RefRobot:
    return read_robot(POSE_JOINTS_URDF)


def test_pose_joints_are_not_scalar(pose_model):
    update = pose_model.update(['float_joint', 'planar_joint', 'fixed_joint', 'spin_joint'],
                               [1.0, 2.0, 3.0, 0.5])
    assert update.plan.not_scalar == ('float_joint', 'planar_joint', 'fixed_joint')
    assert update.plan.joints == ('spin_joint',)
    assert set(pose_model.pose_joints) == {'float_joint', 'planar_joint'}


@PROPERTY
@given(vectors, quaternions)
def test_floating_joint_is_origin_times_motion(pose_model, pose_ref, translation, rotation):
    pose = pose_model.joint_pose('float_joint', Pose(translation, rotation))
    expected = pose_ref.joints['float_joint'].origin @ homogeneous(
        translation, quaternion_matrix(rotation))
    assert np.abs(pose_matrix(pose) - expected).max() < 1e-11


@PROPERTY
@given(vectors, st.floats(-3.1, 3.1), unit_vectors, st.floats(-3.0, 3.0), st.booleans())
def test_planar_joint_keeps_in_plane_translation_and_twist(pose_model, pose_ref, translation,
                                                           twist, direction, swing, negate):
    axis = PLANAR_AXIS
    assert np.allclose(pose_ref.joints['planar_joint'].axis, axis)
    normal = direction - (direction @ axis) * axis
    if np.linalg.norm(normal) < 1e-3:
        normal = np.cross(axis, (1.0, 0.0, 0.0))
    normal /= np.linalg.norm(normal)
    # Any rotation is a swing about an axis in the plane times a twist about the joint axis.
    rotation = hamilton(axis_angle_quaternion(normal, swing), axis_angle_quaternion(axis, twist))
    if negate:
        rotation = tuple(-c for c in rotation)
    pose = pose_model.joint_pose('planar_joint', Pose(translation, rotation))
    t = np.array(translation)
    expected = pose_ref.joints['planar_joint'].origin @ homogeneous(
        t - (t @ axis) * axis, rodrigues(axis, twist))
    assert np.abs(pose_matrix(pose) - expected).max() < 1e-9


def test_pose_joints_without_a_pose_are_at_their_origin(pose_model, pose_ref):
    for name in ('float_joint', 'planar_joint'):
        assert np.abs(pose_matrix(pose_model.joint_pose(name))
                      - pose_ref.joints[name].origin).max() < 1e-12


def test_frame_poses_with_pose_joints(pose_model, pose_ref):
    floating = Pose((0.1, 0.2, 0.3), (0.0, 0.6, 0.0, 0.8))
    planar = Pose((1.0, -1.0, 0.5), axis_angle_quaternion(PLANAR_AXIS, 0.7))
    poses = pose_model.frame_poses({'float_joint': floating, 'planar_joint': planar,
                                    'spin_joint': 0.4})
    joints = pose_ref.joints
    in_plane = np.array(planar.translation) - (np.array(planar.translation) @ PLANAR_AXIS) * (
        PLANAR_AXIS)
    expected = compose_local('base', {
        'float_joint_link': ('base', joints['float_joint'].origin @ pose_matrix(floating)),
        'planar_joint_link': ('base', joints['planar_joint'].origin @ homogeneous(
            in_plane, rodrigues(PLANAR_AXIS, 0.7))),
        'fixed_joint_link': ('planar_joint_link', joints['fixed_joint'].origin),
        'spin_joint_link': ('float_joint_link', joints['spin_joint'].motion(0.4)),
    })
    assert max_error(poses, expected) < 1e-12


# Admission: the values a plan lets through without computing ------------------------------

ADMISSION_ROBOTS = {
    'sample_arm': SAMPLE_URDF,
    'mixed_joints': REPO / 'test' / 'fixtures' / 'mixed_joints.urdf',
    'reliability_robot': REPO / 'test' / 'fixtures' / 'reliability_robot.urdf',
}
SPECIAL_VALUES = (0.0, -0.0, math.nan, math.inf, -math.inf, 1e308, -1e308, 5e307, 1e-300,
                  float(np.finfo(float).max), -float(np.finfo(float).max))
# Followers whose limits bind on either side, gains of either sign, and values that overflow:
# a prismatic travel up to the largest double on an origin of half of it, a continuous
# joint's prismatic follower doubling past it.
EXTREMES = robot_xml(
    joint_xml('lead', limit=(-1.0, 1.0)),
    joint_xml('double', parent='lead_link', limit=(-1.0, 1.0), mimic=('lead', 2.0, 0.5)),
    joint_xml('mirror', parent='lead_link', limit=(-0.3, 0.9), mimic=('lead', -1.5, 0.1)),
    joint_xml('far', 'prismatic', xyz='5e307 0 0', axis='1 0 0',
              limit=(-1.7976931348623157e308, 1.7976931348623157e308)),
    joint_xml('spin', 'continuous'),
    joint_xml('spin_slide', 'prismatic', parent='spin_link', axis='0 1 0',
              limit=(-1.7e308, 1.7e308), mimic=('spin', 2.0, 0.0)),
    joint_xml('spin_twice', 'continuous', parent='spin_link', mimic=('spin', -3.0, 1.0)))


@pytest.fixture(scope='module', params=[*sorted(ADMISSION_ROBOTS), 'extremes'])
def admission_model(request) -> RobotModel:
    if request.param == 'extremes':
        return RobotModel.from_urdf(EXTREMES)
    return RobotModel.from_file(ADMISSION_ROBOTS[request.param])


def admitted(plan, positions: list[float]) -> bool:
    """How the stream asks a plan whether a state needs no report."""
    values = np.array(positions)
    return bool((plan.admitted_lower <= values).all() and (values <= plan.admitted_upper).all())


def boundary_values(model: RobotModel, names: list[str]) -> list[float]:
    """Every limit of the joints and their followers' limits mapped back, and a double off."""
    values = list(SPECIAL_VALUES)
    for name in names:
        values += [v for v in model.limits(name) if math.isfinite(v)]
    for follower in model.mimic_joints:
        leader, gain, offset = model.mimic_source(follower)
        if gain:
            values += [(v - offset) / gain for v in model.limits(follower) if math.isfinite(v)]
    return [w for v in values for w in (v, math.nextafter(v, math.inf),
                                        math.nextafter(v, -math.inf))]


@settings(max_examples=500, deadline=None)
@given(data=st.data())
def test_an_admitted_state_is_one_update_finds_nothing_to_report(admission_model, data):
    """The stream skips the kinematics of admitted states it does not publish: an admitted
    state must be one whose update clamps nothing and finds nothing non-finite."""
    model = admission_model
    names = data.draw(st.lists(st.sampled_from(model.scalar_joints), min_size=1, unique=True))
    value = st.one_of(st.sampled_from(boundary_values(model, names)),
                      st.floats(allow_nan=True, allow_infinity=True),
                      st.floats(-4.0, 4.0))
    positions = [data.draw(value) for _ in names]
    plan = model.plan(names)
    if admitted(plan, positions):
        update = model.update(names, positions)
        assert (update.clamped, update.non_finite) == ((), ())
        assert np.isfinite(update.transforms).all()


def test_admission_lets_through_every_state_within_all_limits(admission_model):
    """Not over-cautious: states that clamp nothing, at the limits too, are admitted."""
    model = admission_model
    names = [n for n in model.independent_joints if n in model.scalar_joints]
    plan = model.plan(names)
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(400):
        positions = []
        for name in names:
            lower, upper = (min(max(v, -3.0), 3.0) for v in model.limits(name))
            positions.append(float(rng.choice([lower, upper, rng.uniform(lower, upper)])))
        update = model.update(names, positions)
        if update.clamped or update.non_finite:
            assert not admitted(plan, positions)
        else:
            assert admitted(plan, positions), dict(zip(names, positions))
            checked += 1
    assert checked >= 40  # of 400: the extremes robot clamps often by design


@pytest.mark.parametrize('gain, bias, lower, upper', [
    (1.0, 0.0, -1.0, 1.0), (-10.0, 0.1, -0.2, 0.1), (0.8, 0.01, -1.5, 1.5), (3.0, 0.0, 0.0, 0.0),
    (1e-300, 0.5, -1.0, 1.0), (1e300, 0.0, -1e308, 1e308), (0.1, 0.3, -0.5, 0.7),
    (0.0, 0.5, 0.0, 1.0), (0.0, 2.0, 0.0, 1.0), (1.0, 0.0, 1.0, -1.0)])
def test_admitted_values_are_exactly_those_that_pass_in_doubles(gain, bias, lower, upper):
    from urdf_state_publisher.kinematics.model import admitted_values

    def passes(v: float) -> bool:
        return lower <= v * gain + bias <= upper

    low, high = admitted_values(gain, bias, lower, upper)
    if low > high:  # empty: no double between the exact ends passes
        assert not any(passes(v) for v in (0.0, bias, lower, upper, (lower - bias) / gain
                                           if gain else 0.0))
        return
    assert passes(low) and passes(high) and passes(low / 2 + high / 2)
    assert math.isfinite(low) and math.isfinite(high)
    if gain and max(abs(lower), abs(upper), abs(bias)) < 1e300:
        # The exact ends, to rounding: a little inside them passes, a little outside fails.
        exact = sorted(((lower - bias) / gain, (upper - bias) / gain))
        margin = 1e-9 * max(abs(exact[0]), abs(exact[1]), 1e-6)
        assert low <= exact[0] + margin and high >= exact[1] - margin
        assert not passes(exact[0] - margin) and not passes(exact[1] + margin)
