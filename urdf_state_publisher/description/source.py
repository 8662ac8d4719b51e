"""Where an element of the description being read was written: its line, its namespace prefix.

An ElementTree element keeps neither. A `Source` finds them when a message first asks, the
lines from the text and the prefixes from the declarations the parser reported, with no Python
work per element: asking for one line of a description padded with a million elements costs
about what parsing it did. parse_description makes its document's Source the current one while
it reads (`reading`); `line` and `prefix` answer from it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from operator import methodcaller
import re
from typing import Any

__all__ = ['line', 'prefix', 'reading', 'Source']

# Each '<' that starts an element (group 1), and the markup in which a '<' starts none:
# comments, CDATA sections and processing instructions (the XML declaration among them). XML
# allows no '<' in attribute values or text, and a DOCTYPE is refused before parsing: in text
# the parser accepted, the n-th element found so is the n-th element in document order.
_MARKUP = re.compile(r'(<)[^/!?]|<!--.*?-->|<!\[CDATA\[.*?]]>|<\?.*?\?>', re.DOTALL)
_ELEMENT_START = methodcaller('start', 1)  # -1 for markup that starts no element
# Line breaks as XML counts them: \r\n, \r and \n.
_LINE_BREAK = re.compile(r'\r\n?|\n')
_START = methodcaller('start')


class Source:
    """The text a tree was parsed from and the namespace prefixes it declares."""

    def __init__(self, text: str, root: Any, namespaces: Mapping[str, str],
                 starts: list[int] | None = None) -> None:
        """`namespaces`: the namespace of each prefix ('' the default), as first declared.

        `starts`: the offset of each element of `root` in document order, where the reader
        knows them (a text that is not XML); else they are found in the text when first asked.
        """
        self._text = text
        self._root = root
        self._namespaces = namespaces
        self._starts = starts
        self._lines: dict[Any, int] | None = None
        self._prefixes: dict[str, str] | None = None

    def line(self, element: Any) -> int | None:
        """The line (from 1) on which `element`'s start tag begins; None if not known."""
        if self._lines is None:
            self._lines = self._line_of_each_element()
        return self._lines.get(element)

    def _line_of_each_element(self) -> dict[Any, int]:
        # In C (the regular expressions, map, filter, zip, bisect): nothing per element here.
        elements = list(self._root.iter())
        starts = self._starts
        if starts is None:
            starts = list(filter((-1).__ne__, map(_ELEMENT_START, _MARKUP.finditer(self._text))))
        if len(starts) != len(elements):  # not for text the parser accepted: no wrong line
            return {}
        breaks = list(map(_START, _LINE_BREAK.finditer(self._text)))
        return dict(zip(elements, map((1).__add__, map(partial(bisect_right, breaks), starts))))

    def prefix(self, namespace: str) -> str | None:
        """The first prefix declared for `namespace`; None if it has none (or is a default)."""
        if self._prefixes is None:
            self._prefixes = {}
            for name, uri in self._namespaces.items():
                if name:
                    self._prefixes.setdefault(uri, name)
        return self._prefixes.get(namespace)


_CURRENT: ContextVar[Source | None] = ContextVar('description_source', default=None)


@contextmanager
def reading(source: Source) -> Iterator[None]:
    """Make `source` the one `line` and `prefix` answer from, until the block ends."""
    token = _CURRENT.set(source)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def line(element: Any) -> int | None:
    """The line of `element` in the description being read; None if not known."""
    source = _CURRENT.get()
    return None if source is None else source.line(element)


def prefix(namespace: str) -> str | None:
    """The prefix the description being read declares for `namespace`, if any."""
    source = _CURRENT.get()
    return None if source is None else source.prefix(namespace)
