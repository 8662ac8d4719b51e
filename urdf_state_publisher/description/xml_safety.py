"""Parse description text into an ElementTree tree as robot_state_publisher reads it.

A well-formed description is parsed by the standard library's parser (expat, with
ElementTree's C tree builder), which loads nothing from outside. Text it refuses, or with
markup whose reading differs between XML and urdfdom's TinyXML2 (a document type declaration,
a processing instruction), is read by `lenient_xml` with TinyXML2's rules, as
robot_state_publisher reads it: accepted where urdfdom accepts it, with a finding for each place
that is not XML, refused where urdfdom refuses it. No parser ever sees a DTD: no entity a
document declares is expanded. Elements do not keep their lines; `source.Source` finds them.
"""

from __future__ import annotations

import codecs
from collections.abc import Collection, Iterator
from itertools import chain, compress
from operator import attrgetter
import re
from typing import Any
from xml.etree.ElementTree import ParseError, TreeBuilder, XMLParser

from urdf_state_publisher.description.messages import shorten
from urdf_state_publisher.description.source import Source
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.quoting import quoted

__all__ = ['children', 'count_children', 'MAX_DEPTH', 'MAX_DESCRIPTION_BYTES', 'parse_xml',
           'strip_default_namespace']

# The largest description accepted, in bytes (UTF-8 for text). Real URDFs, meshes aside (they
# live in separate files), are well under a few MB; anything bigger is refused before parsing.
MAX_DESCRIPTION_BYTES = 32 * 1024 * 1024
# The deepest nesting of elements accepted: TinyXML2 10's (9 stops at 100, 6 nowhere); a URDF
# needs about six. The bound is this node's, for its memory.
MAX_DEPTH = 499

# Markup whose reading differs between expat and TinyXML2: a document type declaration (read
# by expat, skipped to its first '>' by TinyXML2) and <!ENTITY>, which only a DTD holds.
_DECLARATIONS = ('<!DOCTYPE', '<!ENTITY')
# A quoted value holding a tab or a line break: XML turns each into a space, TinyXML2 keeps it
# (and urdfdom then refuses a number so written). Text that may hold one is read by TinyXML2's
# rules; the pattern may match elsewhere (a comment), which costs only the slower reading.
_RAW_WHITESPACE_IN_VALUE = re.compile(
    r'=[ \t\r\n]*(?:"[^"<]*[\t\r\n][^"]*"|\'[^\'<]*[\t\r\n][^\']*\')')

# Bytes are decoded here, so that the declaration scan and the parser read the same text. The
# encoding as XML 1.0 (appendix F) tells it: a byte order mark; else the first characters,
# '<?xml' or '<', in UTF-32 or UTF-16; else ASCII-compatible bytes, in the encoding their
# declaration names, UTF-8 without one. EBCDIC is refused.
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_BE, 'utf-32'), (codecs.BOM_UTF32_LE, 'utf-32'),  # before UTF-16's
    (codecs.BOM_UTF8, 'utf-8-sig'),
    (codecs.BOM_UTF16_BE, 'utf-16'), (codecs.BOM_UTF16_LE, 'utf-16'))
_UNMARKED = ((b'\0\0\0<', 'utf-32-be'), (b'<\0\0\0', 'utf-32-le'),
             (b'\0<\0?', 'utf-16-be'), (b'<\0?\0', 'utf-16-le'))
_EBCDIC = b'\x4c\x6f\xa7\x94'  # '<?xm'
_DECLARED_ENCODING = re.compile(
    rb'<\?xml\s[^>]*?encoding\s*=\s*["\']([A-Za-z][A-Za-z0-9._-]*)["\']')

_TAG = attrgetter('tag')


class _TinyXML2ReadsItOtherwiseError(Exception):
    """The text holds markup that TinyXML2, robot_state_publisher's reader, reads otherwise."""


class _TreeBuilder(TreeBuilder):
    """ElementTree's C tree builder; a document type declaration or instruction stops the parse.

    No DTD can reach expat past the scan in parse_xml; this is its second guard. TinyXML2
    refuses a processing instruction that some other node precedes, expat does not: such a text
    is left to TinyXML2's rules. Elements, their ends and text are handled by the inherited C
    methods: no Python work per element.
    """

    def doctype(self, name: str, pubid: str | None, system: str | None) -> None:
        raise _TinyXML2ReadsItOtherwiseError

    def pi(self, target: str, text: str | None = None) -> None:
        raise _TinyXML2ReadsItOtherwiseError


def _check_size(size: int) -> None:
    if size > MAX_DESCRIPTION_BYTES:
        raise DescriptionError(
            f'robot description is {size} bytes ({size / 2**20:.1f} MiB); more than the '
            f'{MAX_DESCRIPTION_BYTES // 2**20} MiB this node accepts')


def _decode(data: bytes) -> str:
    """Bytes as text, in the encoding their first bytes or their declaration say."""
    codec = next((c for mark, c in _BYTE_ORDER_MARKS if data.startswith(mark)), None)
    codec = codec or next((c for head, c in _UNMARKED if data.startswith(head)), None)
    if codec is None:
        if data.startswith(_EBCDIC):
            raise DescriptionError(
                'robot description is in an EBCDIC encoding, which this node does not read; '
                'use UTF-8')
        declared = _DECLARED_ENCODING.match(data)
        codec = declared.group(1).decode('ascii') if declared else 'utf-8'
    try:
        return data.decode(codec)
    except LookupError:
        raise DescriptionError(
            f'robot description could not be parsed: its encoding {quoted(codec)} is unknown; '
            'use UTF-8') from None
    except UnicodeDecodeError as exc:
        raise DescriptionError(
            f'robot description is not well-formed XML: not {codec} text ({shorten(str(exc))})'
        ) from None


def _check_depth(root: Any) -> None:
    """DescriptionError if elements nest deeper than MAX_DEPTH; one C pass per level."""
    level = [root]
    for _ in range(MAX_DEPTH):
        level = list(chain.from_iterable(level))
        if not level:
            return
    raise DescriptionError(
        f'robot description nests elements more than {MAX_DEPTH} levels deep; a URDF needs '
        'a handful')


def parse_xml(text: str | bytes) -> tuple[Any, Source, str | None]:
    """Parse as robot_state_publisher reads it, loading nothing from outside, expanding no entity.

    Returns the root element (urdfdom's: the first top-level <robot>), the Source that finds
    each element's line, and, for a text that is not XML, the one warning that says so.
    """
    if isinstance(text, str):
        # A character takes at least one byte: refuse before copying what is surely too big.
        _check_size(len(text))
        if not text.strip():
            raise DescriptionError('robot description is empty')
        try:
            _check_size(len(text.encode('utf-8')))
        except UnicodeEncodeError:
            raise DescriptionError(
                'robot description is not valid Unicode text (it contains a lone surrogate)'
            ) from None
        # The text is already decoded: the parser, given text, ignores the encoding its
        # declaration names.
    elif isinstance(text, (bytes, bytearray, memoryview)):
        _check_size(text.nbytes if isinstance(text, memoryview) else len(text))
        data = bytes(text)
        if not data.strip():
            raise DescriptionError('robot description is empty')
        text = _decode(data)
    else:
        raise DescriptionError(
            f'robot description must be str or bytes, not {type(text).__name__}')
    if not (any(marker in text for marker in _DECLARATIONS)
            or _RAW_WHITESPACE_IN_VALUE.search(text)):
        parsed = _parse_well_formed(text)
        if parsed is not None:
            return parsed
    # Imported here: most descriptions are well-formed, and a process that only reads one (the
    # bag command's) does not pay for compiling TinyXML2's grammar.
    from urdf_state_publisher.description.lenient_xml import read_leniently

    reading = read_leniently(text, MAX_DEPTH)
    return (reading.root, Source(text, reading.root, reading.namespaces, reading.starts),
            _leniency(text, reading.findings))


def _parse_well_formed(text: str) -> tuple[Any, Source, None] | None:
    """Root and Source of well-formed XML whose reading TinyXML2 shares; None for any other."""
    builder = _TreeBuilder()
    namespaces: dict[str, str] = {}
    # A C method: each declaration is recorded without a Python call, the first of a prefix kept.
    builder.start_ns = namespaces.setdefault
    # Comments are dropped by the tree builder.
    parser = XMLParser(target=builder)
    try:
        parser.feed(text)
        root = parser.close()
    except (ParseError, _TinyXML2ReadsItOtherwiseError):
        return None
    _check_depth(root)
    return root, Source(text, root, namespaces), None


def _leniency(text: str, findings: list) -> str | None:
    """The one warning for a description read by TinyXML2's rules: its first finding, counted."""
    from urdf_state_publisher.description.lenient_xml import position

    if not findings:
        return None
    line, column = position(text, findings[0].offset)
    count = len(findings)
    return (f'line {line}, column {column}: {findings[0].what}; read as '
            f'robot_state_publisher reads it ({count} such place{"" if count == 1 else "s"})')


def children(element: Any, tags: Collection[str]) -> Iterator[Any]:
    """The children of `element` whose tag is in `tags` (a tuple or frozenset), in order.

    Filtered in C: a child of another name costs no Python work.
    """
    return compress(element, map(tags.__contains__, map(_TAG, element)))


def count_children(element: Any, tags: Collection[str]) -> int:
    """How many children of `element` have a tag in `tags`; counted in C."""
    return sum(map(tags.__contains__, map(_TAG, element)))


def strip_default_namespace(root: Any) -> None:
    """Make `<robot xmlns="...">` documents read like plain ones, as C++ urdfdom does."""
    if not isinstance(root.tag, str) or not root.tag.startswith('{'):
        return
    namespace, _, local = root.tag[1:].partition('}')
    if local != 'robot':
        return
    prefix = '{' + namespace + '}'
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag.startswith(prefix):
            element.tag = element.tag[len(prefix):]
