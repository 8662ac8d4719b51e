"""URDF 1.2 as urdfdom 6.0.0 reads it: the new limits, the new <limit> defaults and checks, the
shape checks; each rule also in a 1.1 document, which reads as before.

The rules come from ros/urdfdom 6.0.0 (PRs #212, #249 and #242) and ros/urdfdom_headers 3.0.0
(PRs #83 and #95): doc/urdf.md has the rules, doc/development.md where each comes from.
Expected values are written here by hand or read from the XML with ElementTree, never from
the package's reader.
"""

import math
import random
import re
from xml.etree import ElementTree

from conftest import SAMPLE_URDF
import pytest

from urdf_state_publisher import DescriptionError, parse_description, RobotModel
from urdf_state_publisher.tools.inspect import main

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

INF = math.inf
SAMPLE = SAMPLE_URDF.read_text()


def declared(text: str, version: str) -> str:
    """`text` (a <robot> without a version attribute) declaring URDF `version`."""
    assert text.count('<robot name=') == 1
    return text.replace('<robot name=', f'<robot version="{version}" name=', 1)


def with_rate_limits(text: str) -> str:
    """`text` with acceleration and jerk on every <limit>, deceleration on every other one."""
    counter = iter(range(1000))

    def extend(match: re.Match) -> str:
        i = next(counter)
        rates = f'acceleration="{2 + i}" jerk="{10 + 0.5 * i}"'
        if i % 2:
            rates += f' deceleration="{1 + 0.25 * i}"'
        return f'<limit {rates} '
    return re.sub(r'<limit ', extend, text)


def robot(version: str, *lines: str) -> str:
    """A <robot> of `version`: links a and b, then `lines`, each on a line of its own."""
    return '\n'.join((f'<robot name="r" version="{version}">', '<link name="a"/>',
                      '<link name="b"/>', *lines, '</robot>'))


def joint(joint_type: str, limit: str) -> list[str]:
    """Joint 'elbow' of `joint_type` from a to b with the `limit` element, on its own line."""
    return [f'<joint name="elbow" type="{joint_type}">', '<parent link="a"/><child link="b"/>',
            limit, '</joint>']


def shape(part: str, geometry: str) -> list[str]:
    """Link 'c', joined to a by a fixed joint, with a <part> of `geometry` on its own line."""
    return [f'<link name="c"><{part}><geometry>', geometry, f'</geometry></{part}></link>',
            '<joint name="ac" type="fixed"><parent link="a"/><child link="c"/></joint>',
            '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>']


def line_of(text: str, fragment: str) -> int:
    """The line (from 1) of the one line of `text` holding `fragment`."""
    [number] = [n for n, line in enumerate(text.splitlines(), 1) if fragment in line]
    return number


def error_of(text: str) -> str:
    with pytest.raises(DescriptionError) as info:
        parse_description(text)
    return str(info.value)


def limits_of(text: str, name: str = 'elbow') -> tuple[float, ...]:
    [found] = [j for j in parse_description(text).joints if j.name == name]
    lim = found.limits
    return (lim.lower, lim.upper, lim.effort, lim.velocity, lim.acceleration, lim.deceleration,
            lim.jerk)


# --------------------------------------------------------------------------- the new limits

def test_a_1_2_robot_exposes_its_rate_limits_and_moves_as_declared_1_1() -> None:
    text_1_2 = declared(with_rate_limits(SAMPLE), '1.2')
    model = RobotModel.from_urdf(text_1_2)
    assert model.description.version == '1.2'
    assert model.warnings == ()
    written = {j.get('name'): j.find('limit') for j in ElementTree.fromstring(text_1_2).iter(
        'joint') if j.find('limit') is not None}
    assert len(written) == 8  # the sample's joints with a <limit>, counted by hand
    for name, limit in written.items():
        acceleration = float(limit.get('acceleration'))
        got = model.joint(name).limits
        assert (got.acceleration, got.deceleration, got.jerk) == (
            acceleration, float(limit.get('deceleration', acceleration)),
            float(limit.get('jerk'))), name
        assert (got.effort, got.velocity) == (float(limit.get('effort')),
                                              float(limit.get('velocity'))), name

    # The same robot declared 1.1: the new attributes are extensions, the motion the same.
    model_1_1 = RobotModel.from_urdf(declared(with_rate_limits(SAMPLE), '1.1'))
    assert {e.label for e in model_1_1.description.extensions.listed} >= {
        "'acceleration'", "'deceleration'", "'jerk'"}
    assert all(model_1_1.joint(n).limits.jerk == INF for n in written)
    assert model.static_transforms() == model_1_1.static_transforms()
    names = model.scalar_joints
    rng = random.Random(12)
    for _ in range(20):
        values = {n: rng.uniform(-4.0, 4.0) for n in names}
        assert model.frame_poses(values) == model_1_1.frame_poses(values)
        update, update_1_1 = (m.update(names, list(values.values())) for m in (model, model_1_1))
        assert (update.values == update_1_1.values).all()
        assert (update.transforms == update_1_1.transforms).all()
        assert update.clamped == update_1_1.clamped


# Per case: the joint type, its <limit>, and what URDF 1.2 makes of it (lower, upper, effort,
# velocity, acceleration, deceleration, jerk), by urdfdom 6.0.0's README table and its tests.
DEFAULTS_1_2 = {
    'all written': ('revolute', '<limit lower="-1" upper="2" effort="3" velocity="4" '
                    'acceleration="5" deceleration="6" jerk="7"/>', (-1, 2, 3, 4, 5, 6, 7)),
    'position only': ('revolute', '<limit lower="-1" upper="1"/>',
                      (-1, 1, INF, INF, INF, INF, INF)),
    'prismatic position only': ('prismatic', '<limit lower="0" upper="0.5"/>',
                                (0, 0.5, INF, INF, INF, INF, INF)),
    'deceleration is the acceleration': (
        'revolute', '<limit lower="-1" upper="1" acceleration="2.5"/>',
        (-1, 1, INF, INF, 2.5, 2.5, INF)),
    'deceleration alone': ('revolute', '<limit lower="-1" upper="1" deceleration="3"/>',
                           (-1, 1, INF, INF, INF, 3, INF)),
    'zero is a limit': ('revolute', '<limit lower="0" upper="0" effort="0" velocity="0" '
                        'acceleration="0" jerk="0"/>', (0, 0, 0, 0, 0, 0, 0)),
    'continuous empty': ('continuous', '<limit/>', (-INF, INF, INF, INF, INF, INF, INF)),
    'continuous effort': ('continuous', '<limit effort="1" velocity="2"/>',
                          (-INF, INF, 1, 2, INF, INF, INF)),
    'continuous lower only': ('continuous', '<limit lower="1"/>',
                              (1, INF, INF, INF, INF, INF, INF)),
    'fixed': ('fixed', '<limit jerk="9"/>', (-INF, INF, INF, INF, INF, INF, 9)),
}


@pytest.mark.parametrize('case', DEFAULTS_1_2)
def test_1_2_limit_defaults(case: str) -> None:
    joint_type, limit, expected = DEFAULTS_1_2[case]
    assert limits_of(robot('1.2', *joint(joint_type, limit))) == expected


# Per case: the joint type, its <limit>, and what URDF 1.1 makes of it, as before 1.2: limits
# or the error, which 1.0 and 1.1 documents keep.
BEFORE_1_2 = {
    'rates are extensions': (
        'revolute', '<limit lower="-1" upper="2" effort="3" velocity="4" acceleration="5" '
        'deceleration="6" jerk="7"/>', (-1, 2, 3, 4, INF, INF, INF)),
    'position defaults to 0': ('revolute', '<limit effort="1" velocity="2"/>',
                               (0, 0, 1, 2, INF, INF, INF)),
    'continuous position 0': ('continuous', '<limit effort="1" velocity="2"/>',
                              (0, 0, 1, 2, INF, INF, INF)),
    'effort required': ('revolute', '<limit lower="-1" upper="1" velocity="1"/>',
                        "joint 'elbow' <limit> has no effort attribute; add effort="),
    'velocity required': ('continuous', '<limit effort="1"/>',
                          "joint 'elbow' <limit> has no velocity attribute; add velocity="),
}


@pytest.mark.parametrize('version', ['1.1', '1.0'])
@pytest.mark.parametrize('case', BEFORE_1_2)
def test_limits_before_1_2_read_as_before(case: str, version: str) -> None:
    joint_type, limit, expected = BEFORE_1_2[case]
    text = robot(version, *joint(joint_type, limit))
    if isinstance(expected, str):
        assert error_of(text).startswith(expected)
    else:
        assert limits_of(text) == expected
        assert parse_description(text).warnings == ()


# --------------------------------------------------------------------------- rules both ways

# Per rule: the lines of a robot, the fragment of the line the 1.2 error names, the rest of
# the 1.2 error, and what a 1.1 document makes of the same lines: the joint's limits, or None
# for a robot that loads (its shapes are not read).
RULES = {
    'negative jerk': (
        joint('revolute', '<limit lower="-1" upper="1" effort="1" velocity="1" jerk="-3"/>'),
        """joint 'elbow' <limit jerk="-3"> (line {line}): jerk cannot be negative""",
        (-1, 1, 1, 1, INF, INF, INF)),
    'negative acceleration': (
        joint('revolute', '<limit lower="-1" upper="1" effort="1" velocity="1" '
              'acceleration="-0.5"/>'),
        """joint 'elbow' <limit acceleration="-0.5"> (line {line}): acceleration cannot be """
        'negative', (-1, 1, 1, 1, INF, INF, INF)),
    'negative deceleration': (
        joint('prismatic', '<limit lower="0" upper="1" effort="1" velocity="1" '
              'acceleration="2" deceleration="-2"/>'),
        """joint 'elbow' <limit deceleration="-2"> (line {line}): deceleration cannot be """
        'negative', (0, 1, 1, 1, INF, INF, INF)),
    'negative effort': (
        joint('revolute', '<limit lower="-1" upper="1" effort="-10" velocity="1"/>'),
        """joint 'elbow' <limit effort="-10"> (line {line}): effort cannot be negative""",
        (-1, 1, -10, 1, INF, INF, INF)),
    'negative velocity': (
        joint('continuous', '<limit effort="1" velocity="-1"/>'),
        """joint 'elbow' <limit velocity="-1"> (line {line}): velocity cannot be negative""",
        (0, 0, 1, -1, INF, INF, INF)),
    'revolute without upper': (
        joint('revolute', '<limit lower="-1" effort="1" velocity="1"/>'),
        "joint 'elbow' <limit> (line {line}) has no upper attribute, which a revolute joint "
        'needs in URDF 1.2', (-1, 0, 1, 1, INF, INF, INF)),
    'prismatic without lower': (
        joint('prismatic', '<limit upper="1" effort="1" velocity="1"/>'),
        "joint 'elbow' <limit> (line {line}) has no lower attribute, which a prismatic joint "
        'needs in URDF 1.2', (0, 1, 1, 1, INF, INF, INF)),
    'continuous upper below lower': (
        joint('continuous', '<limit lower="1" upper="0" effort="1" velocity="1"/>'),
        "joint 'elbow' <limit> (line {line}): upper (0.0) is smaller than lower (1.0)",
        (1, 0, 1, 1, INF, INF, INF)),
    'jerk not a number': (
        joint('revolute', '<limit lower="-1" upper="1" effort="1" velocity="1" jerk="fast"/>'),
        "joint 'elbow' <limit> (line {line}): jerk is not a number ('fast')",
        (-1, 1, 1, 1, INF, INF, INF)),
    'jerk not finite': (
        joint('revolute', '<limit lower="-1" upper="1" effort="1" velocity="1" jerk="inf"/>'),
        "joint 'elbow' <limit> (line {line}): jerk is not finite (inf)",
        (-1, 1, 1, 1, INF, INF, INF)),
    'zero sphere radius': (
        shape('visual', '<sphere radius="0"/>'),
        """link 'c' <visual> <sphere radius="0"> (line {line}): radius must be greater than 0""",
        None),
    'negative sphere radius': (
        shape('collision', '<sphere radius="-0.1"/>'),
        """link 'c' <collision> <sphere radius="-0.1"> (line {line}): radius must be greater """
        'than 0', None),
    'flat box': (
        shape('visual', '<box size="1 0 1"/>'),
        """link 'c' <visual> <box size="1 0 1"> (line {line}): size must be greater than 0""",
        None),
    'inside-out box': (
        shape('collision', '<box size="-1 -1 -1"/>'),
        """link 'c' <collision> <box size="-1 -1 -1"> (line {line}): size must be greater """
        'than 0', None),
    'box size not finite': (
        shape('visual', '<box size="1 nan 1"/>'),
        "link 'c' <visual> <box> (line {line}): size is not finite (nan)", None),
    'zero cylinder radius': (
        shape('visual', '<cylinder radius="0" length="1"/>'),
        """link 'c' <visual> <cylinder radius="0"> (line {line}): radius must be greater """
        'than 0', None),
    'negative cylinder length': (
        shape('collision', '<cylinder radius="1" length="-2"/>'),
        """link 'c' <collision> <cylinder length="-2"> (line {line}): length must be greater """
        'than 0', None),
    'zero capsule length': (
        shape('visual', '<capsule radius="0.1" length="0"/>'),
        """link 'c' <visual> <capsule length="0"> (line {line}): length must be greater """
        'than 0', None),
    'capsule radius not finite': (
        shape('collision', '<capsule radius="inf" length="1"/>'),
        "link 'c' <collision> <capsule> (line {line}): radius is not finite (inf)", None),
    'sphere without radius': (
        shape('visual', '<sphere/>'),
        "link 'c' <visual> <sphere> (line {line}) has no radius attribute", None),
}


NAMED_ELEMENTS = ('<limit', '<sphere', '<box', '<cylinder', '<capsule')


@pytest.mark.parametrize('rule', RULES)
def test_1_2_refuses_and_1_1_reads_as_before(rule: str) -> None:
    lines, message, before = RULES[rule]
    text = robot('1.2', *lines)
    named = next(line for line in lines if line.startswith(NAMED_ELEMENTS))
    error = error_of(text)
    assert error.startswith(message.format(line=line_of(text, named))), error
    assert '\n' not in error

    text_1_1 = robot('1.1', *lines)
    description = parse_description(text_1_1)
    assert description.version == '1.1'
    if before is not None:
        assert limits_of(text_1_1) == before
        assert description.warnings == ()


@pytest.mark.parametrize('geometry', [
    '<sphere radius="0.01"/>', '<box size="1 2 3"/>', '<cylinder radius="1" length="1e-6"/>',
    '<capsule radius="0.5" length="2"/>',
    # urdfdom 6.0.0 checks no mesh scale: zero and mirroring scales load in 1.2.
    '<mesh filename="package://r/m.stl" scale="0 -1 1"/>',
    # Only the first shape of a <geometry> is read, as urdfdom reads it.
    '<sphere radius="1"/><sphere radius="0"/>',
    # An unknown shape is not checked.
    '<cone radius="0"/>',
])
def test_1_2_loads_valid_and_unchecked_shapes(geometry: str) -> None:
    for part in ('visual', 'collision'):
        assert parse_description(robot('1.2', *shape(part, geometry))).version == '1.2'


def test_1_0_shapes_are_not_read() -> None:
    text = robot('1.0', *shape('visual', '<sphere radius="0"/>'))
    assert parse_description(text).version == '1.0'


def test_every_shape_is_checked_not_only_the_first_of_a_link() -> None:
    text = robot('1.2', '<link name="c">',
                 '<visual><geometry><box size="1 1 1"/></geometry></visual>',
                 '<collision><geometry><box size="1 1 1"/></geometry></collision>',
                 '<collision><geometry><cylinder radius="1" length="0"/></geometry></collision>',
                 '</link>',
                 '<joint name="ac" type="fixed"><parent link="a"/><child link="c"/></joint>',
                 '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>')
    assert error_of(text).startswith(
        """link 'c' <collision> <cylinder length="0"> (line 7): length must be greater than 0""")


# --------------------------------------------------------------------------- clamping

def test_joints_without_position_limits_are_not_clamped() -> None:
    text = robot('1.2', '<link name="c"/>',
                 *joint('continuous', '<limit effort="1" acceleration="2"/>'),
                 '<joint name="wrist" type="revolute"><parent link="b"/><child link="c"/>',
                 '<limit lower="-0.5" upper="0.5" jerk="100"/></joint>')
    model = RobotModel.from_urdf(text)
    assert model.joint('elbow').limits.lower == -INF
    assert model.limits('elbow') == (-INF, INF)
    update = model.update(['elbow', 'wrist'], [100.0, 2.0])
    assert update.values.tolist() == [100.0, 0.5]
    assert update.clamped == ('wrist',)
    assert model.default_positions() == {'elbow': 0.0, 'wrist': 0.0}


# --------------------------------------------------------------------------- versions

@pytest.mark.parametrize('version', ['1.3', '2.0', '1.10', '3.2'])
def test_future_versions_are_refused_in_one_line_naming_those_read(version: str) -> None:
    message = error_of(f'<robot name="r" version="{version}"><link name="a"/></robot>')
    assert '\n' not in message
    assert message.startswith(f"<robot version='{version}'>: URDF {version} is not supported")
    assert 'this node reads URDF 1.0, 1.1 and 1.2' in message
    assert 'write version="1.0", "1.1" or "1.2"' in message


@pytest.mark.parametrize(('attribute', 'version'), [('1.2', '1.2'), ('01.02', '1.2')])
def test_1_2_is_read(attribute: str, version: str) -> None:
    assert parse_description(robot(attribute, '<joint name="ab" type="fixed"><parent '
                                   'link="a"/><child link="b"/></joint>')).version == version


# --------------------------------------------------------------------------- inspection CLI

def test_the_inspection_cli_shows_the_rate_limits(capsys, tmp_path) -> None:
    path = tmp_path / 'r.urdf'
    path.write_text(robot('1.2', '<link name="c"/>', *joint(
        'revolute', '<limit lower="-1" upper="1" acceleration="2.5" jerk="40"/>'),
        '<joint name="slide" type="prismatic"><parent link="b"/><child link="c"/>',
        '<limit lower="0" upper="0.3" effort="5" velocity="0.1" acceleration="1" '
        'deceleration="0.5"/></joint>'))
    assert main([str(path)]) == 0
    header, elbow, slide = capsys.readouterr().out.split('\nJoints (2)\n')[1].splitlines()[:3]
    assert re.search(r'velocity +effort +acceleration +deceleration +jerk +mimic', header)
    assert re.search(r'^ +elbow .* no limit +no limit +2\.5 rad/s² +2\.5 rad/s² +40 rad/s³$',
                     elbow)
    assert re.search(r'^ +slide .* 0\.1 m/s +5 N +1 m/s² +0\.5 m/s² +no limit$', slide)


def test_the_inspection_cli_adds_no_columns_before_1_2(capsys, tmp_path) -> None:
    path = tmp_path / 'r.urdf'
    path.write_text(robot('1.1', *joint('revolute', '<limit lower="-1" upper="1" effort="2" '
                                        'velocity="3" jerk="4"/>')))
    assert main([str(path)]) == 0
    header = capsys.readouterr().out.split('\nJoints (1)\n')[1].splitlines()[0]
    assert re.search(r'velocity +effort +mimic \(as written\)$', header)


def test_a_near_miss_of_a_1_2_attribute_warns_with_what_1_2_makes_of_its_absence() -> None:
    text = robot('1.2', *joint('revolute', '<limit lower="0" upper="1" jrek="5"/>'))
    description = parse_description(text)
    assert description.warnings == (
        "unknown attribute 'jrek' (line 6) in /robot/joint[@name='elbow']/limit ignored, so "
        "jerk is not limited: did you mean 'jerk'?",)
    assert limits_of(text)[-1] == INF


@pytest.mark.parametrize('version', ['1.0', '1.1', '1.2'])
@pytest.mark.parametrize('joint_type', ['revolute', 'prismatic'])
def test_a_revolute_or_prismatic_joint_without_limit_is_refused_in_every_version(
        version: str, joint_type: str) -> None:
    """urdfdom 6.0.0 too: 1.2 makes <limit>'s attributes optional, not <limit> itself."""
    message = error_of(robot(version, *joint(joint_type, '')))
    assert message.startswith(f"joint 'elbow' is {joint_type} but has no <limit>; add <limit ")
