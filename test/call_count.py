"""Work counted, not timed: how the cost of a call grows is asserted on what load cannot move."""

from __future__ import annotations

from collections.abc import Callable
import gc
import sys
from typing import Any


def python_steps(function: Callable[[], Any]) -> int:
    """The lines of Python and the builtin calls that one call of `function` executes.

    Lines, not only calls: a nested loop that calls nothing grows them too. Work done inside
    one builtin call (a C loop) is not counted. `function` runs once first, so that caches are
    filled as in a running node; the garbage collector is off while it is counted, so that the
    finalizers of other objects it happens to collect are not counted.
    """
    function()
    steps = 0

    def trace(frame, event, arg):
        nonlocal steps
        steps += event == 'line'
        return trace

    def profile(frame, event, arg) -> None:
        nonlocal steps
        steps += event == 'c_call'

    gc.collect()
    gc.disable()
    sys.settrace(trace)
    sys.setprofile(profile)
    try:
        function()
    finally:
        sys.setprofile(None)
        sys.settrace(None)
        gc.enable()
    return steps
