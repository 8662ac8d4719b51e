"""Parse description text into an ElementTree tree without loading or expanding anything.

The parser is the standard library's (expat, with ElementTree's C tree builder): it reads no
DTD and loads nothing from outside, and a document type declaration is refused before expat
sees the text. Elements do not keep their lines; `source.Source` finds them when asked.
"""

from __future__ import annotations

import codecs
from collections.abc import Collection, Iterator
from itertools import chain, compress
from operator import attrgetter
import re
from typing import Any
from xml.etree.ElementTree import ParseError, TreeBuilder, XMLParser

from urdf_state_publisher.description.messages import quoted, shorten
from urdf_state_publisher.description.source import Source
from urdf_state_publisher.errors import DescriptionError

__all__ = ['children', 'count_children', 'MAX_DEPTH', 'MAX_DESCRIPTION_BYTES', 'parse_xml',
           'strip_default_namespace']

# The largest description accepted, in bytes (UTF-8 for text). Real URDFs, meshes aside (they
# live in separate files), are well under a few MB; anything bigger is refused before parsing.
MAX_DESCRIPTION_BYTES = 32 * 1024 * 1024
# The deepest nesting of elements accepted (libxml2's default limit); a URDF needs about six.
MAX_DEPTH = 256

_DECLARATIONS = ('<!DOCTYPE', '<!ENTITY')
_DECLARATION_MESSAGE = (
    'robot description contains a DOCTYPE/entity declaration; URDF needs neither; remove it')

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


class _TreeBuilder(TreeBuilder):
    """ElementTree's C tree builder; a document type declaration stops the parse.

    None can reach expat past the scan in parse_xml; this is its second refusal. Elements,
    their ends and text are handled by the inherited C methods: no Python work per element.
    """

    def doctype(self, name: str, pubid: str | None, system: str | None) -> None:
        raise DescriptionError(_DECLARATION_MESSAGE)


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


def parse_xml(text: str | bytes) -> tuple[Any, Source]:
    """Parse with a parser that loads nothing from outside and expands no entities.

    Returns the root element and the Source that finds each element's line.
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
    # The very text expat parses: it never sees a DTD, so no entity but XML's five exists.
    if any(marker in text for marker in _DECLARATIONS):
        raise DescriptionError(_DECLARATION_MESSAGE)
    builder = _TreeBuilder()
    namespaces: dict[str, str] = {}
    # A C method: each declaration is recorded without a Python call, the first of a prefix kept.
    builder.start_ns = namespaces.setdefault
    # Comments and processing instructions are dropped by the tree builder.
    parser = XMLParser(target=builder)
    try:
        parser.feed(text)
        root = parser.close()
    except ParseError as exc:
        raise DescriptionError(f'robot description is not well-formed XML: {shorten(str(exc))}'
                               ) from None
    _check_depth(root)
    return root, Source(text, root, namespaces)


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
