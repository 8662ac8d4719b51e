"""How a stop signal stops a bag run: at once, but not its clean-up, nor a run that is done.

The bag command's stop signals (Ctrl-C, SIGTERM, SIGHUP) raise KeyboardInterrupt where the run
is, and its clean-up then removes what it had written (recorded.run). People press Ctrl-C again
when the first seems slow, and a job runner may send SIGTERM to a process group (the workers)
and to the command that then passes it on: a second KeyboardInterrupt inside the clean-up would
stop it halfway, and leave a staging folder, or the old output that --overwrite had set aside,
behind. Within `stops_deferred()`, a stop signal is noted instead, and raised when the block
is done.

A run is done once its output is in place. A stop from then on would only lose its summary
(and a batch would count a whole output as not written): it is noted, and the caller, once it
has reported the run, asks `stopped_after_done()` and ends by the stop. `begin()` starts the
next piece of work, `reset()` a command called in process. The handlers that call `stop()`
are the command's (recorded/command.py): its main process's, and a batch worker's during a run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ['begin', 'done', 'reset', 'stop', 'stopped_after_done', 'stops_deferred']

# How many stops_deferred blocks the process is in; whether the work under way is done; whether
# a stop came in a block or once the work was done.
_depth = 0
_done = False
_noted = False


def stop() -> None:
    """What a stop signal's handler does: raise KeyboardInterrupt, or note it for later."""
    global _noted
    if _depth or _done:
        _noted = True
        return
    raise KeyboardInterrupt


@contextmanager
def stops_deferred() -> Iterator[None]:
    """A block that a stop signal does not cut: the stop is raised at its end instead.

    Unless the block marked the work `done()`: the stop then waits for the caller.
    """
    global _depth, _noted
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _noted and not _done:
            _noted = False
            # The stop goes first: whatever the block raised is its context.
            raise KeyboardInterrupt  # noqa: B012 - a stop, not an error to lose


def reset() -> None:
    """A fresh start: no work done, no stop noted (the stops before it were another call's)."""
    global _done, _noted
    _done = _noted = False


def begin() -> None:
    """Work starts that a stop interrupts; a stop noted after the last work was done stops it."""
    global _done, _noted
    _done = False
    if _noted:
        _noted = False
        raise KeyboardInterrupt


def done() -> None:
    """The work under way is done: from here on a stop waits for `stopped_after_done()`.

    A run calls it inside `stops_deferred()`, with the rename that puts its output in place, so
    that a stop lands either before the rename (and interrupts the run) or after it.
    """
    global _done
    _done = True


def stopped_after_done() -> bool:
    """Whether a stop came once the work was done (then it has been taken)."""
    global _noted
    stopped, _noted = _noted, False
    return stopped
