"""Bounded error and warning text: names cut short, lists capped, warnings counted past a limit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from urdf_state_publisher.description.source import line

_MAX_DETAIL = 300
# Lists in messages (roots, cycles, ...) name at most this many items, then say how many more.
MAX_LISTED = 10
# At most this many warnings are kept; the rest are counted in one last warning.
_MAX_WARNINGS = 50


def shorten(text: str) -> str:
    """Text on one line, cut short if long."""
    text = ' '.join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL] + '...'


def listing(items: Sequence[str]) -> str:
    """Comma-separated items, at most MAX_LISTED of them, then how many more there are."""
    listed = ', '.join(items[:MAX_LISTED])
    rest = len(items) - MAX_LISTED
    return listed if rest <= 0 else f'{listed}, ... and {rest} more'


def line_of(element: Any) -> str:
    """' (line N)' for an element whose line is known, else ''."""
    number = line(element)
    return f' (line {number})' if number else ''


def lines_of(first: Any, second: Any) -> str:
    """' (lines N and M)' for two elements whose lines are known, else ''."""
    lines = [line(e) for e in (first, second)]
    return f' (lines {lines[0]} and {lines[1]})' if all(lines) else ''


class Warnings:
    """Keeps the first _MAX_WARNINGS warnings and only counts the rest.

    A hostile description can hold millions of junk elements: storing a warning for each
    would cost gigabytes, and the node logs every warning it is given.
    """

    def __init__(self) -> None:
        self._kept: list[str] = []
        self._dropped = 0

    @property
    def room(self) -> int:
        """How many more warnings are kept; callers may skip formatting the others."""
        return _MAX_WARNINGS - len(self._kept)

    def append(self, message: str) -> None:
        if self.room > 0:
            self._kept.append(message)
        else:
            self._dropped += 1

    def extend(self, messages: Iterable[str]) -> None:
        for message in messages:
            self.append(message)

    def count(self, number: int) -> None:
        """Count warnings that are not formatted because they would be dropped anyway."""
        self._dropped += number

    def result(self) -> tuple[str, ...]:
        """The kept warnings, then one that says how many more there were, if any."""
        if not self._dropped:
            return tuple(self._kept)
        return (*self._kept, f'... and {self._dropped} more warnings')


def describe_exception(exc: BaseException) -> str:
    """An exception's type and message on one line, cut short if long."""
    return shorten(f'{type(exc).__name__}: {exc}' if str(exc) else type(exc).__name__)
