"""The Python API example of doc/api.md runs as written, from the repository root, and prints
what the page says it prints.

What a print is said to print is the comment at the end of its line. A comment that is one of
the descriptions in DESCRIBED is checked the way written there, against the robot read with
xacro and the standard library (never with the package); any other comment must be exactly the
printed text.
"""

import ast
from collections.abc import Callable
import io
from pathlib import Path
import re
import sys
import tokenize
from xml.etree import ElementTree

import pytest
import xacro

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

REPO = Path(__file__).resolve().parent.parent
API_PAGE = REPO / 'doc' / 'api.md'
SECTION = 'python api'
PYTHON_LANGUAGES = ('python', 'python3', 'py', 'pycon')
HEADING = re.compile(r'^ {0,3}(#{1,6})\s+(.*?)\s*$')
FENCE = re.compile(r'^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)')


def python_api_blocks(markdown: str) -> list[tuple[int, str]]:
    """(first line number, code) of each python fenced block in a 'Python API' section.

    The section runs from a heading that contains 'Python API' (any case) to the next heading
    of the same or a higher level; headings inside code blocks do not count.
    """
    blocks: list[tuple[int, str]] = []
    section_level: int | None = None
    fence: str | None = None
    collecting = False
    code: list[str] = []
    start = 0
    for number, line in enumerate(markdown.splitlines(), start=1):
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                if collecting:
                    blocks.append((start, '\n'.join(code) + '\n'))
                fence, collecting, code = None, False, []
            elif collecting:
                code.append(line)
            continue
        opening = FENCE.match(line)
        if opening:
            fence = opening.group(1)
            collecting = (section_level is not None
                          and opening.group(2).lower() in PYTHON_LANGUAGES)
            start = number + 1
            continue
        heading = HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if SECTION in heading.group(2).lower():
                section_level = level
            elif section_level is not None and level <= section_level:
                section_level = None
    return blocks


EXTRACTION_CASES = {
    'block under the heading': (
        '# Tool\n## Python API\ntext\n```python\nx = 1\n```\n', [(5, 'x = 1\n')]),
    'heading of another section': (
        '## Usage\n```python\nx = 1\n```\n## Python API\nnone here\n', []),
    'section ends at a heading of the same level': (
        '## Python API\n```python\na = 1\n```\n## Next\n```python\nb = 2\n```\n',
        [(3, 'a = 1\n')]),
    'subsections belong to the section': (
        '## Python API\n### Details\n```py\nc = 3\n```\n# Top\n```python\nd = 4\n```\n',
        [(4, 'c = 3\n')]),
    'comments in code are not headings': (
        '## Python API\n```python\n# comment\nx = 1\n```\n```python\ny = 2\n```\n',
        [(3, '# comment\nx = 1\n'), (7, 'y = 2\n')]),
    'other languages skipped': (
        '## The Python API\n```sh\nmake\n```\n~~~python\nz = 0\n~~~\n', [(6, 'z = 0\n')]),
    'any case': ('# python api\n```Python\nw = 1\n```\n', [(3, 'w = 1\n')]),
    'longer fences': (
        '## Python API\n````python\ns = """\n```\n"""\n````\n', [(3, 's = """\n```\n"""\n')]),
}


@pytest.mark.parametrize('markdown, expected', EXTRACTION_CASES.values(),
                         ids=EXTRACTION_CASES.keys())
def test_python_api_blocks(markdown, expected):
    assert python_api_blocks(markdown) == expected


def trailing_comments(code: str) -> dict[int, str]:
    """Line number -> text of each comment that ends a line of code (not a line of its own)."""
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT and token.line[:token.start[1]].strip():
            comments[token.start[0]] = token.string[1:].strip()
    return comments


def prints(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == 'print'
               for n in ast.walk(node))


def stated_outputs(code: str) -> list[tuple[ast.stmt, str]]:
    """Each statement that prints and has a comment at the end of its first line, with it.

    For a compound statement (a loop) the comment on its header speaks of all it prints.
    """
    comments = trailing_comments(code)
    statements = [node for node in ast.walk(ast.parse(code))
                  if isinstance(node, ast.stmt) and node.lineno in comments and prints(node)]
    return [(node, comments[node.lineno]) for node in sorted(statements, key=lambda n: n.lineno)]


STATED_CASES = {
    'a print and its output': ('print(1)  # 1\n', [(1, '1')]),
    'a comment on what does not print': ('x = 1  # one\nprint(x)\n', []),
    'a comment on a line of its own': ('# says 1\nprint(1)\n', []),
    'a loop header speaks for its body': (
        'for i in range(2):  # 0 then 1\n    print(i)\nprint(2)  # 2\n',
        [(1, '0 then 1'), (3, '2')]),
    'a hash in a string': ("print('# no')\n", []),
    'a print inside a handler': (
        'try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    print(e)  # division by zero\n',
        [(4, 'division by zero')]),
}


@pytest.mark.parametrize('code, expected', STATED_CASES.values(), ids=STATED_CASES.keys())
def test_stated_outputs(code, expected):
    assert [(node.lineno, text) for node, text in stated_outputs(code)] == expected


# --------------------------------------------------------------------------- the example's robot

def literal_call(tree: ast.AST, method: str) -> tuple[list, dict]:
    """The arguments, all literals, of the example's call of `<something>.<method>(...)`."""
    [call] = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Attribute) and node.func.attr == method]
    return ([ast.literal_eval(a) for a in call.args],
            {k.arg: ast.literal_eval(k.value) for k in call.keywords})


def loaded_robot(tree: ast.AST) -> ElementTree.Element:
    """The robot the example loads with RobotModel.from_file, expanded by xacro itself."""
    (path,), options = literal_call(tree, 'from_file')
    mappings = dict(argument.split(':=', 1) for argument in options.get('xacro_args', ()))
    return ElementTree.fromstring(xacro.process_file(str(REPO / path), mappings=mappings).toxml())


def joints_of(robot: ElementTree.Element) -> dict[str, ElementTree.Element]:
    return {joint.get('name'): joint for joint in robot.iter('joint')}


def link_of(element: ElementTree.Element, tag: str) -> str:
    return element.find(tag).get('link')


def mimic_leaders(joints: dict[str, ElementTree.Element], name: str) -> list[str]:
    """The joints up the mimic chain of joint `name`, nearest first."""
    leaders = []
    while (mimic := joints[name].find('mimic')) is not None:
        name = mimic.get('joint')
        leaders.append(name)
    return leaders


def resolved_mimic(joints: dict[str, ElementTree.Element],
                   name: str) -> tuple[str, float, float] | None:
    """(independent leader, gain, offset) of a mimic joint, composed along its chain."""
    if joints[name].find('mimic') is None:
        return None
    leader, gain, offset = name, 1.0, 0.0
    while (mimic := joints[leader].find('mimic')) is not None:
        multiplier = float(mimic.get('multiplier', 1))
        leader = mimic.get('joint')
        gain, offset = gain * multiplier, offset * multiplier + float(mimic.get('offset', 0))
    return leader, gain, offset


# --------------------------------------------------------------------------- descriptions

def depth(line: str) -> int:
    """Where a tree line's name starts, after the drawing characters."""
    return len(line) - len(line.lstrip(' │├└─'))


def check_tree(output: str, node: ast.stmt, tree: ast.AST, namespace: dict) -> None:
    robot = loaded_robot(tree)
    joints = joints_of(robot)
    lines = output.splitlines()
    sensors = robot.iter('sensor')
    items = ([(name, link_of(joint, 'parent')) for name, joint in joints.items()]
             + [(sensor.get('name'), link_of(sensor, 'parent')) for sensor in sensors])
    assert len(lines) == 2 + len(items), 'a summary, the root, then a line per joint and sensor'
    children = {link_of(joint, 'child') for joint in joints.values()}
    [root] = [link.get('name') for link in robot.iter('link') if link.get('name') not in children]
    assert lines[1] == root
    for name, parent in items:
        [at] = [k for k, line in enumerate(lines) if line[depth(line):].startswith(f'{name} [')]
        [above] = [k for k, line in enumerate(lines)
                   if k == 1 and line == parent or k > 1 and line.endswith(f'→ {parent}')]
        # a child of its parent link's line: deeper, with nothing shallower in between
        assert above < at and all(depth(line) >= depth(lines[at]) > depth(lines[above])
                                  for line in lines[above + 1:at]), name
        if name not in joints:
            continue
        joint, line = joints[name], lines[at]
        assert line.endswith(f'→ {link_of(joint, "child")}'), line
        if joint.get('type') in ('revolute', 'prismatic'):
            limit = joint.find('limit')
            shown = re.search(r'limits \[([^,\]]+), ([^\]]+)\]', line)
            assert shown and tuple(map(float, shown.groups())) == (
                float(limit.get('lower', 0)), float(limit.get('upper', 0))), line
        mimic = resolved_mimic(joints, name)
        shown = re.search(r'mimics (\S+) ×(\S+) ([-+]\S+)\]', line)
        if mimic is None:
            assert shown is None, line
        else:
            assert shown and (shown[1], float(shown[2])) == mimic[:2], line
            assert float(shown[3]) == pytest.approx(mimic[2], abs=1e-12), line


def check_independent_joints(output: str, node: ast.stmt, tree: ast.AST,
                             namespace: dict) -> None:
    joints = joints_of(loaded_robot(tree))
    driven = [name for name, joint in joints.items()
              if joint.get('type') != 'fixed' and joint.find('mimic') is None]
    printed = ast.literal_eval(output)
    assert isinstance(printed, tuple) and sorted(printed) == sorted(driven)


def check_warnings_are_data(output: str, node: ast.stmt, tree: ast.AST, namespace: dict) -> None:
    printed = ast.literal_eval(output)
    assert isinstance(printed, tuple) and all(isinstance(w, str) for w in printed), output


def check_joint_transforms(output: str, node: ast.stmt, tree: ast.AST, namespace: dict) -> None:
    joints = joints_of(loaded_robot(tree))
    [argument] = node.iter.args  # for t in model.joint_transforms(values)
    given = set(eval(ast.unparse(argument), namespace))  # the example's own expression
    followers = {name for name in joints if given & set(mimic_leaders(joints, name))}
    expected = sorted((link_of(joints[n], 'parent'), link_of(joints[n], 'child'))
                      for n in given | followers)
    assert sorted(tuple(line.split()[:2]) for line in output.splitlines()) == expected


def check_root_links_named(output: str, node: ast.stmt, tree: ast.AST, namespace: dict) -> None:
    (text,), _ = literal_call(tree, 'from_urdf')
    robot = ElementTree.fromstring(text)
    children = {link_of(joint, 'child') for joint in robot.iter('joint')}
    roots = [link.get('name') for link in robot.iter('link') if link.get('name') not in children]
    assert len(roots) == 2 and 'root link' in output, output
    for root in roots:
        assert repr(root) in output, output


Check = Callable[[str, ast.stmt, ast.AST, dict], None]
# The page's descriptions of printed output, and how each is checked.
DESCRIBED: dict[str, Check] = {
    'the kinematic tree, limits and mimics': check_tree,
    'what a joint-state source must drive': check_independent_joints,
    'validation warnings, as data': check_warnings_are_data,
    'parent → child, mimic followers included': check_joint_transforms,
    'names both root links': check_root_links_named,
}


def test_the_python_api_example_prints_what_the_page_states(monkeypatch):
    blocks = python_api_blocks(API_PAGE.read_text(encoding='utf-8'))  # fails if it is gone
    assert blocks, "doc/api.md has no python code block under a 'Python API' heading"
    monkeypatch.chdir(REPO)
    printed: list[tuple[int, str]] = []

    def recording_print(*args, **kwargs) -> None:
        text = io.StringIO()
        print(*args, **kwargs, file=text)
        printed.append((sys._getframe(1).f_lineno, text.getvalue()))

    namespace = {'__name__': '__main__', 'print': recording_print}
    stated = []
    for start, code in blocks:
        # Padded so that line numbers, in a traceback and below, are the page's own.
        padded = '\n' * (start - 1) + code
        exec(compile(padded, str(API_PAGE), 'exec'), namespace)
        tree = ast.parse(padded)
        stated += [(node, claim, tree) for node, claim in stated_outputs(padded)]

    assert stated, 'the example states none of its output'
    for node, claim, tree in stated:
        where = f'doc/api.md line {node.lineno}'
        output = ''.join(text for line, text in printed
                         if node.lineno <= line <= node.end_lineno).rstrip('\n')
        assert output, f'{where}: the statement printed nothing'
        check = DESCRIBED.get(claim)
        if check is None:
            assert output == claim, (
                f'{where}: the page says it prints {claim!r}, and it printed {output!r} (a '
                'comment that describes the output instead needs its check in DESCRIBED)')
        else:
            check(output, node, tree, namespace)
