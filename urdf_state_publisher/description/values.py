"""Numbers in attributes: finite floats, fixed-length lists of them, with messages naming both."""

from __future__ import annotations

import math
from typing import Any

from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.quoting import quoted

__all__ = ['finite', 'finite_attribute', 'numbers']

_C_WHITESPACE = '\t\n\v\f\r'  # and ' ', which the split has taken


def finite(value: Any, context: str, attribute: str) -> float:
    """`value` as a finite float; DescriptionError naming `context` and `attribute` if not."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DescriptionError(
            f'{context}: {attribute} is not a number ({quoted(value)})') from None
    if not math.isfinite(number):
        raise DescriptionError(
            f'{context}: {attribute} is not finite ({number}); give a finite number')
    return number


def finite_attribute(element: Any, attribute: str, context: str,
                     default: float | None = None) -> float:
    """The finite number in `element`'s `attribute`; `default` if absent, else an error."""
    text = element.get(attribute)
    if text is None:
        if default is None:
            raise DescriptionError(
                f'{context} has no {attribute} attribute; add {attribute}="..."')
        return default
    return finite(text, context, attribute)


def numbers(text: str, count: int, context: str, attribute: str) -> tuple[float, ...]:
    r"""Exactly `count` finite numbers separated by spaces, read as urdfdom reads them.

    urdfdom splits on spaces alone and reads each piece with a C++ stream that must reach its
    end: white space may lead a piece (the stream skips it) but not end it, so '1\t2' and
    '1\n' are refused; '_' is no digit separator there.
    """
    parts = [part for part in text.split(' ') if part]
    if len(parts) != count:
        raise DescriptionError(
            f'{context}: {attribute} needs {count} numbers, got {len(parts)} ({quoted(text)})')
    for part in parts:
        if part[-1] in _C_WHITESPACE or '_' in part:
            raise DescriptionError(f'{context}: {attribute} holds {quoted(part)}, not a number; '
                                   'separate the numbers with spaces')
    return tuple(finite(part, context, attribute) for part in parts)
