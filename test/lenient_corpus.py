"""The differential corpus: descriptions with one oddity each, for urdfdom's verdict beside ours.

Each kind takes a well-formed description and puts one oddity into it, at a place drawn from a
seeded generator, so that the corpus is the same on every machine. urdfdom's verdicts on it (its
own parser, with TinyXML2 6.0, 9.0 and 10.0) are recorded in fixtures/urdfdom_verdicts.json by
tools/differential_corpus.py; test_lenient_xml.py holds every case to them.
"""

from __future__ import annotations

from collections.abc import Callable
import hashlib
from pathlib import Path
import random
import re

from urdf_state_publisher.description import DescriptionError, parse_description

REPOSITORY = Path(__file__).resolve().parent.parent
# The descriptions the oddities go into: the bundled robot, and the one with <ros2_control>,
# <gazebo> and vendor elements, as a Gazebo bringup's xacro expands to.
BASES = {
    'sample_arm': REPOSITORY / 'urdf' / 'sample_arm.urdf',
    'gazebo_arm': REPOSITORY / 'test' / 'fixtures' / 'gazebo_arm.urdf',
}
VARIANTS = 3  # cases of each kind on each base, at different places
VERDICTS = REPOSITORY / 'test' / 'fixtures' / 'urdfdom_verdicts.json'

_DECLARATION = re.compile(r'<\?xml[^>]*\?>\s*')
# A place between two tags inside <robot>: just after a '>' followed by optional space and '<'.
_BETWEEN_TAGS = re.compile(r'>(?=\s*<)')
_START_TAG = re.compile(r'<([A-Za-z_][\w.:-]*)(\s[^<>]*?)?(/?)>')
_END_TAG = re.compile(r'</([A-Za-z_][\w.:-]*)\s*>')
_ROBOT_END = '</robot>'


def _inside(text: str, rng: random.Random) -> int:
    """An offset between two tags inside <robot>."""
    start = text.index('<robot')
    end = text.rindex(_ROBOT_END)
    places = [m.end() for m in _BETWEEN_TAGS.finditer(text, start, end)]
    return rng.choice(places[1:])


def _insert(fragment: str) -> Callable[[str, random.Random], str]:
    def insert(text: str, rng: random.Random) -> str:
        at = _inside(text, rng)
        return text[:at] + fragment + text[at:]
    return insert


def _start_tag(text: str, rng: random.Random) -> re.Match:
    """A start tag inside <robot>, <robot>'s own not among them."""
    start = text.index('<robot') + 1
    tags = [m for m in _START_TAG.finditer(text, start, text.rindex(_ROBOT_END))]
    return rng.choice(tags)


def _add_attribute(fragment: str, space: str = ' ') -> Callable[[str, random.Random], str]:
    """An attribute (`fragment`) added to a start tag inside <robot>, after its others."""
    def add(text: str, rng: random.Random) -> str:
        tag = _start_tag(text, rng)
        at = tag.end() - 1 - len(tag.group(3))
        before = text[:at].rstrip() if space == '' else text[:at]
        if space == '' and not before.endswith(('"', "'")):
            before += ' x="1"'
        return before + space + fragment + text[at:]
    return add


def _robot_name(value: str) -> Callable[[str, random.Random], str]:
    def rename(text: str, rng: random.Random) -> str:
        return re.sub(r'(<robot\b[^>]*?\sname=")[^"]*(")', lambda m: m.group(1) + value
                      + m.group(2), text, count=1)
    return rename


def _prolog(fragment: str, keep_declaration: bool = True) -> Callable[[str, random.Random], str]:
    """`fragment` put after the XML declaration (before <robot>)."""
    def put(text: str, rng: random.Random) -> str:
        declaration = _DECLARATION.match(text)
        head = declaration.group() if declaration and keep_declaration else ''
        body = text[declaration.end():] if declaration else text
        return head + fragment + body
    return put


def _before_declaration(fragment: str) -> Callable[[str, random.Random], str]:
    def put(text: str, rng: random.Random) -> str:
        return fragment + text
    return put


def _after_root(fragment: str) -> Callable[[str, random.Random], str]:
    def put(text: str, rng: random.Random) -> str:
        at = text.rindex(_ROBOT_END) + len(_ROBOT_END)
        return text[:at] + fragment + text[at:]
    return put


def _end_tag_edit(edit: Callable[[re.Match], str]) -> Callable[[str, random.Random], str]:
    def change(text: str, rng: random.Random) -> str:
        start = text.index('<robot')
        ends = list(_END_TAG.finditer(text, start, text.rindex(_ROBOT_END)))
        end = rng.choice(ends)
        return text[:end.start()] + edit(end) + text[end.end():]
    return change


def _start_tag_edit(edit: Callable[[re.Match], str]) -> Callable[[str, random.Random], str]:
    def change(text: str, rng: random.Random) -> str:
        tag = _start_tag(text, rng)
        return text[:tag.start()] + edit(tag) + text[tag.end():]
    return change


def _nested(depth: int) -> Callable[[str, random.Random], str]:
    return _insert('<gazebo>' * depth + '</gazebo>' * depth)


def _text_in_link(fragment: str) -> Callable[[str, random.Random], str]:
    def put(text: str, rng: random.Random) -> str:
        tags = [m for m in _START_TAG.finditer(text) if m.group(1) == 'link' and not m.group(3)]
        tag = rng.choice(tags)
        return text[:tag.end()] + fragment + text[tag.end():]
    return put


# Each kind: what it does to a description. Named for what it puts there.
KINDS: dict[str, Callable[[str, random.Random], str]] = {
    # Comments
    'comment-with-double-dash': _insert('<!-- swept_back--coarse.STL -->'),
    'comment-ending-in-three-dashes': _insert('<!-- old mesh --->'),
    'comment-before-declaration': _before_declaration('<!-- generated -->\n'),
    'comment-unclosed': _insert('<!-- never closed '),
    # The prolog
    'whitespace-before-declaration': _before_declaration('\n  '),
    'byte-order-mark-then-whitespace': _before_declaration('\ufeff \n'),
    'malformed-declaration': _prolog('<?xml version=1.0?>\n', keep_declaration=False),
    'two-declarations': _prolog('<?xml version="1.0"?>\n'),
    'instruction-before-root': _prolog('<?xml-stylesheet href="robot.xsl"?>\n'),
    'instruction-inside-root': _insert('<?php echo 1; ?>'),
    'instruction-after-root': _after_root('\n<?pi after?>\n'),
    'doctype': _prolog('<!DOCTYPE robot>\n'),
    'doctype-lowercase': _prolog('<!doctype robot>\n'),
    'doctype-internal-entity': lambda text, rng: _robot_name('&rn;')(
        _prolog('<!DOCTYPE robot [\n  <!ENTITY rn "expanded">\n]>\n')(text, rng), rng),
    'doctype-external': _prolog('<!DOCTYPE robot SYSTEM "file:///etc/passwd">\n'),
    'element-declaration-inside-root': _insert('<!ELEMENT link ANY>'),
    'cdata-before-root': _prolog('<![CDATA[ data ]]>\n'),
    'text-before-root': _prolog('robot description:\n'),
    # After the root
    'element-after-root': _after_root('\n<extra name="x"/>\n'),
    'text-then-element-after-root': _after_root('\ngarbage <extra/>\n'),
    'second-robot-after-root': _after_root('\n<robot name="other"><link name="x"/></robot>\n'),
    'element-before-root': _prolog('<meta name="x"/>\n'),
    'text-after-root': _after_root('\ntrailing text\n'),
    'end-tag-after-root': _after_root('\n</robot> junk <unclosed>\n'),
    'nul-after-root': _after_root('\0 <unclosed junk'),
    # References and special characters
    'bare-ampersand-in-attribute': _robot_name('R&D arm'),
    'bare-ampersand-in-added-attribute': _add_attribute('note="R&D"'),
    'bare-ampersand-in-text': _text_in_link('R & D'),
    'undeclared-entity-in-attribute': _robot_name('arm&nbsp;one'),
    'unknown-entity-after-known-one': _robot_name('a&amp;b&c'),
    'character-reference-zero': _robot_name('arm&#0;tail'),
    'character-reference-empty': _robot_name('arm&#x;tail'),
    'character-reference-uppercase-x': _robot_name('arm&#X41;'),
    'character-reference-valid': _robot_name('arm&#x41;&#66;'),
    'less-than-in-attribute': _add_attribute('note="a<b"'),
    'greater-than-and-brackets-in-text': _text_in_link(' a > b ]]> c '),
    'less-than-in-text': _text_in_link(' a < b '),
    'form-feed-in-text': _text_in_link('\f'),
    'control-character-in-attribute': _add_attribute('note="a\x01b"'),
    'tab-and-newline-in-attribute': _add_attribute('note="a\tb\nc"'),
    'carriage-returns-in-attribute': _robot_name('arm\r\nx\ry'),
    # Tags
    'no-space-between-attributes': _add_attribute('extra="1"', space=''),
    'whitespace-after-less-than': _start_tag_edit(lambda m: '< ' + m.group()[1:]),
    'whitespace-before-end-slash': _end_tag_edit(lambda m: '< ' + m.group()[1:]),
    'whitespace-after-end-slash': _end_tag_edit(lambda m: '</ ' + m.group()[2:]),
    'attribute-in-end-tag': _end_tag_edit(lambda m: m.group()[:-1] + ' note="x">'),
    'end-tag-self-closed': _end_tag_edit(lambda m: m.group()[:-1] + '/>'),
    'unbound-prefix-element': _insert('<gz:plugin name="p"/>'),
    'unbound-prefix-attribute': _add_attribute('gz:note="x"'),
    'bound-prefix-element': _insert('<gz:plugin xmlns:gz="urn:gz" name="p"/>'),
    'non-ascii-name': _insert('<gazébo/>'),
    'deep-nesting-120': _nested(120),
    'deep-nesting-600': _nested(600),
    # Refused by urdfdom too
    'unclosed-element': _end_tag_edit(lambda m: ''),
    'mismatched-end-tag': _end_tag_edit(lambda m: m.group().replace('</', '</x')),
    'end-tag-case': _end_tag_edit(lambda m: m.group().upper()),
    'duplicate-attribute': _start_tag_edit(
        lambda m: m.group() if not m.group(2) else
        m.group()[:-1 - len(m.group(3))] + ' ' + m.group(2).split()[0] + m.group()[
            len(m.group()) - 1 - len(m.group(3)):]),
    'unquoted-attribute': _add_attribute('note=x'),
    'attribute-without-value': _add_attribute('checked'),
    'mismatched-quotes': _add_attribute('note="x\''),
    'digit-starts-name': _insert('<1link/>'),
    'empty-document': lambda text, rng: ' \n\t ',
}


def tree(result: dict) -> dict:
    """What a loaded oracle result says of the robot: name, links, joints (origins as numbers)."""
    return {'robot': result['robot'], 'links': sorted(result['links']),
            'joints': {j['name']: [j['type'], j['parent'], j['child'], j['xyz'], j['quat']]
                       for j in result['joints']}}


def our_tree(text: str) -> dict | None:
    """The same of this package's reading; None where it refuses the text."""
    try:
        description = parse_description(text)
    except DescriptionError:
        return None
    return {'robot': description.name, 'links': sorted(description.links),
            'joints': {j.name: [j.type.value, j.parent, j.child, list(j.origin.xyz),
                                list(j.origin.rotation)] for j in description.joints}}


def same_tree(ours: dict, theirs: dict) -> bool:
    """Names equal; origins to 1e-12 (a rotation's quaternion up to its sign)."""
    if ours['robot'] != theirs['robot'] or ours['links'] != theirs['links'] \
            or ours['joints'].keys() != theirs['joints'].keys():
        return False
    for name, (kind, parent, child, xyz, quat) in theirs['joints'].items():
        our_kind, our_parent, our_child, our_xyz, our_quat = ours['joints'][name]
        if (kind, parent, child) != (our_kind, our_parent, our_child):
            return False
        if max(abs(a - b) for a, b in zip(xyz, our_xyz)) > 1e-12:
            return False
        if min(max(abs(a - s * b) for a, b in zip(quat, our_quat)) for s in (1, -1)) > 1e-12:
            return False
    return True


def cases(bases: dict[str, Path] | None = None) -> dict[str, str]:
    """Every case by id ('base/kind/variant'), its text; the same on every machine."""
    corpus = {}
    for base, path in (bases or BASES).items():
        text = path.read_text(encoding='utf-8')
        for kind, make in KINDS.items():
            made: set[str] = set()
            for variant in range(VARIANTS):
                case = make(text, random.Random(f'{base}/{kind}/{variant}'))
                if case not in made:  # a kind with one place only makes one case
                    made.add(case)
                    corpus[f'{base}/{kind}/{variant}'] = case
    return corpus


def digest(text: str) -> str:
    """The case's bytes as the oracle read them (UTF-8), hashed: a changed case is noticed."""
    return hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]
