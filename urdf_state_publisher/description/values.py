"""Numbers in attributes: finite floats, fixed-length lists of them, with messages naming both."""

from __future__ import annotations

import math
from typing import Any

from urdf_state_publisher.description.messages import quoted
from urdf_state_publisher.errors import DescriptionError

__all__ = ['finite', 'finite_attribute', 'numbers']


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
    """Exactly `count` finite numbers separated by white space."""
    parts = text.split()
    if len(parts) != count:
        raise DescriptionError(
            f'{context}: {attribute} needs {count} numbers, got {len(parts)} ({quoted(text)})')
    return tuple(finite(part, context, attribute) for part in parts)
