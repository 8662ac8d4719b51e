"""Names and values quoted in messages, cut short.

An error never carries much of a (possibly hostile) document or argument. Nothing here imports
beyond the standard library, so that the checks of parameters, which run before anything is
loaded, quote as the description's reader does.
"""

from __future__ import annotations

__all__ = ['cut', 'quoted']

# Quoted names and values are cut to this length.
_MAX_QUOTED = 80


def cut(value: object) -> str:
    """A name or value for a message, cut short if long."""
    text = str(value)
    return text if len(text) <= _MAX_QUOTED else text[:_MAX_QUOTED] + '...'


def quoted(value: object) -> str:
    """Quote a name or value for a message, cut short if long."""
    return repr(cut(value))
