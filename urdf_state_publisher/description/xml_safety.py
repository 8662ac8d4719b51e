"""Parse description text into an lxml tree without loading or expanding anything."""

from __future__ import annotations

from typing import Any

from lxml import etree

from urdf_state_publisher.description.messages import shorten
from urdf_state_publisher.errors import DescriptionError

__all__ = ['MAX_DESCRIPTION_BYTES', 'parse_xml', 'strip_default_namespace']

# The largest description accepted, in bytes (UTF-8 for text). Real URDFs, meshes aside (they
# live in separate files), are well under a few MB; anything bigger is refused before parsing.
MAX_DESCRIPTION_BYTES = 32 * 1024 * 1024

_DECLARATIONS = tuple(
    marker.encode(encoding)
    for marker in ('<!DOCTYPE', '<!ENTITY')
    for encoding in ('utf-8', 'utf-16-le', 'utf-16-be', 'utf-32-le', 'utf-32-be'))
_DECLARATION_MESSAGE = (
    'robot description contains a DOCTYPE/entity declaration; URDF needs neither; remove it')


def _check_size(size: int) -> None:
    if size > MAX_DESCRIPTION_BYTES:
        raise DescriptionError(
            f'robot description is {size} bytes ({size / 2**20:.1f} MiB); more than the '
            f'{MAX_DESCRIPTION_BYTES // 2**20} MiB this node accepts')


def parse_xml(text: str | bytes) -> Any:
    """Parse with a parser that loads nothing from outside and expands no entities."""
    if isinstance(text, str):
        # A character takes at least one byte: refuse before copying what is surely too big.
        _check_size(len(text))
        if not text.strip():
            raise DescriptionError('robot description is empty')
        try:
            data = text.encode('utf-8')
        except UnicodeEncodeError:
            raise DescriptionError(
                'robot description is not valid Unicode text (it contains a lone surrogate)'
            ) from None
        _check_size(len(data))
        # The text is already decoded: make lxml ignore whatever encoding its declaration names.
        encoding = 'utf-8'
    elif isinstance(text, (bytes, bytearray, memoryview)):
        _check_size(text.nbytes if isinstance(text, memoryview) else len(text))
        data = bytes(text)
        if not data.strip():
            raise DescriptionError('robot description is empty')
        encoding = None
    else:
        raise DescriptionError(
            f'robot description must be str or bytes, not {type(text).__name__}')
    # Refusing before parsing means that no entity is ever looked at, whatever libxml2 does.
    if any(marker in data for marker in _DECLARATIONS):
        raise DescriptionError(_DECLARATION_MESSAGE)
    parser = etree.XMLParser(
        encoding=encoding, resolve_entities=False, no_network=True, load_dtd=False,
        huge_tree=False, remove_comments=True, remove_pis=True, collect_ids=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise DescriptionError(f'robot description is not well-formed XML: {shorten(str(exc))}'
                               ) from None
    except (ValueError, LookupError) as exc:
        raise DescriptionError(f'robot description could not be parsed: {shorten(str(exc))}'
                               ) from None
    if root is None:
        raise DescriptionError('robot description is empty')
    docinfo = root.getroottree().docinfo
    # Catches what the byte scan cannot see, e.g. a declaration in an encoding it does not try.
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise DescriptionError(_DECLARATION_MESSAGE)
    if any(True for _ in root.iter(etree.Entity)):
        raise DescriptionError(_DECLARATION_MESSAGE)
    return root


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
    etree.cleanup_namespaces(root)
