"""A batch's progress while it runs: runs done, running and left, and its throughput.

What the bag command shows on stderr from a batch's first second to its table: on a terminal one
line redrawn in place; to a file or a pipe (a CI log) plain lines, one when the counts change
and one every PLAIN_PERIOD_S without a change, so that a log says the batch is alive without
filling up. Pure: the caller gives the time and the counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO

from urdf_state_publisher.words import counted

__all__ = ['BatchProgress', 'BatchState', 'PLAIN_PERIOD_S', 'PREFIX', 'PROGRESS_PERIOD_S',
           'progress_text']

PROGRESS_PERIOD_S = 1.0  # a batch's progress is looked at this often

PREFIX = 'batch: '        # each progress line's start, apart from the command's other lines
PLAIN_PERIOD_S = 30.0     # a plain line at least this often, changed or not
REDRAW = '\r\x1b[K'       # back to the line's start, the line cleared


@dataclass(frozen=True)
class BatchState:
    """Where a batch stands: its runs by state, and what the runs done read."""

    total: int
    done: int = 0
    running: int = 0
    not_ok: int = 0            # of the runs done: failed, not fitting or with findings
    recorded_seconds: float = 0.0  # of bag, in the runs done

    @property
    def left(self) -> int:
        """Runs neither done nor running: not started yet."""
        return self.total - self.done - self.running


def progress_text(state: BatchState, elapsed: float) -> str:
    """The progress line for `state`, `elapsed` seconds after the batch started.

    The throughput is the runs done per second and the seconds of recording they held per
    second, since the start; there is none to say before the first run is done.
    """
    not_ok = f' ({state.not_ok} not OK)' if state.not_ok else ''
    text = (f'{PREFIX}{state.done} of {counted(state.total, "run")} done{not_ok}, '
            f'{state.running} running, {state.left} left; {elapsed:.0f} s')
    if state.done and elapsed > 0:
        text += (f', {_rate(state.done / elapsed)} runs/s, '
                 f'{state.recorded_seconds / elapsed:.1f} s of bag per second')
    return text


def _rate(per_second: float) -> str:
    """Two significant digits or more, never an exponent: 0.042, 0.85, 3.5, 390."""
    return f'{per_second:.0f}' if per_second >= 10 else f'{per_second:.2g}'


def _within(text: str, width: int) -> str:
    """`text` in `width` characters, never a number cut if it can be helped.

    Its last parts (', '-separated) are left out; it is cut only if its first alone is too long.
    """
    parts = text.split(', ')
    while len(parts) > 1 and len(', '.join(parts)) > width:
        parts.pop()
    return ', '.join(parts)[:max(width, 0)]


class BatchProgress:
    """Shows a batch's progress on `stream`, as a terminal or a log wants it."""

    def __init__(self, stream: TextIO, terminal: bool, start: float, columns: int):
        """Progress on `stream`, from `start` (the caller's clock, seconds).

        `columns`: a terminal's width, which the redrawn line must not reach (it would wrap, and
        a redraw then leaves the wrapped part behind).
        """
        self.stream, self.terminal, self.start = stream, terminal, start
        self.columns = columns
        self._shown: tuple[int, int] | None = None  # (done, running) of the last plain line
        self._shown_at = start

    def show(self, state: BatchState, now: float) -> None:
        """The progress at `now` (the caller's clock, seconds): drawn, or printed if due."""
        text = progress_text(state, now - self.start)
        if self.terminal:
            self.stream.write(REDRAW + _within(text, self.columns - 1))
        else:
            counts = (state.done, state.running)
            if counts == self._shown and now - self._shown_at < PLAIN_PERIOD_S:
                return
            self._shown, self._shown_at = counts, now
            self.stream.write(text + '\n')
        self.stream.flush()

    def clear(self) -> None:
        """Before the table: a terminal's progress line is cleared, a log's lines stay."""
        if self.terminal:
            self.stream.write(REDRAW)
            self.stream.flush()
