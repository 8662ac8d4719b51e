r"""Read description text as robot_state_publisher does: TinyXML2's grammar, as urdfdom calls it.

robot_state_publisher hands its description to urdfdom, which parses it with TinyXML2 and takes
the first top-level `<robot>` element. TinyXML2 is lenient: it reads many texts that are not
XML, and reads some XML otherwise than an XML parser would. `xml_safety.parse_xml` comes here
only when its strict parser refused the text or met markup whose reading differs (a DOCTYPE, a
processing instruction), so a well-formed description never pays for this reading.

The rules, from TinyXML2 6.0 (the ROS wheels'), 9 (Debian 12's) and 10 (Ubuntu 24.04's), which
agree on everything but the nesting limit (none in 6, 100 in 9, 500 in 10):
- whitespace is C's isspace (space, \t, \n, \v, \f, \r); a name starts with an ASCII letter,
  ':', '_' or any non-ASCII character and goes on with those, digits, '.' and '-';
- `<?...?>` ends at the first '?>' and is refused unless every node before it at the top of the
  document is one as well; `<!--...-->` ends at the first '-->', whatever is inside;
  `<![CDATA[...]]>` at the first ']]>'; any other `<!...>` (a DOCTYPE among them) at the first
  '>', and is ignored, so that an internal DTD subset's end is read as text;
- text runs to the next '<' (text with no '<' after it is refused); '&' is read literally
  unless it starts one of XML's five entities or a character reference: no entity a DTD
  declares is ever expanded;
- a tag may have whitespace after its '<' and attributes with no space between them; an end
  tag may have attributes; a repeated attribute, a missing '=' or quote, an unclosed or a
  mismatched element are refused; an end tag at the top of the document ends the reading.

Namespaces are resolved as the strict parser resolves them ('{uri}local'), so that the rest
of the reading sees the same tree either way; a prefix nobody declared stays in the name, as
TinyXML2 leaves it. What is read differently from XML, or is not XML, is a `Finding`.
"""

from __future__ import annotations

from dataclasses import dataclass
import re
from typing import Any
from xml.etree.ElementTree import TreeBuilder

from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.quoting import cut

__all__ = ['Finding', 'LenientReading', 'read_leniently']

_WHITESPACE = re.compile(r'[ \t\n\v\f\r]*')
_NAME = re.compile(r'[A-Za-z:_\x80-\U0010ffff][A-Za-z0-9:_.\-\x80-\U0010ffff]*')
# A reference XML reads: one of its five entities, or a character reference to a character
# it allows. Anything else after '&' is read by TinyXML2 as it stands.
_REFERENCE = re.compile(
    r'&(?:(amp|lt|gt|quot|apos)|#([0-9]+)|#x([0-9a-fA-F]+)|([^\s&;<>"\']+));|&')
# Characters XML 1.0 forbids anywhere (TinyXML2 reads them as they are).
_FORBIDDEN_CHARACTER = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')
# An XML declaration XML accepts: version, then optionally encoding and standalone, in order.
_XML_DECLARATION = re.compile(
    r'<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*("1\.[0-9]+"|\'1\.[0-9]+\')'
    r'([ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*'
    r'("[A-Za-z][A-Za-z0-9._-]*"|\'[A-Za-z][A-Za-z0-9._-]*\'))?'
    r'([ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*("(yes|no)"|\'(yes|no)\'))?[ \t\r\n]*\?>$')
_XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace'
_ENTITIES = {'amp': '&', 'lt': '<', 'gt': '>', 'quot': '"', 'apos': "'"}
_LINE_BREAK = re.compile(r'\r\n?|\n')


@dataclass(frozen=True)
class Finding:
    """A place TinyXML2 reads that XML forbids or would read otherwise: where, and what."""

    offset: int
    what: str


@dataclass(frozen=True)
class LenientReading:
    """The `<robot>` element as urdfdom finds it, its elements' offsets, and the findings.

    `starts` holds the offset in the text of each element of `root`, in document order
    (`root.iter()`'s); `namespaces` the namespace of each prefix as first declared.
    """

    root: Any
    starts: list[int]
    namespaces: dict[str, str]
    findings: list[Finding]


def position(text: str, offset: int) -> tuple[int, int]:
    """Line and column (both from 1) of `offset` in `text`, line breaks counted as XML counts."""
    head = text[:offset]
    breaks = list(_LINE_BREAK.finditer(head))
    column_start = breaks[-1].end() if breaks else 0
    return len(breaks) + 1, offset - column_start + 1


class _RefusedError(Exception):
    def __init__(self, offset: int, what: str) -> None:
        super().__init__(what)
        self.offset = offset
        self.what = what


def _utf8_of(code: int) -> bytes:
    """The bytes TinyXML2 writes for a character reference (ConvertUTF32ToUTF8's rule)."""
    if code < 0x80:
        return bytes((code,))
    if code < 0x800:
        count, mark = 2, 0xC0
    elif code < 0x10000:
        count, mark = 3, 0xE0
    elif code < 0x200000:
        count, mark = 4, 0xF0
    else:
        return b''
    tail = []
    for _ in range(count - 1):
        tail.append(0x80 | (code & 0x3F))
        code >>= 6
    return bytes((mark | code, *reversed(tail)))


def _character_reference(data: bytes, at: int) -> tuple[int, bytes] | None:
    """TinyXML2's GetCharacterRef at data[at] == '&', '#' next: (end, bytes), or None if not one.

    Its arithmetic is in 32- and 64-bit unsigned integers, as here; `&#;` and `&#x;` are the
    character 0, which ends the value.
    """
    if at + 2 >= len(data):
        return None
    hexadecimal = data[at + 2] == ord('x')
    first = at + 3 if hexadecimal else at + 2
    if first >= len(data):
        return None
    semicolon = data.find(b';', first)
    if semicolon < 0:
        return None
    code, factor = 0, 1
    base = 16 if hexadecimal else 10
    for digit_at in range(semicolon - 1, first - 1, -1):
        digit = chr(data[digit_at])
        if digit not in '0123456789abcdefABCDEF'[:22 if hexadecimal else 10]:
            return None
        code = (code + ((factor * int(digit, base)) & 0xFFFFFFFF)) & 0xFFFFFFFFFFFFFFFF
        factor = (factor * base) & 0xFFFFFFFF
    return semicolon + 1, _utf8_of(code)


def tinyxml_value(raw: str) -> str:
    r"""An attribute's value as TinyXML2 gives it to urdfdom (StrPair::GetStr, in place).

    Line breaks become '\n' ('\r\n', '\r', and '\n\r' too); the five entities and character
    references are replaced; any other '&' is kept, except that, past a replacement, TinyXML2
    leaves there the byte its in-place rewrite had already written (a bug kept here, since
    urdfdom reads what it leaves). A character 0 ends the value, as it ends a C string.
    """
    data = bytearray(raw.encode('utf-8', 'surrogatepass'))
    read = write = 0
    size = len(data)
    while read < size:
        byte = data[read]
        following = data[read + 1] if read + 1 < size else 0
        if byte in (0x0D, 0x0A):
            read += 2 if following == (0x0A if byte == 0x0D else 0x0D) else 1
            data[write] = 0x0A
            write += 1
        elif byte == 0x26 and following == 0x23:  # '&#'
            reference = _character_reference(data, read)
            if reference is None:
                data[write] = byte
                read += 1
                write += 1
            else:
                read, replacement = reference
                data[write:write + len(replacement)] = replacement
                write += len(replacement)
        elif byte == 0x26:
            for name, value in _ENTITIES.items():
                end = read + 1 + len(name)
                if data[read + 1:end] == name.encode() and end < size and data[end] == 0x3B:
                    data[write] = ord(value)
                    write += 1
                    read = end + 1
                    break
            else:  # TinyXML2 steps over it without writing
                read += 1
                write += 1
        else:
            data[write] = byte
            read += 1
            write += 1
    value = bytes(data[:write])
    return value.split(b'\0', 1)[0].decode('utf-8', 'replace')


def _doctype_end(text: str, start: int, first_close: int) -> int:
    """The offset of the '>' that ends the DOCTYPE at `start` for XML (after its subset)."""
    subset = text.find('[', start, first_close)
    if subset < 0:
        return first_close
    end = re.compile(r'][ \t\r\n]*>').search(text, subset)
    return end.end() - 1 if end else first_close


class _Reader:
    """One pass over the text with TinyXML2's rules; the elements go to ElementTree builders."""

    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.max_depth = max_depth
        self.findings: list[Finding] = []
        self.namespaces: dict[str, str] = {}
        # Each top-level element: (its raw name, its root, the offsets of its elements).
        self.tops: list[tuple[str, Any, list[int]]] = []
        # Where a DOCTYPE ends for XML: TinyXML2 ends it at its first '>', and reads the rest
        # of an internal subset as markup it ignores and text; XML has nothing to say of those.
        self.doctype_end = -1

    def find(self, offset: int, what: str) -> None:
        self.findings.append(Finding(offset, what))

    def check_characters(self, start: int, end: int, where: str) -> None:
        forbidden = _FORBIDDEN_CHARACTER.search(self.text, start, end)
        if forbidden:
            self.find(forbidden.start(),
                      f'the character U+{ord(forbidden.group()):04X} {where}, which XML forbids')

    def check_references(self, start: int, end: int, where: str) -> None:
        for reference in _REFERENCE.finditer(self.text, start, end):
            known, decimal, hexadecimal, name = reference.groups()
            if known:
                continue
            number = decimal or hexadecimal
            if number is not None:
                code = int(number, 10 if decimal else 16)
                if code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or \
                        0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF:
                    continue
                self.find(reference.start(), f'the character reference {reference.group()!r} '
                          f'{where}, to a character XML forbids')
            elif name is not None:
                self.find(reference.start(),
                          f'the entity reference {cut(reference.group())!r} {where}, which '
                          'robot_state_publisher keeps as it stands (it expands no entity)')
            else:
                self.find(reference.start(), f"a bare '&' {where}, which XML forbids "
                          "(write '&amp;')")

    def end_of(self, pos: int, opener: int, terminator: str, refusal: str) -> int:
        """Where the markup opened at `pos` (`opener` characters long) meets `terminator`.

        TinyXML2 reads to the first `terminator`, whatever comes between; without one, it
        refuses the document (`refusal`).
        """
        end = self.text.find(terminator, pos + opener)
        if end < 0:
            raise _RefusedError(pos, refusal)
        return end

    def run(self) -> None:
        text = self.text
        size = len(text)
        pos = _WHITESPACE.match(text, 0).end()
        if text.startswith('\ufeff', pos):
            pos = _WHITESPACE.match(text, pos + 1).end()
        if pos >= size:
            raise _RefusedError(pos, 'the document is empty')
        only_declarations = True  # every node so far at the top of the document is <?...?>
        stack: list[tuple[str, int, TreeBuilder]] = []  # the open elements
        scopes: list[dict[str, str]] = [{'xml': _XML_NAMESPACE}]
        while pos < size:
            pos = _WHITESPACE.match(text, pos).end()
            if pos >= size:
                break
            if text.startswith('<?', pos):
                end = self.end_of(pos, 2, '?>', "'<?' with no '?>' after it")
                if stack or not only_declarations:
                    raise _RefusedError(
                        pos, f'{cut(text[pos:end + 2])!r}: robot_state_publisher reads <?...?> '
                        'only at the start of the document, before anything else; remove it or '
                        'move it there')
                declaration = text[pos:end + 2]
                if re.match(r'<\?xml[ \t\r\n?]', declaration):
                    if pos != (1 if text.startswith('\ufeff') else 0):
                        self.find(0, 'whitespace before the XML declaration, which XML '
                                  'forbids')
                    if not _XML_DECLARATION.match(declaration):
                        self.find(pos, f'the XML declaration {cut(declaration)!r}, which is '
                                  'not one XML reads')
                self.check_characters(pos, end, 'in a processing instruction')
                pos = end + 2
                continue
            only_declarations = False
            if text.startswith('<!--', pos):
                end = self.end_of(pos, 4, '-->', "a comment '<!--' with no '-->' after it")
                dashes = text.find('--', pos + 4, end)
                if dashes >= 0 or text[end - 1] == '-' and end > pos + 4:
                    self.find(dashes if dashes >= 0 else end - 1,
                              "'--' inside a comment, which XML forbids")
                self.check_characters(pos, end, 'in a comment')
                pos = end + 3
            elif text.startswith('<![CDATA[', pos):
                end = self.end_of(pos, 9, ']]>', "a '<![CDATA[' with no ']]>' after it")
                if not stack:
                    self.find(pos, 'a CDATA section outside the root element, which XML '
                              'forbids')
                self.check_characters(pos, end, 'in a CDATA section')
                pos = end + 3
            elif text.startswith('<!', pos):
                end = self.end_of(pos, 2, '>',
                                  f"{cut(text[pos:pos + 20])!r}... with no '>' after it")
                if text.startswith('<!DOCTYPE', pos) and not stack:
                    self.doctype_end = _doctype_end(text, pos, end)
                elif pos > self.doctype_end or stack:
                    self.find(pos, f'the markup {cut(text[pos:end + 1])!r}, which '
                              'robot_state_publisher ignores and XML forbids there')
                pos = end + 1
            elif text[pos] == '<':
                pos = self.tag(pos, stack, scopes)
                if pos < 0:  # an end tag at the top of the document: the reading ends
                    break
            else:
                end = text.find('<', pos)
                if end < 0:
                    raise _RefusedError(
                        pos, f'text {cut(text[pos:pos + 40].strip())!r} at the end of the '
                        'document, after the last element; remove it')
                if not stack:
                    if pos > self.doctype_end:
                        self.find(pos, 'text outside the root element, which XML forbids')
                else:
                    self.check_references(pos, end, 'in text')
                    if ']]>' in text[pos:end]:
                        self.find(text.index(']]>', pos, end),
                                  "']]>' in text, which XML forbids")
                self.check_characters(pos, end, 'in text')
                pos = end
        if stack:
            name, start = stack[-1][0], stack[-1][1]
            raise _RefusedError(
                start, f'element <{cut(name)}> is not closed; the document ends inside it')

    def tag(self, pos: int, stack: list[tuple[str, int, TreeBuilder]],
            scopes: list[dict[str, str]]) -> int:
        """Read the tag at text[pos] == '<'; the offset after it, or -1 to end the reading."""
        text = self.text
        size = len(text)
        after = _WHITESPACE.match(text, pos + 1).end()
        if after != pos + 1:
            self.find(pos, "whitespace after '<', which XML forbids")
        closing = text.startswith('/', after)
        after += closing  # no whitespace may follow '</'
        name_match = _NAME.match(text, after)
        if name_match is None:
            raise _RefusedError(pos, "'<' that starts no element (a name must follow it); "
                                "write '&lt;' for a '<' in text")
        name = name_match.group()
        raw_attributes: dict[str, str] = {}
        p = name_match.end()
        after_value = False
        while True:
            q = _WHITESPACE.match(text, p).end()
            if q >= size:
                raise _RefusedError(pos, f'the tag of <{cut(name)}> is not closed; the '
                                    'document ends inside it')
            char = text[q]
            attribute = _NAME.match(text, q)
            if attribute is not None:
                if after_value and q == p:
                    self.find(q, f'no space before attribute {cut(attribute.group())!r} of '
                              f'<{cut(name)}>, which XML forbids')
                value_start = self.attribute(attribute, name, raw_attributes)
                p = value_start
                after_value = True
                continue
            if char == '>':
                p = q + 1
                empty = False
                break
            if char == '/' and text.startswith('>', q + 1):
                p = q + 2
                empty = True
                break
            raise _RefusedError(q, f'{char!r} in the tag of <{cut(name)}>, where an '
                                "attribute, '>' or '/>' belongs")
        if closing and raw_attributes:
            self.find(pos, f'attributes in the end tag </{cut(name)}>, which XML forbids')
        if closing and empty:
            # TinyXML2 takes '</a/>' for an empty element <a/>.
            self.find(pos, f"'</{cut(name)} ... />', read as an empty element <{cut(name)}/>; "
                      'XML forbids it')
            closing = False
        if closing:
            if not stack:
                self.find(pos, f'the end tag </{cut(name)}> outside any element, which XML '
                          'forbids; robot_state_publisher reads nothing after it')
                return -1
            open_name, open_at, builder = stack.pop()
            if open_name != name:
                line, column = position(text, open_at)
                raise _RefusedError(pos, f'the end tag </{cut(name)}> does not match '
                                    f'<{cut(open_name)}> (line {line}, column {column})')
            builder.end(None)
            scopes.pop()
            if not stack:
                self.close_top(builder)
            return p
        # A start tag (with its end when empty).
        if not stack:
            builder = TreeBuilder()
            self.tops.append((name, None, []))
        else:
            builder = stack[-1][2]
            if len(stack) >= self.max_depth:
                raise _RefusedError(pos, f'elements nest more than {self.max_depth} levels '
                                    'deep; a URDF needs a handful')
        scope = dict(scopes[-1])
        declared = False
        for attribute_name, value in raw_attributes.items():
            if attribute_name == 'xmlns' or attribute_name.startswith('xmlns:'):
                prefix = attribute_name[6:]
                scope[prefix] = value
                self.namespaces.setdefault(prefix, value)
                declared = True
        if not declared:
            scope = scopes[-1]
        builder.start(self.qualified(name, scope, pos, True),
                      {self.qualified(key, scope, pos, False): value
                       for key, value in raw_attributes.items()
                       if key != 'xmlns' and not key.startswith('xmlns:')})
        self.tops[-1][2].append(pos)
        if empty:
            builder.end(None)
            if not stack:
                self.close_top(builder)
            return p
        stack.append((name, pos, builder))
        scopes.append(scope)
        return p

    def attribute(self, match: re.Match, element: str, attributes: dict[str, str]) -> int:
        """Read one attribute from its name's match; the offset after its closing quote."""
        text = self.text
        name = match.group()
        p = _WHITESPACE.match(text, match.end()).end()
        if not text.startswith('=', p):
            raise _RefusedError(match.start(), f'attribute {cut(name)!r} of <{cut(element)}> '
                                "has no '=' and value")
        p = _WHITESPACE.match(text, p + 1).end()
        quote = text[p:p + 1]
        if quote not in ('"', "'"):
            raise _RefusedError(match.start(), f'the value of attribute {cut(name)!r} of '
                                f'<{cut(element)}> is not in quotes')
        end = text.find(quote, p + 1)
        if end < 0:
            raise _RefusedError(p, f'the value of attribute {cut(name)!r} of '
                                f'<{cut(element)}> has no closing quote')
        if name in attributes:
            raise _RefusedError(match.start(), f'attribute {cut(name)!r} is given twice in '
                                f'<{cut(element)}>; keep one')
        where = f'in attribute {cut(name)!r} of <{cut(element)}>'
        less_than = text.find('<', p + 1, end)
        if less_than >= 0:
            self.find(less_than, f"a '<' {where}, which XML forbids (write '&lt;')")
        self.check_references(p + 1, end, where)
        self.check_characters(p + 1, end, where)
        raw = text[p + 1:end]
        attributes[name] = tinyxml_value(raw) if ('&' in raw or '\r' in raw) else raw
        return end + 1

    def qualified(self, name: str, scope: dict[str, str], at: int, element: bool) -> str:
        """The name as the strict parser gives it: '{uri}local' where a namespace is bound."""
        prefix, colon, local = name.partition(':')
        if not colon:
            uri = scope.get('') if element else None
            return f'{{{uri}}}{name}' if uri else name
        uri = scope.get(prefix)
        if uri is None:
            self.find(at, f'the namespace prefix {cut(prefix)!r} in {cut(name)!r}, which no '
                      'xmlns declares (XML namespaces forbid it)')
            return name
        return f'{{{uri}}}{local}'

    def close_top(self, builder: TreeBuilder) -> None:
        name, _, starts = self.tops[-1]
        self.tops[-1] = (name, builder.close(), starts)


def read_leniently(text: str, max_depth: int) -> LenientReading:
    """Read `text` as urdfdom does with TinyXML2; DescriptionError where it would refuse.

    The error names the line and column and what is wrong. urdfdom reads the first top-level
    element named `robot`; with none, the first top-level element is returned (for the
    caller's own message about it).
    """
    reader = _Reader(text.split('\0', 1)[0], max_depth)
    if '\0' in text:
        reader.find(text.index('\0'), 'the character U+0000, which XML forbids; '
                    'robot_state_publisher reads no further')
    try:
        reader.run()
    except _RefusedError as refusal:
        line, column = position(text, refusal.offset)
        raise DescriptionError(
            f'robot description line {line}, column {column}: {refusal.what} '
            '(robot_state_publisher refuses it too)') from None
    tops = [(name, root, starts) for name, root, starts in reader.tops if root is not None]
    if not tops:
        raise DescriptionError('robot description has no element; a URDF is a <robot> element')
    chosen = next((top for top in tops if top[0] == 'robot'), tops[0])
    for name, _, starts in tops:
        if starts is not chosen[2]:
            side = 'after' if starts[0] > chosen[2][0] else 'before'
            reader.find(starts[0], f'an element <{cut(name)}> {side} the root element '
                        f'<{cut(chosen[0])}>, which XML forbids')
    findings = sorted(reader.findings, key=lambda finding: finding.offset)
    return LenientReading(chosen[1], chosen[2], reader.namespaces, findings)
