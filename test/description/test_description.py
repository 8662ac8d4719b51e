"""Tests for urdf_state_publisher.description: loading, defaults, validation, warnings."""

from collections.abc import Callable
import gc
import math
from pathlib import Path
import sys
import threading
from xml.parsers import expat

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import pytest

from urdf_state_publisher.description import (
    Description,
    DescriptionError,
    expand_xacro,
    JointType,
    Limits,
    MAX_DESCRIPTION_BYTES,
    Mimic,
    Origin,
    parse_description,
    read_description_file,
    SoftLimits,
)
from urdf_state_publisher.description.xml_safety import MAX_DEPTH, parse_xml
from urdf_state_publisher.errors import DescriptionError as ErrorsDescriptionError

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

LIMIT = '<limit lower="-1" upper="1" effort="10" velocity="2"/>'


def robot(*parts: str, name: str = 'bot') -> str:
    """Wrap URDF fragments in a <robot>."""
    return f'<robot name="{name}">' + ''.join(parts) + '</robot>'


def links(*names: str) -> str:
    """Return <link> elements with the given names."""
    return ''.join(f'<link name="{n}"/>' for n in names)



def joint_named(description, name: str):
    """The joint of `description` called `name`."""
    [joint] = [j for j in description.joints if j.name == name]
    return joint

def joint(name: str, parent: str, child: str, kind: str = 'revolute', body: str = LIMIT) -> str:
    """Return one <joint> element."""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/>{body}</joint>')


def arm(*extra: str) -> str:
    """Return a three-link chain, base -j1-> l1 -j2-> l2, plus extra fragments."""
    return robot(links('base', 'l1', 'l2'), joint('j1', 'base', 'l1'), joint('j2', 'l1', 'l2'),
                 *extra)


def error_of(text: str | bytes) -> str:
    """Return the message of the DescriptionError that parsing `text` raises."""
    with pytest.raises(DescriptionError) as info:
        parse_description(text)
    return str(info.value)


def test_error_type_is_the_one_in_errors_module() -> None:
    assert DescriptionError is ErrorsDescriptionError
    assert issubclass(DescriptionError, ValueError)


# --------------------------------------------------------------------------- errors

ERROR_CASES = [
    pytest.param('<robot name="x"><link name="a"></robot>',
                 ['line 1, column 32', '</robot> does not match <link>'], id='malformed-xml'),
    pytest.param('<model name="x"><link name="a"/></model>', ['<model>', '<robot>'],
                 id='root-not-robot'),
    pytest.param(robot(links('a'), joint('jx', 'ghost', 'a', 'fixed', '')), ["'jx'", "'ghost'"],
                 id='missing-parent-link'),
    pytest.param(robot(links('a'), joint('jx', 'a', 'ghost', 'fixed', '')), ["'jx'", "'ghost'"],
                 id='missing-child-link'),
    pytest.param(robot(links('a', 'b', 'a')), ["'a'", 'twice', 'unique'],
                 id='duplicate-link'),
    pytest.param(robot(links('a', 'b', 'c'), joint('j', 'a', 'b', 'fixed', ''),
                       joint('j', 'a', 'c', 'fixed', '')), ["'j'", 'twice'],
                 id='duplicate-joint'),
    pytest.param(robot(links('a', 'b', 'c'), joint('ja', 'a', 'c', 'fixed', ''),
                       joint('jb', 'b', 'c', 'fixed', '')), ["'c'", "'ja'", "'jb'"],
                 id='two-parent-joints'),
    pytest.param(robot(links('root', 'a', 'b'), joint('j1', 'a', 'b', 'fixed', ''),
                       joint('j2', 'b', 'a', 'fixed', '')),
                 ['cycle', "'a'", "'b'", "'j1'", "'j2'"], id='cycle'),
    pytest.param(robot(links('root', 'a'), joint('self', 'a', 'a', 'fixed', '')),
                 ['cycle', "'self'", "'a'"], id='joint-to-itself'),
    pytest.param(robot(links('a', 'b'), joint('j1', 'a', 'b', 'fixed', ''),
                       joint('j2', 'b', 'a', 'fixed', '')),
                 ['no root link: every link is a child of a joint (cycle?)', "'j1'", "'j2'"],
                 id='no-root'),
    pytest.param(robot(links('c', 'a', 'b')),
                 ["'a', 'b', 'c'", 'exactly one root', 'fixed joint'], id='several-roots'),
    pytest.param(robot(name='empty'), ['no links', "'empty'"], id='no-links'),
    pytest.param(robot(links('a', 'b'), joint('rev', 'a', 'b', 'revolute', '')),
                 ["'rev'", '<limit>'], id='revolute-without-limit'),
    pytest.param(robot(links('a', 'b'), joint('pri', 'a', 'b', 'prismatic', '')),
                 ["'pri'", '<limit>'], id='prismatic-without-limit'),
    pytest.param(robot(links('a', 'b'), joint(
        'j', 'a', 'b', 'revolute', '<limit lower="2" upper="-3" effort="1" velocity="1"/>')),
                 ["'j'", 'lower (2.0)', 'upper (-3.0)'], id='lower-above-upper'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'revolute',
                                              LIMIT + '<axis xyz="0 0 0"/>')),
                 ["'j'", '<axis>', 'zero length'], id='zero-axis'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'revolute',
                                              LIMIT + '<axis xyz="0 nan 1"/>')),
                 ["'j'", '<axis>', 'xyz', 'not finite'], id='nan-axis'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'planar', '<axis xyz="0 0 0"/>')),
                 ["'j'", '<axis>'], id='zero-axis-planar'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'fixed',
                                              '<origin xyz="0 inf 0"/>')),
                 ["'j'", '<origin>', 'xyz', 'not finite'], id='inf-origin-xyz'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'fixed',
                                              '<origin rpy="nan 0 0"/>')),
                 ["'j'", '<origin>', 'rpy', 'not finite'], id='nan-origin-rpy'),
    pytest.param(robot(links('a', 'b'), joint(
        'j', 'a', 'b', 'revolute', '<limit lower="-1" upper="1" effort="inf" velocity="1"/>')),
                 ["'j'", '<limit>', 'effort'], id='inf-limit-effort'),
    pytest.param(robot(links('a', 'b'), joint(
        'j', 'a', 'b', 'continuous', '<limit effort="1" velocity="nan"/>')),
                 ["'j'", '<limit>', 'velocity'], id='nan-limit-velocity'),
    pytest.param(robot(links('a', 'b'), joint(
        'j', 'a', 'b', 'revolute', '<limit lower="-inf" upper="1" effort="1" velocity="1"/>')),
                 ["'j'", '<limit>', 'lower'], id='inf-limit-lower'),
    pytest.param(robot(links('a', 'b'), joint(
        'j', 'a', 'b', 'revolute',
        LIMIT + '<safety_controller k_velocity="1" soft_upper_limit="nan"/>')),
                 ["'j'", '<safety_controller>', 'soft_upper_limit'], id='nan-safety'),
    pytest.param(robot(links('a', 'b', 'c'), joint('j1', 'a', 'b'), joint(
        'j2', 'b', 'c', 'revolute', LIMIT + '<mimic joint="j1" multiplier="inf"/>')),
                 ["'j2'", '<mimic>', 'multiplier'], id='inf-mimic-multiplier'),
    pytest.param(robot(links('a', 'b', 'c'), joint('j1', 'a', 'b'), joint(
        'j2', 'b', 'c', 'revolute', LIMIT + '<mimic joint="j1" offset="nan"/>')),
                 ["'j2'", '<mimic>', 'offset'], id='nan-mimic-offset'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'hinge', '')),
                 ["'j'", "'hinge'", 'revolute'], id='unknown-joint-type'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'unknown', '')),
                 ["'j'", "'unknown'"], id='urdfdom-unknown-type'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'revolute',
                                              LIMIT + '<mimic joint="nobody"/>')),
                 ["'j'", "'nobody'", 'does not exist'], id='mimic-unknown-joint'),
    pytest.param(robot(links('r', 'a', 'b', 'c'),
                       joint('a', 'r', 'a', 'revolute', LIMIT + '<mimic joint="b"/>'),
                       joint('b', 'a', 'b', 'revolute', LIMIT + '<mimic joint="c"/>'),
                       joint('c', 'b', 'c', 'revolute', LIMIT + '<mimic joint="a"/>')),
                 ['mimic cycle', 'a -> b -> c -> a'], id='mimic-cycle'),
    pytest.param(robot(links('r', 'a'),
                       joint('me', 'r', 'a', 'revolute', LIMIT + '<mimic joint="me"/>')),
                 ['mimic cycle', 'me -> me'], id='mimic-itself'),
    pytest.param(robot(links('r', 'a', 'b'), joint('lead', 'r', 'a', 'fixed', ''),
                       joint('follow', 'a', 'b', 'revolute', LIMIT + '<mimic joint="lead"/>')),
                 ["'follow'", "'lead'", 'fixed'], id='mimic-fixed-leader'),
    pytest.param(robot(links('r', 'a', 'b'), joint('lead', 'r', 'a', 'floating', ''),
                       joint('follow', 'a', 'b', 'revolute', LIMIT + '<mimic joint="lead"/>')),
                 ["'follow'", "'lead'", 'floating'], id='mimic-floating-leader'),
    pytest.param(robot(links('r', 'a', 'b'), joint('lead', 'r', 'a', 'planar', ''),
                       joint('follow', 'a', 'b', 'revolute', LIMIT + '<mimic joint="lead"/>')),
                 ["'follow'", "'lead'", 'planar'], id='mimic-planar-leader'),
    # What urdfdom_py raises on, turned into messages that name the joint.
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'revolute', LIMIT + '<axis/>')),
                 ["'j'", '<axis>', 'xyz'], id='axis-without-xyz'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'fixed', '<origin xyz="1 x 3"/>')),
                 ["'j'", 'xyz', "'x'"], id='origin-not-a-number'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'fixed', '<origin xyz="1 2"/>')),
                 ["'j'", 'xyz'], id='origin-two-numbers'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'revolute',
                                              '<limit lower="0" upper="1"/>')),
                 ["'j'", 'effort'], id='limit-without-effort'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'revolute',
                                              LIMIT + '<mimic multiplier="2"/>')),
                 ["'j'", 'joint'], id='mimic-without-joint'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'fixed',
                                              '<origin quat_xyzw="0 0 0 1"/>')),
                 ["'j'", 'quat_xyzw'], id='quaternion-origin'),
    pytest.param(robot(links('a', 'b'), '<joint name="j"><parent link="a"/>'
                                         '<child link="b"/></joint>'),
                 ["'j'", 'type'], id='joint-without-type'),
    pytest.param(robot(links('a', 'b'), '<joint name="j" type="fixed"><child link="b"/></joint>'),
                 ["'j'", '<parent>'], id='joint-without-parent'),
    pytest.param(robot(links('a', 'b'), '<joint name="j" type="fixed"><parent/>'
                                         '<child link="b"/></joint>'),
                 ["'j'", '<parent>', 'link'], id='parent-without-link'),
    pytest.param(robot(links('a', 'b'), '<joint type="fixed"><parent link="a"/>'
                                         '<child link="b"/></joint>'),
                 ['<joint>', 'line 1', 'no name'], id='joint-without-name'),
    pytest.param(robot('<link/>'), ['<link>', 'no name'], id='link-without-name'),
    pytest.param('<robot><link name="a"/></robot>', ['<robot>', 'name'], id='robot-without-name'),
    pytest.param('', ['robot description is empty'], id='empty'),
    pytest.param(' \n\t ', ['robot description is empty'], id='whitespace'),
    pytest.param(b'', ['robot description is empty'], id='empty-bytes'),
]


@pytest.mark.parametrize(('text', 'expected'), ERROR_CASES)
def test_errors_name_the_offending_element(text: str, expected: list[str]) -> None:
    message = error_of(text)
    for fragment in expected:
        assert fragment in message


def test_duplicates_report_both_lines() -> None:
    message = error_of('<robot name="r">\n<link name="a"/>\n<link name="b"/>\n<link name="a"/>'
                       '</robot>')
    assert "link 'a'" in message
    assert 'lines 2 and 4' in message


def test_malformed_xml_reports_line_and_column() -> None:
    message = error_of('<robot name="x">\n  <link name="a">\n</robot>')
    assert 'line 3' in message
    assert 'column' in message


def test_several_roots_lists_all_sorted() -> None:
    message = error_of(robot(links('zeta', 'alpha', 'mid', 'child'),
                             joint('j', 'mid', 'child', 'fixed', '')))
    assert "'alpha', 'mid', 'zeta'" in message
    assert "'child'" not in message


def test_non_text_input_is_a_description_error() -> None:
    message = error_of(42)  # type: ignore[arg-type]
    assert 'int' in message


# --------------------------------------------------------------------------- hostile XML

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE robot [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
  <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
  <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
  <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
  <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<robot name="&lol9;"><link name="&lol9;"/></robot>
"""


def test_billion_laughs_is_never_expanded() -> None:
    """A DOCTYPE is skipped as TinyXML2 skips it: the entity stays as written, once."""
    description = parse_description(BILLION_LAUGHS)
    assert description.name == '&lol9;'
    assert description.links == ('&lol9;',)
    assert description.warnings == (
        "line 13, column 14: the entity reference '&lol9;' in attribute "
        "'name' of <robot>, which robot_state_publisher keeps as it stands (it expands no "
        'entity); read as robot_state_publisher reads it (2 such places)',)


def test_external_entity_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / 'secret.txt'
    secret.write_text('TOP-SECRET-CONTENT')
    text = (f'<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "{secret.as_uri()}">]>'
            '<robot name="r"><link name="&x;"/></robot>')
    for document in (text, text.encode(), text.encode('utf-16')):
        description = parse_description(document)
        assert description.links == ('&x;',)
        assert 'TOP-SECRET' not in repr(description)


def test_etc_passwd_entity_is_never_read() -> None:
    text = ('<!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            '<robot name="r"><link name="&x;"/></robot>')
    description = parse_description(text)
    assert description.links == ('&x;',)
    assert 'root:' not in repr(description)


def test_bare_doctype_is_read_without_a_warning() -> None:
    """Well-formed XML, which robot_state_publisher reads too: nothing to say about it."""
    description = parse_description('<!DOCTYPE robot><robot name="r"><link name="a"/></robot>')
    assert description.links == ('a',)
    assert description.warnings == ()


def test_nesting_deeper_than_the_limit_is_refused() -> None:
    def nested(depth: int) -> str:  # <robot> is level 1, the outermost <gazebo> level 2
        return robot(links('a'), '<gazebo>' * (depth - 1) + '</gazebo>' * (depth - 1))

    assert parse_description(nested(MAX_DEPTH)).links == ('a',)
    message = error_of(nested(MAX_DEPTH + 1))
    assert f'nests elements more than {MAX_DEPTH} levels deep' in message
    assert 'levels deep' in error_of(nested(1_000_000))


def test_bytes_in_an_unknown_encoding_are_refused_naming_it() -> None:
    message = error_of(b'<?xml version="1.0" encoding="x-nothing"?><robot name="r"/>')
    assert "its encoding 'x-nothing' is unknown" in message
    ebcdic = '<?xml version="1.0" encoding="cp037"?>' + robot(links('a'))
    assert 'EBCDIC' in error_of(ebcdic.encode('cp037'))
    # UTF-32 and UTF-16 without a byte order mark are known by their first characters.
    for encoding in ('utf-32-le', 'utf-32-be', 'utf-16-le', 'utf-16-be'):
        text = f'<?xml version="1.0" encoding="{encoding}"?>' + robot(links('ä'))
        assert parse_description(text.encode(encoding)).links == ('ä',)


def test_undeclared_entity_reference_is_kept_as_written() -> None:
    description = parse_description('<robot name="r"><link name="&x;"/></robot>')
    assert description.links == ('&x;',)
    assert description.warnings == (
        "line 1, column 29: the entity reference '&x;' in attribute 'name' "
        'of <link>, which robot_state_publisher keeps as it stands (it expands no entity); '
        'read as robot_state_publisher reads it (1 such place)',)


# --------------------------------------------------------------------------- input forms

def test_str_with_encoding_declaration() -> None:
    text = '<?xml version="1.0" encoding="ISO-8859-1"?>' + robot(links('bäse'), name='rö')
    description = parse_description(text)
    assert description.name == 'rö'
    assert description.links == ('bäse',)


def test_bytes_input_uses_declared_encoding() -> None:
    text = '<?xml version="1.0" encoding="ISO-8859-1"?>' + robot(links('bäse'))
    assert parse_description(text.encode('iso-8859-1')).root == 'bäse'
    assert parse_description(robot(links('bäse')).encode('utf-8')).root == 'bäse'


def test_default_namespace_on_robot_is_accepted() -> None:
    text = ('<robot xmlns="http://www.ros.org" name="r"><link name="a"/><link name="b"/>'
            + joint('j', 'a', 'b', 'fixed', '') + '</robot>')
    description = parse_description(text)
    assert description.joints[0].name == 'j'
    assert description.warnings == ()


# --------------------------------------------------------------------------- defaults

def test_spec_defaults_are_applied() -> None:
    description = parse_description(arm(
        '<link name="l3"/>',
        joint('j3', 'l2', 'l3', 'revolute', LIMIT + '<mimic joint="j1"/>')))
    j1 = joint_named(description, 'j1')
    assert j1.origin == Origin() == Origin((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    assert j1.axis == (1.0, 0.0, 0.0)
    assert j1.limits == Limits(lower=-1.0, upper=1.0, velocity=2.0, effort=10.0)
    assert j1.soft_limits is None
    assert j1.mimic is None
    assert joint_named(description, 'j3').mimic == Mimic(joint='j1', multiplier=1.0, offset=0.0)


def test_origin_and_axis_are_read_and_axis_normalised() -> None:
    description = parse_description(robot(links('a', 'b'), joint(
        'j', 'a', 'b', 'prismatic',
        LIMIT + '<origin xyz="1 2 3" rpy="0.1 0.2 0.3"/><axis xyz="0 3 4"/>')))
    j = joint_named(description, 'j')
    assert j.origin == Origin(xyz=(1.0, 2.0, 3.0), rpy=(0.1, 0.2, 0.3))
    assert j.axis == pytest.approx((0.0, 0.6, 0.8))
    assert math.isclose(sum(c * c for c in j.axis), 1.0)


def test_large_axis_is_normalised() -> None:
    description = parse_description(robot(links('a', 'b'), joint(
        'j', 'a', 'b', 'revolute', LIMIT + '<axis xyz="1e300 0 1e300"/>')))
    assert joint_named(description, 'j').axis == pytest.approx(
        (math.sqrt(0.5), 0.0, math.sqrt(0.5)))


@pytest.mark.parametrize(('xyz', 'expected'), [
    ('1.7976931348623157e308 1.7976931348623157e308 0', (math.sqrt(0.5), math.sqrt(0.5), 0.0)),
    ('-1.7e308 1.7e308 -1.7e308', (-1 / math.sqrt(3), 1 / math.sqrt(3), -1 / math.sqrt(3))),
    ('5e-324 0 0', (1.0, 0.0, 0.0)),
    ('0 1e-320 1e-320', (0.0, math.sqrt(0.5), math.sqrt(0.5))),
])
def test_extreme_axis_is_normalised_to_unit_length(xyz: str, expected: tuple) -> None:
    description = parse_description(robot(links('a', 'b'), joint(
        'j', 'a', 'b', 'revolute', LIMIT + f'<axis xyz="{xyz}"/>')))
    axis = joint_named(description, 'j').axis
    assert axis == pytest.approx(expected)
    assert math.isclose(math.hypot(*axis), 1.0)


def test_limits_defaults_and_continuous_limit_kept() -> None:
    description = parse_description(robot(
        links('a', 'b', 'c'),
        joint('rev', 'a', 'b', 'revolute', '<limit effort="3" velocity="4"/>'),
        joint('cont', 'b', 'c', 'continuous', '<limit lower="5" upper="-5" effort="1" '
                                              'velocity="2"/>')))
    assert joint_named(description, 'rev').limits == Limits(0.0, 0.0, 4.0, 3.0)
    assert joint_named(description, 'cont').limits == Limits(5.0, -5.0, 2.0, 1.0)
    assert description.warnings == ()


def test_mimic_and_safety_controller_are_read() -> None:
    description = parse_description(arm(
        '<link name="l3"/>',
        joint('j3', 'l2', 'l3', 'revolute', LIMIT
              + '<mimic joint="j2" multiplier="-2" offset="0.5"/>'
              + '<safety_controller k_velocity="3" k_position="4" soft_lower_limit="-0.5" '
                'soft_upper_limit="0.5"/>')))
    j3 = joint_named(description, 'j3')
    assert j3.mimic == Mimic('j2', -2.0, 0.5)
    assert j3.soft_limits == SoftLimits(soft_lower=-0.5, soft_upper=0.5, k_position=4.0,
                                        k_velocity=3.0)


def test_safety_controller_on_continuous_joint_is_fine() -> None:
    description = parse_description(robot(links('a', 'b'), joint(
        'wheel', 'a', 'b', 'continuous', '<safety_controller k_velocity="10"/>')))
    assert joint_named(description, 'wheel').soft_limits == SoftLimits(0.0, 0.0, 0.0, 10.0)
    assert description.warnings == ()


def test_mimic_chain_is_allowed() -> None:
    description = parse_description(arm(
        '<link name="l3"/>',
        joint('j3', 'l2', 'l3', 'revolute', LIMIT + '<mimic joint="j2"/>')).replace(
            '<child link="l2"/>', '<child link="l2"/><mimic joint="j1"/>'))
    assert joint_named(description, 'j2').mimic == Mimic('j1')
    assert joint_named(description, 'j3').mimic == Mimic('j2')


def test_fixed_and_floating_joints_ignore_their_axis() -> None:
    description = parse_description(robot(
        links('a', 'b', 'c'),
        joint('f', 'a', 'b', 'fixed', '<axis xyz="0 0 0"/>'),
        joint('fl', 'b', 'c', 'floating', '<axis/>')))
    assert joint_named(description, 'f').axis == (1.0, 0.0, 0.0)
    assert joint_named(description, 'fl').type is JointType.FLOATING


def test_every_joint_type_is_read() -> None:
    kinds = ['revolute', 'continuous', 'prismatic', 'fixed', 'floating', 'planar']
    names = ['base'] + [f'l{i}' for i in range(len(kinds))]
    parts = [joint(f'j{i}', names[i], names[i + 1], kind) for i, kind in enumerate(kinds)]
    description = parse_description(robot(links(*names), *parts))
    assert [j.type for j in description.joints] == [JointType(k) for k in kinds]


# --------------------------------------------------------------------------- order

def test_joints_topological_even_when_listed_in_reverse() -> None:
    text = robot(
        links('tip', 'mid', 'base', 'side'),
        joint('j3', 'mid', 'tip', 'fixed', ''),
        joint('j_side', 'base', 'side', 'fixed', ''),
        joint('j2', 'base', 'mid', 'fixed', ''))
    description = parse_description(text)
    assert description.root == 'base'
    assert description.links[0] == 'base'
    assert set(description.links) == {'tip', 'mid', 'base', 'side'}
    seen = {description.root}
    for j in description.joints:
        assert j.parent in seen, f'{j.name} comes before its parent link'
        seen.add(j.child)
    position = {name: i for i, name in enumerate(description.links)}
    assert position['mid'] < position['tip']
    assert len(description.joints) == 3


def test_long_chain_is_ordered_quickly() -> None:
    count = 2000
    names = [f'l{i}' for i in range(count)]
    parts = [joint(f'j{i}', names[i], names[i + 1], 'fixed', '')
             for i in reversed(range(count - 1))]
    description = parse_description(robot(links(*reversed(names)), *parts))
    assert description.links == tuple(names)
    assert [j.name for j in description.joints] == [f'j{i}' for i in range(count - 1)]


# --------------------------------------------------------------------------- warnings

def warnings_of(text: str) -> tuple[str, ...]:
    """Return the warnings of a description that must parse."""
    return parse_description(text).warnings


SENSOR_WARNING_CASES = [
    pytest.param('<sensor name="cam"><origin/></sensor>', ["'cam'", '<parent'],
                 id='sensor-without-parent'),
    pytest.param('<sensor name="cam"><parent link="nowhere"/></sensor>', ["'cam'", "'nowhere'"],
                 id='sensor-parent-unknown-link'),
    pytest.param('<sensor name="cam"><parent joint="j1"/></sensor>',
                 ["'cam'", 'parent joint', 'not standard'], id='sensor-parent-joint'),
    pytest.param('<sensor name="l1"><parent link="base"/></sensor>', ["'l1'", 'link'],
                 id='sensor-named-like-link'),
    pytest.param('<sensor name="cam"><parent link="base"/><origin xyz="0 0 nan"/></sensor>',
                 ["'cam'", 'xyz', 'not finite'], id='sensor-non-finite-origin'),
    pytest.param('<sensor name="cam"><parent link="base"/><origin rpy="a b c"/></sensor>',
                 ["'cam'", 'rpy'], id='sensor-bad-origin'),
    pytest.param('<sensor><parent link="base"/></sensor>', ['<sensor>', 'no name'],
                 id='sensor-without-name'),
]


@pytest.mark.parametrize(('sensor', 'expected'), SENSOR_WARNING_CASES)
def test_invalid_sensors_are_skipped_with_a_warning(sensor: str, expected: list[str]) -> None:
    description = parse_description(arm(sensor))
    assert description.sensors == ()
    (warning,) = description.warnings
    assert 'skipped' in warning
    for fragment in expected:
        assert fragment in warning


def test_duplicate_sensor_keeps_the_first() -> None:
    description = parse_description(arm(
        '<sensor name="cam"><parent link="l1"/></sensor>',
        '<sensor name="cam"><parent link="l2"/></sensor>'))
    assert [(s.name, s.parent) for s in description.sensors] == [('cam', 'l1')]
    (warning,) = description.warnings
    assert "'cam'" in warning and 'first' in warning


def test_bad_sensor_update_rate_keeps_the_sensor() -> None:
    description = parse_description(arm(
        '<sensor name="cam" update_rate="fast"><parent link="l1"/></sensor>'))
    assert description.sensors[0].update_rate is None
    (warning,) = description.warnings
    assert "'cam'" in warning and 'update_rate' in warning


WARNING_CASES = [
    pytest.param(arm('<jiont/>'), ['<jiont>', '<robot>', 'did you mean <joint>?'],
                 id='unknown-robot-element'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'fixed', '<orgin xyz="1 0 0"/>')),
                 ['<orgin>', "joint[@name='j']", 'did you mean <origin>?'],
                 id='unknown-joint-element'),
    pytest.param(robot('<link name="a"><visul/></link>'),
                 ['<visul>', "link[@name='a']", 'did you mean <visual>?'],
                 id='unknown-link-element'),
    pytest.param(robot(links('a', 'b'), '<joint name="j" type="fixed" typ="1">'
                                         '<parent link="a"/><child link="b"/></joint>'),
                 ["'typ'", "joint[@name='j']", "did you mean 'type'?"],
                 id='unknown-joint-attribute'),
    pytest.param(robot(links('a', 'b'), joint('j', 'a', 'b', 'revolute', LIMIT + LIMIT)),
                 ["joint 'j'", 'limit'], id='element-given-twice'),
    pytest.param(robot(links('a', 'b', 'c'), joint('j1', 'a', 'b'),
                       joint('fx', 'b', 'c', 'fixed', '<mimic joint="j1"/>')),
                 ["'fx'", 'fixed', 'mimic dropped'], id='mimic-on-fixed'),
    pytest.param(robot(links('a', 'b', 'c'), joint('j1', 'a', 'b'),
                       joint('fl', 'b', 'c', 'floating', '<mimic joint="j1"/>')),
                 ["'fl'", 'floating', 'mimic dropped'], id='mimic-on-floating'),
    pytest.param(robot(links('a', 'b', 'c'), joint('j1', 'a', 'b'),
                       joint('pl', 'b', 'c', 'planar', '<mimic joint="j1"/>')),
                 ["'pl'", 'planar', 'mimic dropped'], id='mimic-on-planar'),
    pytest.param(robot(links('a', 'b'), joint(
        'j', 'a', 'b', 'revolute', '<limit lower="0.5" upper="1" effort="1" velocity="1"/>'
        '<safety_controller k_velocity="1" soft_lower_limit="-1" soft_upper_limit="0.2"/>')),
                 ["'j'", 'no common range'], id='empty-soft-range'),
    pytest.param(arm('<model_state model="bot"><joint_state joint="ghost" position="1"/>'
                     '</model_state>'), ["'ghost'", 'no such joint'],
                 id='model-state-unknown-joint'),
    pytest.param(arm('<model_state model="bot"><joint_pos joint="j1" position="1"/>'
                     '</model_state>'), ['<joint_pos>', '<model_state>'],
                 id='model-state-unknown-element'),
    pytest.param(arm('<model_state model="bot"><joint_state joint="j1" position="nan"/>'
                     '</model_state>'), ["'j1'", 'not finite'], id='model-state-nan'),
    pytest.param(arm('<model_state model="bot"><joint_state joint="j1" position="one"/>'
                     '</model_state>'), ["'j1'", 'not a number'], id='model-state-text'),
]


@pytest.mark.parametrize(('text', 'expected'), WARNING_CASES)
def test_warnings_name_the_element(text: str, expected: list[str]) -> None:
    (warning,) = warnings_of(text)
    for fragment in expected:
        assert fragment in warning


def test_mimic_on_fixed_joint_is_dropped() -> None:
    description = parse_description(robot(links('a', 'b', 'c'), joint('j1', 'a', 'b'),
                                          joint('fx', 'b', 'c', 'fixed', '<mimic joint="x"/>')))
    assert joint_named(description, 'fx').mimic is None


def test_warnings_are_data_and_do_not_reach_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    description = parse_description(robot(
        '<link name="a"><visul/></link><link name="b"/>', '<jiont/>',
        joint('j', 'a', 'b', 'fixed', '<orgin xyz="1 0 0"/>')))
    assert len(description.warnings) == 3
    captured = capsys.readouterr()
    assert captured.err == ''
    assert captured.out == ''


def test_parallel_parses_keep_their_warnings_apart() -> None:
    results: dict[int, tuple[str, ...]] = {}

    def work(index: int) -> None:
        text = robot(links('a', 'b'), joint('j', 'a', 'b', 'fixed', f'<orign{index}/>'))
        results[index] = tuple(w for _ in range(20) for w in warnings_of(text))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # A thread that raised leaves no result: every one must have finished its 20 parses.
    assert sorted(results) == [0, 1, 2, 3]
    for index, warnings in results.items():
        assert len(warnings) == 20
        assert all(f'<orign{index}>' in w for w in warnings)


@pytest.mark.parametrize('content', [
    '<visual><geometry><box size="1 1 1"/></geometry><material name="m"><texture/></material>'
    '</visual>',
    '<visual><origin xyz="0 0 nan"/></visual>',
    '<collision><geometry><mesh/></geometry></collision>',
    '<inertial><mass value="heavy"/><inertia ixx="x"/></inertial>',
    '<visual><geometry><box size="1 1 1"/></geometry><spam/></visual>',
], ids=['bad-texture', 'visual-without-geometry', 'mesh-without-filename', 'bad-inertial',
        'unknown-element-inside-visual'])
def test_link_contents_are_not_read(content: str) -> None:
    """Only a link's name matters: broken visual/collision/inertial contents change nothing."""
    description = parse_description(robot(f'<link name="a">{content}</link><link name="b"/>',
                                          joint('j', 'a', 'b', 'fixed', '')))
    assert description.links == ('a', 'b')
    assert description.warnings == ()


def test_repeated_joint_children_keep_the_first() -> None:
    description = parse_description(robot(links('a', 'b'), joint(
        'j', 'a', 'b', 'revolute',
        '<limit lower="0" upper="1" effort="1" velocity="1"/>'
        '<limit lower="2" upper="3" effort="1" velocity="1"/>'
        '<limit lower="4" upper="5" effort="1" velocity="1"/>')))
    assert joint_named(description, 'j').limits == Limits(lower=0.0, upper=1.0, velocity=1.0,
                                                   effort=1.0)
    assert description.warnings == ("joint 'j': <limit> is given 3 times; the first one is used",)


def python_calls(function: Callable[[], object]) -> int:
    """How many Python functions (generators resumed included) run while `function` runs.

    A count, unlike a duration, does not depend on the machine or its load: work done per
    element in Python shows as calls that grow with the element count. The garbage collector
    is held off, so that no finalizer left by another test runs inside the count.
    """
    calls = 0

    def count(frame: object, event: str, argument: object) -> None:
        nonlocal calls
        calls += event == 'call'

    collecting = gc.isenabled()
    gc.collect()
    gc.disable()
    sys.setprofile(count)
    try:
        function()
    finally:
        sys.setprofile(None)
        if collecting:
            gc.enable()
    return calls


def padded_joint(junk: int) -> str:
    """A continuous joint with `junk` unknown elements between its <axis> and its <limit>."""
    return robot(links('a', 'b'), joint('j', 'a', 'b', 'continuous',
                                        '<axis xyz="0 0 1"/>' + '<junk/>' * junk
                                        + '<limit effort="3" velocity="4"/>'))


def test_joint_padded_with_junk_counts_every_extension_and_lists_a_hundred() -> None:
    count = 200_000
    description = parse_description(padded_joint(count))
    j = joint_named(description, 'j')
    assert j.axis == (0.0, 0.0, 1.0)
    assert j.limits == Limits(lower=0.0, upper=0.0, velocity=4.0, effort=3.0)  # after the junk
    assert description.warnings == ()  # <junk> is no near miss of a joint's children
    assert description.extensions.counts == (('<junk>', count),)
    assert description.extensions.total == count
    assert len(description.extensions.listed) == 100


def test_junk_in_a_joint_costs_no_python_work_per_element() -> None:
    """Python looks at a bounded number of unknown children; past it lxml counts the rest in
    C. So a hostile description padded with junk costs the parser little."""
    parse_description(padded_joint(10))  # first-use work (imports, caches) out of the counts
    few = python_calls(lambda: parse_description(padded_joint(20_000)))
    many = python_calls(lambda: parse_description(padded_joint(200_000)))
    assert many == few


def test_a_line_named_after_a_million_elements_costs_no_python_work_per_element() -> None:
    """The parser keeps no lines: the first message that names one finds the line of every
    element from the text, in C. So does a listed extension, as in the tests above."""
    def padded(junk: int) -> str:
        return robot(links('a'), '<gazebo>' + '<junk/>' * junk + '</gazebo>\n<jiont/>')

    parse_description(padded(10))  # first-use work (imports, caches) out of the counts
    few = python_calls(lambda: parse_description(padded(20_000)))
    many = python_calls(lambda: parse_description(padded(200_000)))
    assert many == few
    assert parse_description(padded(1_000_000)).warnings == (
        'unknown element <jiont> (line 2) in <robot> ignored: did you mean <joint>?',)


# Fragments in which a '<' starts no element, or a line ends where it is easy to miscount.
LINE_PIECES = [
    '<link name="x"/>', '<gazebo><plugin>a &lt; b > c</plugin></gazebo>',
    '<gazebo\n  reference="x"\r\n  note="a > b"/>', "<gazebo a='\n'/>",
    '<!-- <link name="c"/> \n -->', '<!---->', '<![CDATA[ <a> \r\n ]]>',
    '\n', '\r\n', '\r', '\r\r\n\n', ' ', 'text', '&#10;', '&#x3c;',
]


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.sampled_from(LINE_PIECES), max_size=30), st.sampled_from(['', '\r\n', '\n']))
def test_each_element_has_the_line_expat_counts(pieces: list[str], after: str) -> None:
    """The line of each element, found from the text, is the one expat is at when the
    element starts (its CurrentLineNumber), for every element."""
    text = f'<?xml version="1.0"?>{after}<robot name="r">' + ''.join(pieces) + '</robot>'
    root, source, _ = parse_xml(text)
    expected: list[int] = []
    parser = expat.ParserCreate()
    parser.StartElementHandler = lambda *_: expected.append(parser.CurrentLineNumber)
    parser.Parse(text, True)
    assert [source.line(element) for element in root.iter()] == expected


def test_many_warnings_are_capped() -> None:
    # One misspelt <joint> a line, from line 2 on.
    description = parse_description(robot(links('a'), *('\n<jiont/>' for i in range(120))))
    assert len(description.warnings) == 51
    assert description.warnings[0] == (
        'unknown element <jiont> (line 2) in <robot> ignored: did you mean <joint>?')
    assert '(line 51)' in description.warnings[49]
    assert description.warnings[-1] == '... and 70 more warnings'


def test_fifty_warnings_are_all_kept() -> None:
    warnings = warnings_of(robot(links('a'), '<jiont/>' * 50))
    assert len(warnings) == 50
    assert not any('more warnings' in w for w in warnings)


# --------------------------------------------------------------------------- size

def test_description_above_the_size_limit_is_refused() -> None:
    limit = MAX_DESCRIPTION_BYTES
    assert limit == 32 * 2**20
    text = robot(links('a'))
    padding = ' ' * (limit + 1 - len(text))
    message = error_of(text + padding)
    assert 'robot description is 33554433 bytes' in message
    assert 'more than the 32 MiB this node accepts' in message
    assert 'more than' in error_of((text + padding).encode())
    assert 'more than' in error_of(bytearray((text + padding).encode()))
    # Counted in UTF-8 bytes: fewer characters than the limit can still be too many bytes.
    wide = robot(links('a')) + '<!-- ' + 'ä' * (limit // 2) + ' -->'
    assert len(wide) < limit
    assert 'more than' in error_of(wide)


def test_description_at_the_size_limit_is_accepted() -> None:
    # lxml refuses single text nodes above 10 MB: pad with 1 MB runs between elements.
    chunk = '<gazebo/>' + ' ' * 2**20
    head = '<robot name="bot"><link name="a"/>'
    count = (MAX_DESCRIPTION_BYTES - len(head) - len('</robot>')) // len(chunk)
    text = head + chunk * count + '</robot>'
    text = text.replace('</robot>', ' ' * (MAX_DESCRIPTION_BYTES - len(text)) + '</robot>')
    assert len(text) == MAX_DESCRIPTION_BYTES
    assert parse_description(text).root == 'a'


# --------------------------------------------------------------------------- long lists

def test_long_cycle_lists_ten_links_and_the_count() -> None:
    count = 1000
    names = [f'l{i}' for i in range(count)]
    parts = [joint(f'j{i}', names[i], names[(i + 1) % count], 'fixed', '') for i in range(count)]
    message = error_of(robot(links('root', *names), *parts))
    assert 'kinematic cycle' in message
    assert message.count('link ') == 10
    assert message.count('joint ') == 10
    assert "-> joint 'j10' -> ... (1,000 links in the cycle);" in message
    assert len(message) < 500


def test_many_roots_list_ten_and_the_count() -> None:
    message = error_of(robot(links(*(f'r{i:03}' for i in range(500)))))
    assert '500 root links' in message
    assert "'r000', 'r001'" in message
    assert "'r009', ... and 490 more;" in message
    assert "'r010'" not in message
    assert len(message) < 500


def test_long_mimic_ring_lists_ten_joints_and_the_count() -> None:
    count = 300
    parts = [joint(f'j{i}', 'r', f'l{i}', 'revolute',
                   LIMIT + f'<mimic joint="j{(i + 1) % count}"/>') for i in range(count)]
    message = error_of(robot(links('r', *(f'l{i}' for i in range(count))), *parts))
    assert 'mimic cycle: j0 -> j1 -> ' in message
    assert 'j9 -> ... (300 joints in the cycle)' in message
    assert 'j10' not in message
    assert len(message) < 500


def test_long_names_in_a_mimic_cycle_are_cut() -> None:
    long = 'm' * 10_000
    message = error_of(robot(links('r', 'a'), joint(long, 'r', 'a', 'revolute',
                                                   LIMIT + f'<mimic joint="{long}"/>')))
    assert 'mimic cycle' in message
    assert len(message) < 500


# --------------------------------------------------------------------------- sensors

def test_sensors_are_parsed() -> None:
    description = parse_description(arm(
        '<sensor name="cam" type="camera" update_rate="30">'
        '<parent link="l2"/><origin xyz="0.1 0 0.2" rpy="0 1.5 0"/>'
        '<camera><image width="640" height="480" hfov="1" format="RGB8" near="0.1" far="9"/>'
        '</camera></sensor>',
        '<sensor name="lidar"><parent link="base"/><ray><horizontal max_angle=""/></ray></sensor>',
        '<sensor name="imu"><parent link="l1"/></sensor>'))
    cam, lidar, imu = description.sensors
    assert (cam.name, cam.type, cam.parent, cam.update_rate) == ('cam', 'camera', 'l2', 30.0)
    assert cam.origin == Origin(xyz=(0.1, 0.0, 0.2), rpy=(0.0, 1.5, 0.0))
    # The spec has no type attribute: the kind is the sensor's child element.
    assert (lidar.type, lidar.parent, lidar.origin, lidar.update_rate) == (
        'ray', 'base', Origin(), None)
    assert (imu.type, imu.parent) == ('', 'l1')
    assert description.warnings == ()


# --------------------------------------------------------------------------- model_state

def test_model_state_is_read() -> None:
    description = parse_description(arm(
        '<model_state model="bot" time_stamp="0">'
        '<joint_state joint="j1" position="0.3"/>'
        '<joint_state joint="j2" position="-0.5 7 8"/>'
        '</model_state>'))
    assert description.model_state == {'j1': 0.3, 'j2': -0.5}
    assert description.warnings == ()


def test_no_model_state_gives_empty_mapping() -> None:
    assert parse_description(arm()).model_state == {}


# --------------------------------------------------------------------------- xacro and files

XACRO = """<?xml version="1.0"?>
<robot name="xbot" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="len" default="1"/>
  <link name="base"/>
  <link name="tip"/>
  <joint name="slide" type="fixed">
    <parent link="base"/>
    <child link="tip"/>
    <origin xyz="$(arg len) 0 0"/>
  </joint>
</robot>
"""


@pytest.mark.parametrize(('arguments', 'expected'), [
    ((), 1.0),
    ({'len': '2.5'}, 2.5),
    (['len:=3'], 3.0),
    ('len:=4', 4.0),
])
def test_xacro_expansion_with_an_argument(tmp_path: Path, arguments: object,
                                          expected: float) -> None:
    path = tmp_path / 'bot.urdf.xacro'
    path.write_text(XACRO)
    expanded = expand_xacro(path, arguments)  # type: ignore[arg-type]
    assert read_description_file(path, arguments) == expanded  # type: ignore[arg-type]
    assert expanded.warnings == ()
    description = parse_description(expanded.text)
    assert description.name == 'xbot'
    assert joint_named(description, 'slide').origin.xyz == (expected, 0.0, 0.0)


def test_xacro_bad_argument_form(tmp_path: Path) -> None:
    path = tmp_path / 'bot.xacro'
    path.write_text(XACRO)
    with pytest.raises(DescriptionError, match='name:=value'):
        expand_xacro(path, ['len=3'])


def test_read_description_file_reads_urdf(tmp_path: Path) -> None:
    path = tmp_path / 'bot.urdf'
    path.write_text(arm(), encoding='utf-8')
    assert read_description_file(path).text == arm()
    with pytest.raises(DescriptionError, match='only .xacro'):
        read_description_file(path, ['a:=b'])


def test_read_description_file_missing(tmp_path: Path) -> None:
    for name in ('missing.urdf', 'missing.urdf.xacro'):
        path = tmp_path / name
        with pytest.raises(DescriptionError) as info:
            read_description_file(path)
        assert str(path) in str(info.value)


def test_read_description_file_xacro_error(tmp_path: Path) -> None:
    path = tmp_path / 'broken.xacro'
    path.write_text(XACRO.replace('$(arg len)', '${undefined_property}'))
    with pytest.raises(DescriptionError) as info:
        read_description_file(path)
    message = str(info.value)
    assert str(path) in message
    assert 'undefined_property' in message


# --------------------------------------------------------------------------- a real robot

def test_jvrc1() -> None:
    import jvrc_description  # here, so that without it only this test is left out

    path = Path(jvrc_description.__file__).parent / 'urdf' / 'jvrc1.urdf'
    description = read_description_file(path).parse()
    assert isinstance(description, Description)
    assert description.name == 'jvrc1'
    assert description.root == 'base_link'
    assert len(description.joints) == 59
    assert len(description.links) == 60
    mimics = [j for j in description.joints if j.mimic is not None]
    assert len(mimics) == 10
    assert {abs(j.mimic.multiplier) for j in mimics} == {2.0}
    for follower in mimics:
        assert joint_named(description, follower.mimic.joint).type.single_value
    # jvrc1.urdf has 10 <sensor> elements, all spec-conforming (parent links exist, names
    # differ from every link), so all 10 are kept: 3 cameras, 1 ray, 6 with no kind element
    # (accelerometer, gyrometer, 4 force sensors).
    assert len(description.sensors) == 10
    kinds = sorted(s.type for s in description.sensors)
    assert kinds == [''] * 6 + ['camera'] * 3 + ['ray']
    ranger = next(s for s in description.sensors if s.name == 'ranger_SENSOR')
    assert ranger.parent == 'NECK_P_S'
    assert ranger.update_rate == 100.0
    assert description.warnings == ()


# --------------------------------------------------------------------------- only DescriptionError

SEED = arm('<sensor name="s"><parent link="l1"/><origin xyz="1 2 3"/></sensor>',
           '<model_state><joint_state joint="j1" position="0.1"/></model_state>')


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_documents_raise_only_description_error(data: st.DataObject) -> None:
    text = SEED
    for _ in range(data.draw(st.integers(1, 4))):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 12)))
        insert = data.draw(st.sampled_from(
            ['', '<', '>', '"', ' ', 'nan', '0', '<link name="x"/>', '<joint', '/>', '&',
             '<axis/>', '<mimic joint="j2"/>', 'inf', '\x00', 'é']))
        text = text[:start] + insert + text[end:]
    as_bytes = data.draw(st.booleans())
    try:
        parse_description(text.encode('utf-8', 'surrogatepass') if as_bytes else text)
    except DescriptionError:
        pass


@settings(max_examples=100, deadline=None, database=None)
@given(st.one_of(st.text(max_size=60), st.binary(max_size=60)))
def test_arbitrary_input_raises_only_description_error(text: str | bytes) -> None:
    try:
        parse_description(text)
    except DescriptionError:
        pass


# --------------------------------------------------------------------------- the root element

def test_one_robot_inside_another_root_is_read_with_a_warning() -> None:
    # joint_state_publisher's own test robots are <urdf><robot>...</robot></urdf>.
    text = f'<urdf>\n  {robot(links("a", "b"), joint("j", "a", "b"))}\n</urdf>'
    description = parse_description(text)
    assert description.name == 'bot' and [j.name for j in description.joints] == ['j']
    assert description.warnings == (
        '<robot> is inside <urdf> (line 2): read as joint_state_publisher reads it, but '
        'robot_state_publisher refuses such a document; make <robot> the root element',)


@pytest.mark.parametrize('text', [
    '<sdf><model name="m"/></sdf>',
    f'<urdf>{robot(links("a"))}{robot(links("b"), name="other")}</urdf>',
    f'<urdf><group>{robot(links("a"))}</group></urdf>',
], ids=['no_robot', 'two_robots', 'robot_deeper'])
def test_any_other_root_is_refused(text) -> None:
    with pytest.raises(DescriptionError, match='^the root element is <(sdf|urdf)>, not <robot>'):
        parse_description(text)
