"""Work counted, not timed: how the cost of a call grows is asserted on what load cannot move."""

from __future__ import annotations

from collections.abc import Callable
import sys
from typing import Any


def python_calls(function: Callable[[], Any]) -> int:
    """How many Python and builtin functions one call of `function` calls.

    `function` runs once first, so that caches are filled as in a running node.
    """
    function()
    calls = 0

    def count(frame, event, arg) -> None:
        nonlocal calls
        calls += event in ('call', 'c_call')

    sys.setprofile(count)
    try:
        function()
    finally:
        sys.setprofile(None)
    return calls
