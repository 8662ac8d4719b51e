"""One vocabulary across the commands, logs and docs (words.py)."""

import ast
from pathlib import Path
import re

import pytest

from urdf_state_publisher.words import counted

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

REPO = Path(__file__).resolve().parent.parent


def test_counted_says_one_thing_in_the_singular_and_others_in_the_plural():
    assert [counted(n, 'warning') for n in (0, 1, 2)] == ['0 warnings', '1 warning',
                                                            '2 warnings']
    assert counted(1, 'index', 'indices') == '1 index'
    assert counted(3, 'index', 'indices') == '3 indices'
    assert counted(1598, 'message') == '1,598 messages'


def user_visible_strings(path: Path) -> list[str]:
    """The string literals of a module but its docstrings (what it prints, logs, raises)."""
    tree = ast.parse(path.read_text(encoding='utf-8'))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


def test_joints_that_move_are_moving_joints_everywhere():
    # robot_state_publisher's users say "moving joints on /tf": so do the commands and docs.
    said = [(path.name, text) for path in sorted((REPO / 'urdf_state_publisher').rglob('*.py'))
            for text in user_visible_strings(path) if re.search(r'\bmovable\b', text, re.I)]
    assert said == []
    pages = [REPO / 'README.md', *sorted((REPO / 'doc').glob('*.md'))]
    assert [page.name for page in pages if re.search(r'\bmovable\b', page.read_text(), re.I)
            ] == []


def test_no_count_is_followed_by_a_fixed_plural():
    # '{n} warnings' says '1 warnings': a count in an f-string takes counted() unless the
    # number cannot be 1 (the docs of this test's exceptions say why).
    fixed_plural = re.compile(r'\{len\([^{}]*\)\} (warnings|links|sensors|joints|frames|'
                              r'messages|runs)\b')
    found = [(path.name, match[0])
             for path in sorted((REPO / 'urdf_state_publisher').rglob('*.py'))
             for match in fixed_plural.finditer(path.read_text(encoding='utf-8'))]
    assert found == []
