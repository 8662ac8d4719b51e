"""Description findings sorted by what they mean: near misses warn, extensions are data.

A near miss of a name known at its place (<orgin> in a joint) is a warning that says what was
done and what was probably meant; anything else unknown is an extension for other tools
(<gazebo>, <ros2_control>, drake:..., vendor attributes): counted and listed, never warned
about. Expected texts are written out here, not taken from the code under test.
"""

from pathlib import Path
import re

from conftest import SAMPLE_URDF
import pytest

from urdf_state_publisher import RobotModel
from urdf_state_publisher.description import (
    describe_extensions,
    DescriptionError,
    Extension,
    Origin,
    parse_description,
)
from urdf_state_publisher.description.unknown_names import near_miss
from urdf_state_publisher.tools.inspect import main

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

GAZEBO_ARM = Path(__file__).resolve().parents[1] / 'fixtures' / 'gazebo_arm.urdf'
LIMIT = '<limit lower="-1" upper="1" effort="10" velocity="2"/>'
J = "/robot/joint[@name='j']"


def robot(*parts: str, attributes: str = '') -> str:
    """A <robot> of the parts; each part starts a new line, so that part k is on line k + 1."""
    return f'<robot name="r"{attributes}>' + ''.join('\n' + p for p in parts) + '\n</robot>'


def joint(body: str, kind: str = 'revolute', attributes: str = '') -> str:
    """Joint 'j' from link 'a' to link 'b', on one line."""
    return (f'<joint name="j" type="{kind}"{attributes}><parent link="a"/><child link="b"/>'
            f'{body}</joint>')


AB = '<link name="a"/><link name="b"/>'


# --------------------------------------------------------------------------- the rule

# The names of the URDF spec at each place, written out here.
ROBOT = ('link', 'joint', 'sensor', 'model_state', 'material')
LINK = ('visual', 'collision', 'inertial', 'origin')
JOINT = ('origin', 'parent', 'child', 'axis', 'limit', 'dynamics', 'safety_controller',
         'calibration', 'mimic')
LIMIT_ATTRIBUTES = ('lower', 'upper', 'effort', 'velocity')
DYNAMICS_ATTRIBUTES = ('damping', 'friction')
ORIGIN_ATTRIBUTES = ('xyz', 'rpy', 'quat_xyzw')

NEAR_MISSES = [
    ('orgin', JOINT, 'origin'),
    ('axsi', JOINT, 'axis'),
    ('limits', JOINT, 'limit'),
    ('mimc', JOINT, 'mimic'),
    ('efort', LIMIT_ATTRIBUTES, 'effort'),
    ('lowr', LIMIT_ATTRIBUTES, 'lower'),
    ('xzy', ORIGIN_ATTRIBUTES, 'xyz'),
    ('Origin', JOINT, 'origin'),
    ('LINK', ROBOT, 'link'),
    ('jiont', ROBOT, 'joint'),
    ('sensors', ROBOT, 'sensor'),
    ('inertia', LINK, 'inertial'),
    ('colision', LINK, 'collision'),
]

EXTENSIONS = [
    ('ros2_control', ROBOT), ('gazebo', ROBOT), ('transmission', ROBOT), ('mujoco', ROBOT),
    ('group_state', ROBOT), ('frame', ROBOT),
    ('gazebo', LINK), ('self_filter', LINK), ('material', LINK), ('collision_checking', LINK),
    ('ros2_control', JOINT), ('transmission', JOINT), ('mujoco', JOINT), ('spring', JOINT),
    ('drake:joint', JOINT), ('drake:origin', JOINT), ('{http://example.com/x}origin', JOINT),
    ('static_friction', DYNAMICS_ATTRIBUTES), ('mu_coulomb', DYNAMICS_ATTRIBUTES),
    ('acceleration', LIMIT_ATTRIBUTES), ('jerk', LIMIT_ATTRIBUTES),
]


@pytest.mark.parametrize(('name', 'known', 'meant'), NEAR_MISSES,
                         ids=[case[0] for case in NEAR_MISSES])
def test_near_misses_name_what_was_meant(name, known, meant):
    assert near_miss(name, known) == meant


@pytest.mark.parametrize(('name', 'known'), EXTENSIONS,
                         ids=[f'{case[0]}-{case[1][0]}' for case in EXTENSIONS])
def test_names_of_other_tools_are_no_near_misses(name, known):
    assert near_miss(name, known) is None


# --------------------------------------------------------------------------- near misses

def test_a_misspelt_joint_origin_warns_with_the_suggestion_and_what_was_done():
    description = parse_description(robot(AB, joint(f'<orgin xyz="1 0 0"/>{LIMIT}')))
    assert description.warnings == (
        f"unknown element <orgin> (line 3) in {J} ignored, so the joint's origin is the "
        'identity: did you mean <origin>?',)
    assert description.joints[0].origin == Origin()
    assert description.extensions.total == 0


NEAR_MISS_WARNINGS = {
    'robot child': (
        robot('<link name="a"/>', '<jiont name="x"/>'),
        'unknown element <jiont> (line 3) in <robot> ignored: did you mean <joint>?'),
    'robot child, other case': (
        robot('<Link name="a"/>', '<link name="b"/>'),
        'unknown element <Link> (line 2) in <robot> ignored: did you mean <link>? '
        '(names are case-sensitive)'),
    'link child': (
        robot('<link name="a">\n<visul/></link>'),
        "unknown element <visul> (line 3) in /robot/link[@name='a'] ignored: did you mean "
        '<visual>?'),
    'joint child, axis': (
        robot(AB, joint(f'<axsi xyz="0 0 1"/>{LIMIT}')),
        f'unknown element <axsi> (line 3) in {J} ignored, so the axis is 1 0 0: did you mean '
        '<axis>?'),
    'joint child, limit': (
        robot(AB, joint('<limits effort="1" velocity="1"/>', kind='continuous')),
        f'unknown element <limits> (line 3) in {J} ignored, so the joint has no limits: did '
        'you mean <limit>?'),
    'joint child, mimic': (
        robot('<link name="a"/><link name="b"/><link name="c"/>',
              '<joint name="k" type="continuous"><parent link="b"/><child link="c"/></joint>',
              joint('<mimc joint="k"/>', kind='continuous')),
        f'unknown element <mimc> (line 4) in {J} ignored, so the joint mimics no other joint: '
        'did you mean <mimic>?'),
    'joint child, present too': (
        robot(AB, joint(f'<origin xyz="1 0 0"/><orgin xyz="2 0 0"/>{LIMIT}')),
        f'unknown element <orgin> (line 3) in {J} ignored: did you mean <origin>?'),
    'joint attribute': (
        robot(AB, joint(LIMIT, attributes=' tpye="fixed"')),
        f"unknown attribute 'tpye' (line 3) in {J} ignored: did you mean 'type'?"),
    "a joint child's attribute": (
        robot(AB, joint('<limit lowr="-1" upper="1" effort="10" velocity="2"/>')),
        f"unknown attribute 'lowr' (line 3) in {J}/limit ignored, so lower is 0: did you "
        "mean 'lower'?"),
    'origin attribute': (
        robot(AB, joint(f'<origin xzy="1 2 3"/>{LIMIT}')),
        f"unknown attribute 'xzy' (line 3) in {J}/origin ignored, so xyz is 0 0 0: did you "
        "mean 'xyz'?"),
    'sensor origin': (
        robot(AB, joint(LIMIT), '<sensor name="cam"><parent link="b"/>\n<orgin xyz="1 0 0"/>'
                                '<camera/></sensor>'),
        "unknown element <orgin> (line 5) in /robot/sensor[@name='cam'] ignored, so the "
        "sensor's origin is the identity: did you mean <origin>?"),
    'sensor parent': (
        robot(AB, joint(LIMIT), '<sensor name="cam"><parnet link="b"/><ray/></sensor>'),
        "unknown element <parnet> (line 4) in /robot/sensor[@name='cam'] ignored, so the "
        'sensor is skipped: did you mean <parent>?'),
    'model state': (
        robot(AB, joint(LIMIT), '<model_state model="r"><joint_pos joint="j" position="1"/>'
                                '</model_state>'),
        'unknown element <joint_pos> (line 4) in <model_state> ignored: did you mean '
        '<joint_state>?'),
}


@pytest.mark.parametrize('case', NEAR_MISS_WARNINGS)
def test_near_misses_at_each_place_warn_once_with_the_suggestion(case):
    text, warning = NEAR_MISS_WARNINGS[case]
    description = parse_description(text)
    assert description.warnings == (warning,)
    assert description.extensions.total == 0


def test_a_misspelt_sensor_parent_skips_the_sensor_with_one_warning():
    description = parse_description(NEAR_MISS_WARNINGS['sensor parent'][0])
    assert description.sensors == ()


def test_an_error_caused_by_a_near_miss_names_it():
    with pytest.raises(DescriptionError) as raised:
        parse_description(robot(AB, '<jiont name="j" type="fixed"><parent link="a"/>'
                                    '<child link="b"/></jiont>'))
    assert str(raised.value) == (
        "2 root links (links that are no joint's child): 'a', 'b'; a URDF needs exactly one "
        'root link: connect them, e.g. with a fixed joint (unknown element <jiont> (line 3) in '
        '<robot> ignored: did you mean <joint>?)')
    with pytest.raises(DescriptionError) as raised:
        parse_description(robot(AB, joint('<limits lower="0" upper="1" effort="1" '
                                          'velocity="1"/>')))
    assert str(raised.value) == (
        "joint 'j' is revolute but has no <limit>; add <limit lower=\"...\" upper=\"...\" "
        'effort="..." velocity="..."/> (unknown element <limits> (line 3) in '
        f"{J} ignored, so the joint has no limits: did you mean <limit>?)")
    with pytest.raises(DescriptionError) as raised:
        parse_description(robot(AB, joint('<limit lower="0" upper="1" efort="1" '
                                          'velocity="1"/>')))
    assert str(raised.value) == (
        "joint 'j' <limit> has no effort attribute; add effort=\"...\" (unknown attribute "
        f"'efort' (line 3) in {J}/limit ignored: did you mean 'effort'?)")


# --------------------------------------------------------------------------- extensions

DRAKE = ' xmlns:drake="http://drake.mit.edu"'
WITH_EXTENSIONS = robot(
    '<link name="a"><self_filter padding="0.1"/><gazebo/></link><link name="b"/>',  # line 2
    joint('<dynamics damping="1" mu_coulomb="0.1" drake:stiction="0.2"/><spring k="1"/>'
          '<drake:gear_ratio value="3"/>'
          '<limit lower="0" upper="1" effort="1" velocity="1" acceleration="2"><soft/></limit>',
          attributes=' spin="1"'),  # line 3
    '<gazebo reference="a"><sensor name="s"/></gazebo>',  # line 4
    '<gazebo><plugin name="p"/></gazebo>',  # line 5
    '<ros2_control name="s" type="system"><hardware/></ros2_control>',  # line 6
    '<transmission name="t"/>',  # line 7
    '<mujoco/>',  # line 8
    '<drake:collision_filter_group name="g"/>',  # line 9
    '<anything xmlns="http://example.com/ns"/>',  # line 10
    '<foo/>',  # line 11
    '<material name="grey"/>',  # line 12: URDF's own, not read, not an extension
    attributes=DRAKE)


def test_extensions_of_each_kind_are_counted_and_not_warned_about():
    description = parse_description(WITH_EXTENSIONS)
    assert description.warnings == ()
    extensions = description.extensions
    assert extensions.counts == (
        ('<drake:collision_filter_group>', 1),
        ('<drake:gear_ratio>', 1),
        ('<foo>', 1),
        ('<gazebo>', 3),
        ('<mujoco>', 1),
        ('<ros2_control>', 1),
        ('<self_filter>', 1),
        ('<soft>', 1),
        ('<spring>', 1),
        ('<transmission>', 1),
        ('<{http://example.com/ns}anything>', 1),
        ("'acceleration'", 1),
        ("'drake:stiction'", 1),
        ("'mu_coulomb'", 1),
        ("'spin'", 1),
    )
    assert extensions.total == 17
    assert set(extensions.listed) == {
        Extension('gazebo', False, '<robot>', 4),
        Extension('gazebo', False, '<robot>', 5),
        Extension('ros2_control', False, '<robot>', 6),
        Extension('transmission', False, '<robot>', 7),
        Extension('mujoco', False, '<robot>', 8),
        Extension('drake:collision_filter_group', False, '<robot>', 9),
        Extension('{http://example.com/ns}anything', False, '<robot>', 10),
        Extension('foo', False, '<robot>', 11),
        Extension('self_filter', False, "/robot/link[@name='a']", 2),
        Extension('gazebo', False, "/robot/link[@name='a']", 2),
        Extension('spin', True, J, 3),
        Extension('mu_coulomb', True, f'{J}/dynamics', 3),
        Extension('drake:stiction', True, f'{J}/dynamics', 3),
        Extension('acceleration', True, f'{J}/limit', 3),
        Extension('soft', False, f'{J}/limit', 3),
        Extension('spring', False, J, 3),
        Extension('drake:gear_ratio', False, J, 3),
    }
    assert len(extensions.listed) == 17


def test_extension_labels():
    assert Extension('gazebo', False, '<robot>', 1).label == '<gazebo>'
    assert Extension('drake:stiction', True, J, 1).label == "'drake:stiction'"


def test_the_extension_line_counts_by_name():
    assert describe_extensions(parse_description(WITH_EXTENSIONS).extensions) == (
        '17 extensions ignored (elements and attributes for other tools, not used for tf): '
        '<drake:collision_filter_group> ×1, <drake:gear_ratio> ×1, <foo> ×1, <gazebo> ×3, '
        '<mujoco> ×1, <ros2_control> ×1, <self_filter> ×1, <soft> ×1, <spring> ×1, '
        '<transmission> ×1, 5 more of other names')
    one = parse_description(robot(AB, joint(LIMIT), '<gazebo/>'))
    assert describe_extensions(one.extensions) == (
        '1 extension ignored (elements and attributes for other tools, not used for tf): '
        '<gazebo> ×1')
    assert describe_extensions(parse_description(robot(AB, joint(LIMIT))).extensions) is None


def test_the_model_holds_the_extensions_and_only_real_findings_as_warnings():
    model = RobotModel.from_urdf(robot(AB, joint(f'<orgin/>{LIMIT}'), '<gazebo/>'))
    assert model.warnings == (
        f"unknown element <orgin> (line 3) in {J} ignored, so the joint's origin is the "
        'identity: did you mean <origin>?',)
    assert model.extensions.counts == (('<gazebo>', 1),)
    assert model.extensions.listed == (Extension('gazebo', False, '<robot>', 4),)


# --------------------------------------------------------------------------- hostile input

def test_a_million_junk_extensions_are_counted_and_few_listed():
    count = 1_000_000
    description = parse_description(robot(AB, joint(LIMIT), '<junk/>' * count))
    assert description.warnings == ()
    assert description.extensions.counts == (('<junk>', count),)
    assert description.extensions.total == count
    assert description.extensions.listed == (Extension('junk', False, '<robot>', 4),) * 100
    assert describe_extensions(description.extensions) == (
        '1000000 extensions ignored (elements and attributes for other tools, not used for '
        'tf): <junk> ×1000000')


def test_near_misses_past_what_python_looks_at_are_counted_as_warnings():
    count = 20_000
    description = parse_description(robot(AB, joint(LIMIT + '<orgn/>' * count)))
    assert len(description.warnings) == 51
    assert description.warnings[0] == (
        f"unknown element <orgn> (line 3) in {J} ignored, so the joint's origin is the "
        'identity: did you mean <origin>?')
    assert description.warnings[-1] == f'... and {count - 50} more warnings'
    assert description.extensions.total == 0


def test_names_are_counted_up_to_a_bound_and_the_rest_in_the_total():
    names = [f'tool{i:03}_extension' for i in range(200)]
    description = parse_description(robot(AB, joint(LIMIT), *(f'<{n}/>' for n in names)))
    assert description.warnings == ()
    assert description.extensions.counts == tuple((f'<{n}>', 1) for n in names[:50])
    assert description.extensions.total == 200
    assert len(description.extensions.listed) == 100
    assert describe_extensions(description.extensions) == (
        '200 extensions ignored (elements and attributes for other tools, not used for tf): '
        + ', '.join(f'<{n}> ×1' for n in names[:10]) + ', 190 more of other names')


def test_past_what_python_looks_at_other_elements_count_unnamed():
    # 10 000 unknown names are looked at in one description; the link's comes after them.
    description = parse_description(robot(
        '<link name="a"><self_filter/></link><link name="b"/>', joint(LIMIT),
        '<junk/>' * 10_000))
    assert description.extensions.counts == (('<junk>', 10_000),)
    assert description.extensions.total == 10_001


# --------------------------------------------------------------------------- gazebo_arm

GAZEBO_ARM_COUNTS = (
    ('<drake:collision_filter_group>', 1),
    ('<drake:gear_ratio>', 1),
    ('<drake:rotor_inertia>', 1),
    ('<gazebo>', 4),
    ('<ros2_control>', 1),
    ('<self_filter>', 1),
    ('<transmission>', 2),
    ("'mu_coulomb'", 2),
    ("'mu_viscous'", 2),
)


def lines_with(text: str, fragment: str) -> list[int]:
    """The line numbers (from 1) of the lines of `text` that contain `fragment`."""
    return [n for n, line in enumerate(text.splitlines(), 1) if fragment in line]


def gazebo_arm_extensions() -> list[tuple[str, str, int]]:
    """(label, where, line) of each extension of gazebo_arm.urdf, in document order."""
    text = GAZEBO_ARM.read_text()
    shoulder = "/robot/joint[@name='shoulder_lift_joint']"
    elbow = "/robot/joint[@name='elbow_joint']"
    dynamics = lines_with(text, '<dynamics ')
    [rotor] = lines_with(text, '<drake:rotor_inertia')
    [gear] = lines_with(text, '<drake:gear_ratio')
    [self_filter] = lines_with(text, '    <self_filter')
    [ros2_control] = lines_with(text, '  <ros2_control ')
    gazebo = lines_with(text, '  <gazebo')
    transmissions = lines_with(text, '  <transmission ')
    [drake_group] = lines_with(text, '  <drake:collision_filter_group')
    assert len(dynamics) == 2 and len(gazebo) == 4 and len(transmissions) == 2
    return [
        ("'mu_coulomb'", f'{shoulder}/dynamics', dynamics[0]),
        ("'mu_viscous'", f'{shoulder}/dynamics', dynamics[0]),
        ('<drake:rotor_inertia>', shoulder, rotor),
        ('<drake:gear_ratio>', shoulder, gear),
        ('<self_filter>', "/robot/link[@name='forearm_link']", self_filter),
        ("'mu_coulomb'", f'{elbow}/dynamics', dynamics[1]),
        ("'mu_viscous'", f'{elbow}/dynamics', dynamics[1]),
        ('<ros2_control>', '<robot>', ros2_control),
        *(('<gazebo>', '<robot>', line) for line in gazebo),
        *(('<transmission>', '<robot>', line) for line in transmissions),
        ('<drake:collision_filter_group>', '<robot>', drake_group),
    ]


def test_gazebo_arm_loads_without_warnings_with_its_extensions():
    model = RobotModel.from_file(GAZEBO_ARM)
    assert model.warnings == ()
    assert model.extensions.counts == GAZEBO_ARM_COUNTS
    assert model.extensions.total == 15
    assert sorted((e.label, e.where, e.line) for e in model.extensions.listed) == sorted(
        gazebo_arm_extensions())
    assert [s.name for s in model.sensors] == ['wrist_camera', 'base_laser']


def test_gazebo_arm_has_the_kinematics_of_the_sample_arm():
    arm, sample = RobotModel.from_file(GAZEBO_ARM), RobotModel.from_file(SAMPLE_URDF)
    assert arm.description.joints == sample.description.joints
    assert arm.links == sample.links
    assert arm.sensors == sample.sensors


# --------------------------------------------------------------------------- inspect CLI

def report_section(output: str, title: str) -> list[str]:
    """The lines of a report section, from its title to the next blank line."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start + 1:end]


def test_the_inspect_cli_lists_every_extension_and_strict_passes(capsys):
    status = main([str(GAZEBO_ARM), '--strict'])
    out = capsys.readouterr().out
    assert status == 0
    rows = report_section(out, 'Extensions (15)')
    assert re.split(r'\s{2,}', rows[0].strip()) == ['name', 'in', 'line']
    listed = [tuple(re.split(r'\s{2,}', row.strip())) for row in rows[1:]]
    assert listed == [(label, where, str(line))
                      for label, where, line in gazebo_arm_extensions()]
    assert report_section(out, 'Warnings (0)') == ['  none']
    assert out.rstrip().endswith('0 warnings: OK')


def test_the_inspect_cli_says_how_many_extensions_are_not_listed(capsys, tmp_path):
    path = tmp_path / 'junk.urdf'
    path.write_text(robot(AB, joint(LIMIT), '<junk/>' * 150, '<gazebo/>'))
    assert main([str(path)]) == 0
    rows = report_section(capsys.readouterr().out, 'Extensions (151)')
    assert len(rows) == 1 + 100 + 1
    assert rows[1].split() == ['<junk>', '<robot>', '4']
    assert rows[-1] == '  ... and 51 more, not listed; all by name: <gazebo> ×1, <junk> ×150'


def test_the_inspect_cli_says_none_without_extensions(capsys):
    assert main([str(SAMPLE_URDF)]) == 0
    assert report_section(capsys.readouterr().out, 'Extensions (0)') == ['  none']
