"""The README's Python API example runs as written, from the repository root."""

from pathlib import Path
import re

import pytest

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

REPO = Path(__file__).resolve().parent.parent
README = REPO / 'README.md'
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


def test_readme_python_api_example_runs(monkeypatch, capsys):
    blocks = python_api_blocks(README.read_text(encoding='utf-8'))  # fails if README is gone
    assert blocks, "README.md has no python code block under a 'Python API' heading"
    monkeypatch.chdir(REPO)
    namespace = {'__name__': '__main__'}
    for start, code in blocks:
        # Padded so that a traceback names the README's own line numbers.
        exec(compile('\n' * (start - 1) + code, str(README), 'exec'), namespace)
    capsys.readouterr()
