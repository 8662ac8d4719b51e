"""Unknown element and attribute names: near misses of known names warn, the rest are extensions.

The URDF format lets other tools add their own content: <gazebo>, <ros2_control>,
<transmission>, drake:... elements, vendor attributes on standard elements. Such an extension
is recorded as data, not warned about. A name that is a near miss of a name known at its place
(<orgin> in a joint) is most likely a mistake that changes what is published: a warning that
says what was done and what was probably meant.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from difflib import SequenceMatcher
from typing import Any

from urdf_state_publisher.description.messages import line_of, MAX_LISTED, shorten, Warnings
from urdf_state_publisher.description.records import Extension, extension_label, Extensions
from urdf_state_publisher.description.source import line, prefix
from urdf_state_publisher.description.xml_safety import count_children
from urdf_state_publisher.quoting import cut, quoted

__all__ = ['check_attributes', 'check_children', 'describe_extensions', 'ExtensionTally',
           'near_miss', 'NEAR_MISS_LENGTH', 'NEAR_MISS_RATIO']

# A near miss is a name that is a known name in other letter case, or that is at least
# NEAR_MISS_RATIO similar to one (difflib's ratio of the lower-case names: twice the matching
# characters over all characters) and at most NEAR_MISS_LENGTH characters longer or shorter.
# 0.65 takes in one letter missing, added or changed, or two swapped, down to three-letter names
# (xzy for xyz: 0.67), and leaves out <material> in a link (inertial: 0.625) and the SRDF's
# <group_state> (model_state: 0.64). The length bound leaves out longer names that contain a
# known one, which are a tool's own: static_friction (friction: 0.70), collision_checking
# (collision: 0.67), ros2_control (safety_controller: 0.62).
NEAR_MISS_RATIO = 0.65
NEAR_MISS_LENGTH = 2

# Bounds for hostile descriptions, as for warnings: the extensions listed with where they are,
# the distinct names counted (the rest only add to the total), the unknown names Python looks
# at in one description (past that, the rest are counted in C), and the names counted in C in
# the element where that limit is reached.
MAX_LISTED_EXTENSIONS = 100
MAX_EXTENSION_NAMES = 50
MAX_EXAMINED = 10_000
_MAX_NAMES_COUNTED_IN_C = 10


def near_miss(name: str, known: Collection[str]) -> str | None:
    """The known name that `name` most likely misspells, or None: `name` is an extension.

    A namespaced name ('{uri}local', or 'prefix:local') is never a near miss: its namespace
    says which tool it is for.
    """
    if name.startswith('{') or ':' in name:
        return None
    lower = name.lower()
    for candidate in known:
        if candidate.lower() == lower:
            return candidate
    best, best_ratio = None, NEAR_MISS_RATIO
    matcher = SequenceMatcher()
    matcher.set_seq2(lower)  # the sequence SequenceMatcher caches facts about
    for candidate in known:
        if abs(len(candidate) - len(name)) > NEAR_MISS_LENGTH:
            continue
        matcher.set_seq1(candidate.lower())
        # The quick upper bounds first, as difflib.get_close_matches does.
        if matcher.real_quick_ratio() < best_ratio or matcher.quick_ratio() < best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio or (best is None and ratio == best_ratio):
            best, best_ratio = candidate, ratio
    return best


class ExtensionTally:
    """Collects the extensions of one description, bounded like Warnings.

    All are counted; the first MAX_LISTED_EXTENSIONS are listed with where they are.
    """

    def __init__(self) -> None:
        self._listed: list[Extension] = []
        self._counts: dict[tuple[bool, str], int] = {}
        self._total = 0
        # Unknown names Python may still look at in this description.
        self.room = MAX_EXAMINED
        # Bounded by MAX_EXAMINED: one entry per name looked at, at most.
        self._near_misses: dict[tuple[str, Collection[str]], str | None] = {}

    def near_miss(self, name: str, known: Collection[str]) -> str | None:
        """The module's near_miss, computed once per name and place (`known`: hashable)."""
        key = (name, known)
        if key not in self._near_misses:
            self._near_misses[key] = near_miss(name, known)
        return self._near_misses[key]

    def count(self, name: str, attribute: bool, number: int = 1) -> None:
        """Count `number` extensions called `name`, without listing them."""
        self._total += number
        key = (attribute, name)
        if key in self._counts or len(self._counts) < MAX_EXTENSION_NAMES:
            self._counts[key] = self._counts.get(key, 0) + number

    def add(self, name: str, attribute: bool, where: str, line: int | None) -> None:
        """Count one extension and list it while there is room."""
        self.count(name, attribute)
        if len(self._listed) < MAX_LISTED_EXTENSIONS:
            self._listed.append(Extension(name=name, attribute=attribute, where=where,
                                          line=line))

    def count_unnamed(self, number: int) -> None:
        """Count unknown names that were not looked at (past MAX_EXAMINED)."""
        self._total += number

    def result(self) -> Extensions:
        counts = tuple((extension_label(name, attribute), number)
                       for (attribute, name), number in sorted(self._counts.items()))
        return Extensions(listed=tuple(self._listed), counts=counts, total=self._total)


def _as_written(name: str) -> str:
    """A tag or attribute name as written: 'drake:joint' rather than '{http://drake...}joint'.

    The prefix is the first the document declares for the namespace.
    """
    if name.startswith('{'):
        namespace, _, local = name[1:].partition('}')
        declared = prefix(namespace)
        if declared:
            return cut(f'{declared}:{local}')
    return cut(name)


def _consequence(present: bool, suggestion: str, without: Mapping[str, str]) -> str:
    """', so <what the absence of `suggestion` means>' when it is absent and that is known."""
    meaning = without.get(suggestion)
    return '' if present or meaning is None else f', so {meaning}'


def _did_you_mean(name: str, suggestion: str, shown: str) -> str:
    case = ' (names are case-sensitive)' if name.lower() == suggestion.lower() else ''
    return f': did you mean {shown}?{case}'


def check_children(parent: Any, known: Collection[str], where: str, warnings: Warnings,
                   tally: ExtensionTally, *, known_count: int | None = None,
                   without: Mapping[str, str] = {}, extensions: bool = True) -> dict[str, str]:
    """Sort the children of `parent` whose tag is not `known`: near misses, extensions.

    A near miss is a warning; `without` says, per known name, what its absence means, for the
    warning to tell when it is absent. With `extensions` false the other children are content
    of `parent` that is not read (a sensor's <camera>): neither warned about nor recorded.
    `known` must be hashable (a tuple or frozenset). Returns the first near-miss warning made
    for each known name.

    Python looks at children only while the tally has room: past that, they are counted in C
    by the names seen in `parent` so far (as warnings or extensions, as those were), so that a
    million junk elements cost little time; children of other names are counted as
    extensions.
    """
    if known_count is None:
        known_count = count_children(parent, known) if known else 0
    # The parser drops comments and processing instructions and refuses entities: every
    # child is an element.
    unknown = len(parent) - known_count
    near_misses: dict[str, str] = {}
    if unknown <= 0:
        return near_misses
    examined = 0
    # Per tag looked at: its name as written, whether it is a near miss, how many were seen.
    seen: dict[str, list[Any]] = {}
    if tally.room > 0:
        for child in parent:
            tag = child.tag
            if tag in known or not isinstance(tag, str):
                continue
            examined += 1
            tally.room -= 1
            suggestion = tally.near_miss(tag, known)
            entry = seen.setdefault(tag, [_as_written(tag), suggestion is not None, 0])
            entry[2] += 1
            if suggestion is not None and (warnings.room > 0 or suggestion not in near_misses):
                present = parent.find(suggestion) is not None
                message = (f'unknown element <{shorten(tag)}>{line_of(child)} in {where} ignored'
                           f'{_consequence(present, suggestion, without)}'
                           f'{_did_you_mean(tag, suggestion, f"<{suggestion}>")}')
                warnings.append(message)
                near_misses.setdefault(suggestion, message)
            elif suggestion is not None:
                warnings.count(1)  # it would be dropped: not worth formatting
            elif extensions:
                tally.add(entry[0], False, where, line(child))
            if examined == unknown or tally.room <= 0:
                break
    rest = unknown - examined
    if rest:
        counted = sorted(seen.items(), key=lambda item: item[1][2], reverse=True)
        for tag, (name, is_near_miss, number) in counted[:_MAX_NAMES_COUNTED_IN_C]:
            more = count_children(parent, (tag,)) - number
            rest -= more
            if is_near_miss:
                warnings.count(more)
            elif extensions:
                tally.count(name, False, more)
        if extensions:
            tally.count_unnamed(rest)
    return near_misses


def check_attributes(element: Any, known: Collection[str], where: str, warnings: Warnings,
                     tally: ExtensionTally, *,
                     without: Mapping[str, str] = {}) -> dict[str, str]:
    """Sort the attributes of `element` that are not `known`: near misses, extensions.

    As check_children, for attributes.
    """
    attributes = element.attrib
    unknown = len(attributes) - sum(1 for name in known if name in attributes)
    near_misses: dict[str, str] = {}
    if unknown <= 0:
        return near_misses
    examined = 0
    for name in attributes:
        if tally.room <= 0 or examined == unknown:
            break
        if name in known:
            continue
        examined += 1
        tally.room -= 1
        suggestion = tally.near_miss(name, known)
        if suggestion is not None and warnings.room <= 0 and suggestion in near_misses:
            warnings.count(1)  # it would be dropped: not worth formatting
        elif suggestion is not None:
            message = (f'unknown attribute {quoted(name)}{line_of(element)} in {where} ignored'
                       f'{_consequence(suggestion in attributes, suggestion, without)}'
                       f'{_did_you_mean(name, suggestion, repr(suggestion))}')
            warnings.append(message)
            near_misses.setdefault(suggestion, message)
        else:
            tally.add(_as_written(name), True, where, line(element))
    tally.count_unnamed(unknown - examined)
    return near_misses


def describe_extensions(extensions: Extensions) -> str | None:
    """One line that counts the extensions by name, the first MAX_LISTED names; None if none."""
    if not extensions.total:
        return None
    shown = extensions.counts[:MAX_LISTED]
    parts = [f'{label} ×{number}' for label, number in shown]
    others = extensions.total - sum(number for _, number in shown)
    if others:
        parts.append(f'{others} more of other names')
    noun = 'extension' if extensions.total == 1 else 'extensions'
    return (f'{extensions.total} {noun} ignored (elements and attributes for other tools, '
            f'not used for tf): {", ".join(parts)}')
