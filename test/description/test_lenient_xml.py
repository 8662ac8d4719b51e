"""Descriptions that are not XML, read as robot_state_publisher reads them (urdfdom, TinyXML2).

Expected verdicts and trees are urdfdom's own: its parseURDF, built with TinyXML2 6.0, 9.0
and 10.0, run on the differential corpus (lenient_corpus.py), recorded in
fixtures/urdfdom_verdicts.json by tools/differential_corpus.py.
"""

import json
from pathlib import Path
import subprocess
import sys

import lenient_corpus
import pytest

from urdf_state_publisher import RobotModel
from urdf_state_publisher.description import DescriptionError, parse_description
from urdf_state_publisher.description.lenient_xml import tinyxml_value
from urdf_state_publisher.tools.inspect import main

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

RECORDED = json.loads(lenient_corpus.VERDICTS.read_text())
SAMPLE_TEXT = lenient_corpus.BASES['sample_arm'].read_text()
CASES = lenient_corpus.cases()
# TinyXML2 6.0 (the ROS wheels') reads any depth, until its recursion overflows the stack
# (about 58,000 levels); 9 stops at 100 and 10 at 500. This node stops where 10 does.
BOUNDED_KINDS = {'deep-nesting-600'}


def kind_of(case: str) -> str:
    return case.split('/')[1]


def test_the_corpus_is_the_one_urdfdom_read():
    """A changed generator must be re-recorded: the verdicts are of these very texts."""
    assert sorted(CASES) == sorted(RECORDED['cases'])
    changed = [case for case, text in CASES.items()
               if lenient_corpus.digest(text) != RECORDED['cases'][case]['digest']]
    assert changed == []


@pytest.mark.parametrize('kind', sorted(lenient_corpus.KINDS))
def test_each_case_gets_urdfdoms_verdict_and_tree(kind):
    cases = {case: text for case, text in CASES.items() if kind_of(case) == kind}
    assert cases
    for case, text in cases.items():
        recorded = RECORDED['cases'][case]
        ours = lenient_corpus.our_tree(text)
        if kind in BOUNDED_KINDS:
            assert recorded['loaded'] == {'6.0.0': True, '9.0.0': False, '10.0.0': False}
            with pytest.raises(DescriptionError, match='levels deep'):
                parse_description(text)
            continue
        if not any(recorded['loaded'].values()):
            assert ours is None, f'{case}: urdfdom refuses it, this package loads it'
            continue
        assert ours is not None, f'{case}: urdfdom loads it, this package refuses it'
        assert lenient_corpus.same_tree(ours, RECORDED['trees'][recorded['tree']]), case


def test_the_corpus_holds_both_verdicts_and_each_tinyxml2_difference():
    """Not a vacuous corpus: loads and refusals, and a case where the versions disagree."""
    verdicts = [tuple(case['loaded'].values()) for case in RECORDED['cases'].values()]
    assert any(all(v) for v in verdicts) and any(not any(v) for v in verdicts)
    assert any(any(v) and not all(v) for v in verdicts)


def case_of(kind: str, base: str = 'sample_arm') -> str:
    return CASES[f'{base}/{kind}/0']


def place(text: str, fragment: str, nth: int = 0) -> str:
    """'line L, column C' of the nth occurrence of `fragment` in `text`, counted here."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(fragment, at + 1)
    line = text.count('\n', 0, at) + 1
    return f'line {line}, column {at - (text.rfind(chr(10), 0, at) + 1) + 1}'


READ_AS = 'read as robot_state_publisher reads it (1 such place)'
# kind: (the fragment where the finding is, what is said of it)
WARNINGS = {
    'comment-with-double-dash': ('--coarse', "'--' inside a comment, which XML forbids"),
    'whitespace-before-declaration': (
        '\n', 'whitespace before the XML declaration, which XML forbids'),
    'bare-ampersand-in-attribute': (
        '&D', "a bare '&' in attribute 'name' of <robot>, which XML forbids (write '&amp;')"),
    'bare-ampersand-in-text': ('& D', "a bare '&' in text, which XML forbids (write '&amp;')"),
    'element-after-root': (
        '<extra', 'an element <extra> after the root element <robot>, which XML forbids'),
    'doctype-internal-entity': (
        '&rn;', "the entity reference '&rn;' in attribute 'name' of <robot>, which "
        'robot_state_publisher keeps as it stands (it expands no entity)'),
    'end-tag-after-root': (
        '</robot> junk', 'the end tag </robot> outside any element, which XML forbids; '
        'robot_state_publisher reads nothing after it'),
    'unbound-prefix-element': (
        '<gz:', "the namespace prefix 'gz' in 'gz:plugin', which no xmlns declares (XML "
        'namespaces forbid it)'),
    'less-than-in-attribute': ('<b"', "a '<' in attribute 'note' of"),
    'no-space-between-attributes': ('extra=', "no space before attribute 'extra' of"),
    'whitespace-after-less-than': ('< ', "whitespace after '<', which XML forbids"),
}


@pytest.mark.parametrize('kind', sorted(WARNINGS))
def test_one_warning_names_the_first_place_and_what_it_is(kind):
    text = case_of(kind)
    fragment, what = WARNINGS[kind]
    warnings = parse_description(text).warnings
    expected_start = f'{place(text, fragment)}: {what}'
    assert warnings[0].startswith(expected_start), (warnings[0], expected_start)
    assert warnings[0].endswith(READ_AS)
    assert not any(w.startswith('line ') for w in warnings[1:])


def test_the_warning_counts_every_place():
    text = case_of('comment-with-double-dash').replace('<robot', '<!-- a--b --><robot', 1)
    text = text.replace('</robot>', '</robot>\n<x/>')
    (warning,) = [w for w in parse_description(text).warnings if w.startswith('line ')]
    assert warning.endswith('(3 such places)')


@pytest.mark.parametrize('path', sorted(
    [*lenient_corpus.BASES.values(),
     *Path(__file__).parents[1].joinpath('fixtures').glob('*.urdf')]))
def test_a_well_formed_description_gives_no_such_line(path):
    assert not any(w.startswith('line ') for w in parse_description(path.read_text()).warnings)


# kind: (the fragment where urdfdom stops, what is said)
REFUSALS = {
    'mismatched-end-tag': ('</x', 'does not match'),
    'instruction-inside-root': (
        '<?php', 'robot_state_publisher reads <?...?> only at the start of the document'),
    'text-after-root': ('trailing', "text 'trailing text' at the end of the document"),
    'whitespace-after-end-slash': ('</ ', "'<' that starts no element"),
    'unquoted-attribute': ('note=x', "the value of attribute 'note' of"),
}


@pytest.mark.parametrize('kind', sorted(REFUSALS))
def test_a_refusal_names_the_line_the_column_and_what_is_wrong(kind):
    text = case_of(kind)
    fragment, what = REFUSALS[kind]
    with pytest.raises(DescriptionError) as refusal:
        parse_description(text)
    message = str(refusal.value)
    assert message.startswith(f'robot description {place(text, fragment)}: '), message
    assert what in message
    assert message.endswith('(robot_state_publisher refuses it too)')


def test_the_python_api_and_inspect_say_it(tmp_path, capsys):
    path = tmp_path / 'pr2_style.urdf'
    path.write_text(case_of('comment-with-double-dash'))
    model = RobotModel.from_file(path)
    assert "'--' inside a comment" in model.warnings[0]
    assert main([str(path)]) == 0
    assert main([str(path), '--strict']) == 3
    out = capsys.readouterr().out
    assert "'--' inside a comment, which XML forbids" in out


@pytest.mark.parametrize(('raw', 'value'), [
    # urdfdom's own readings of these names are in the corpus; these are TinyXML2's rules
    # one by one, as its StrPair::GetStr applies them.
    ('a&amp;b', 'a&b'), ('&lt;&gt;&quot;&apos;', '<>"\''), ('R&D', 'R&D'),
    ('&#x41;&#66;', 'AB'), ('&#X41;', '&#X41;'), ('a&#0;b', 'a'), ('a&#x;b', 'a'),
    ('a\r\nb\rc\n\rd', 'a\nb\nc\nd'), ('&amp;&c', '&ac'), ('&#12 ;', '&#12 ;'),
])
def test_attribute_values_as_tinyxml2_gives_them(raw, value):
    assert tinyxml_value(raw) == value


def test_the_corpus_tool_writes_and_compares(tmp_path):
    """write, then compare on urdfdom's results as the oracle prints them (from the fixture)."""
    tool = [sys.executable, str(lenient_corpus.REPOSITORY / 'tools' / 'differential_corpus.py')]
    written = subprocess.run([*tool, 'write', str(tmp_path / 'corpus')], capture_output=True,
                             text=True, check=True)
    files = sorted(path.name for path in (tmp_path / 'corpus').iterdir())
    assert written.stdout == f'{len(CASES)} cases in {tmp_path / "corpus"}\n'
    assert files == sorted(case.replace('/', '__') + '.urdf' for case in CASES)
    lines = []
    for case, recorded in RECORDED['cases'].items():
        tree = RECORDED['trees'].get(recorded['tree'])
        for version, loaded in recorded['loaded'].items():
            result = {'file': str(tmp_path / 'corpus' / (case.replace('/', '__') + '.urdf')),
                      'tinyxml2': version, 'loaded': loaded}
            if loaded:
                result.update(robot=tree['robot'], links=tree['links'], joints=[
                    {'name': name, 'type': kind, 'parent': parent, 'child': child, 'xyz': xyz,
                     'quat': quat}
                    for name, (kind, parent, child, xyz, quat) in tree['joints'].items()])
            lines.append(json.dumps(result))
    results = tmp_path / 'results.jsonl'
    results.write_text('\n'.join(lines))
    compared = subprocess.run([*tool, 'compare', str(results)], capture_output=True, text=True)
    # Only the nesting this node bounds disagrees; the status says so.
    assert compared.returncode == 1
    disagreements = [line for line in compared.stdout.splitlines()
                     if line.startswith('disagrees:')]
    assert disagreements and all('deep-nesting-600' in line for line in disagreements)
    total = f'{len(CASES):5}'
    assert any(line.startswith('all') and total in line for line in compared.stdout.splitlines())


@pytest.mark.parametrize(('xyz', 'loads'), [
    # urdfdom 4.0.2 with TinyXML2 6.0, 9 and 10 on these (its Vector3 splits on spaces and
    # reads each piece to its end): refused, refused, loaded.
    ('0.35\t0 0', False), ('0.35 0 0\n', False), ('\t0.35 0 0', True)])
def test_a_tab_or_line_break_in_a_vector_is_read_as_urdfdom_reads_it(xyz, loads):
    text = SAMPLE_TEXT.replace('<origin rpy="0 0.8 0" xyz="0.35 0 0"/>',
                               f'<origin rpy="0 0.8 0" xyz="{xyz}"/>')
    assert text != SAMPLE_TEXT
    if loads:
        elbow = {j.name: j for j in parse_description(text).joints}['elbow_joint']
        assert elbow.origin.xyz == (0.35, 0.0, 0.0)
    else:
        with pytest.raises(DescriptionError, match="joint 'elbow_joint' <origin>: xyz "):
            parse_description(text)
