"""How a stop signal stops a bag run: at once, but never in the middle of its clean-up.

The bag command's stop signals (Ctrl-C, SIGTERM, SIGHUP) raise KeyboardInterrupt where the run
is, and its clean-up then removes what it had written (bag_run). People press Ctrl-C again
when the first seems slow, and a job runner may send SIGTERM to a process group (the workers)
and to the command that then passes it on: a second KeyboardInterrupt inside the clean-up would
stop it halfway, and leave a staging folder, or the old output that --overwrite had set aside,
behind. Within `stops_deferred()`, a stop signal is noted instead, and raised when the block
is done. The handlers that call `stop()` are the command's (bag.py): its main process's, and
a batch worker's during a run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ['stop', 'stops_deferred']

# How many stops_deferred blocks the process is in; whether a stop came in one of them.
_depth = 0
_deferred = False


def stop() -> None:
    """What a stop signal's handler does: raise KeyboardInterrupt, or note it for later."""
    global _deferred
    if _depth:
        _deferred = True
        return
    raise KeyboardInterrupt


@contextmanager
def stops_deferred() -> Iterator[None]:
    """A block that a stop signal does not cut: the stop is raised at its end instead."""
    global _depth, _deferred
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _deferred:
            _deferred = False
            # The stop goes first: whatever the block raised is its context.
            raise KeyboardInterrupt  # noqa: B012 - a stop, not an error to lose
