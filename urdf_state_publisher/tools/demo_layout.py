"""The demo's view laid out for its terminal: no number cut, and what is left out said.

Pure: the rows' values in, the lines out, for a size in columns and lines (None: a file or a
pipe, where everything is shown at full precision). When the table is wider than the terminal,
these steps are taken in this order until it fits (FITTING_STEPS):

1. fewer decimals: positions in centimetres (2 decimals of a metre), angles in whole degrees;
2. the type column left out;
3. the orientation columns (roll, pitch, yaw) left out;
4. the frame column narrowed to a third of the width: a deep tree's frames lose the start of
   their tree lines, replaced by '…' (the names are kept whole as long as they fit), and get
   back what the columns left out after this step leave;
5. the joint column left out (the frame names the joint's child);
6. the position columns (x, y, z) left out;
7. the frame column narrowed to what is left (MIN_FRAME_WIDTH at least).

Never a number is cut. When the rows do not all fit below the text above them, the first ones
are shown (the tree from its root). A last line says how many frames and which columns are not
shown, and what shows them. The text above the table wraps; on a terminal too short for it and
a row, it is cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import textwrap

from urdf_state_publisher.words import counted

__all__ = ['FITTING_STEPS', 'FrameRow', 'lay_out']

ELLIPSIS = '…'
MIN_FRAME_WIDTH = 4  # a frame name is never shortened below this (with its '…')


@dataclass(frozen=True)
class FrameRow:
    """One frame of the tree, as received: the text cells and the pose's numbers."""

    frame: str                    # the tree's prefix and the frame's name
    joint: str = ''
    kind: str = ''                # the joint's type, or sensor:TYPE
    value: str = ''               # the joint's value as text, with its unit
    position: tuple[float, float, float] | None = None  # metres, in the root frame
    angles: tuple[float, float, float] | None = None    # roll, pitch, yaw in degrees


# Each column: title, aligned left, the group it is left out with.
_COLUMNS = (('frame', True, ''), ('joint', True, 'joint'), ('type', True, 'type'),
            ('value', False, ''), ('x [m]', False, 'position'), ('y [m]', False, 'position'),
            ('z [m]', False, 'position'), ('roll°', False, 'orientation'),
            ('pitch°', False, 'orientation'), ('yaw°', False, 'orientation'))
# Fewer decimals (position, angle), a group of columns left out, or the frame column narrowed
# to a fraction of the width.
FITTING_STEPS = ((2, 0), 'type', 'orientation', 1 / 3, 'joint', 'position', 0.0)
_FULL_PRECISION = (3, 1)


def _cells(row: FrameRow, precision: tuple[int, int]) -> list[str]:
    metres, degrees = precision
    position = [f'{c:.{metres}f}' for c in row.position] if row.position else ['', '', '']
    angles = [f'{a:.{degrees}f}' for a in row.angles] if row.angles else ['', '', '']
    return [row.frame, row.joint, row.kind, row.value, *position, *angles]


def _table(rows: Sequence[FrameRow], precision: tuple[int, int], dropped: set[str]
           ) -> tuple[list[int], list[list[str]]]:
    shown = [i for i, (_, _, group) in enumerate(_COLUMNS) if group not in dropped]
    table = [[_COLUMNS[i][0] for i in shown]]
    table += [[cells[i] for i in shown] for cells in (_cells(r, precision) for r in rows)]
    return shown, table


def _width(table: list[list[str]]) -> int:
    return sum(max(len(row[i]) for row in table) + 2 for i in range(len(table[0]))) - 2


def _shorten(text: str, width: int) -> str:
    """`text` in `width` characters: its end kept, its start replaced by '…'."""
    return text if len(text) <= width else ELLIPSIS + text[len(text) - width + 1:]


def _fitted(rows: Sequence[FrameRow], columns: int | None
            ) -> tuple[list[int], list[list[str]], list[str]]:
    """The table's columns shown, its cells, and the groups of columns left out."""
    precision, dropped, frame_width = _FULL_PRECISION, set(), None

    def table() -> tuple[list[int], list[list[str]]]:
        shown, cells = _table(rows, precision, dropped)
        if frame_width is not None:
            for row in cells:
                row[0] = _shorten(row[0], frame_width)
        return shown, cells

    shown, cells = table()
    for step in FITTING_STEPS:
        if columns is None or _width(cells) <= columns:
            break
        if isinstance(step, tuple):
            precision = step
        elif isinstance(step, float):
            rest = _width([row[1:] for row in _table(rows, precision, dropped)[1]]) + 2
            frame_width = max(MIN_FRAME_WIDTH, len(_COLUMNS[0][0]),
                              int(columns * step) if step else columns - rest)
        else:
            dropped.add(step)
        shown, cells = table()
    if columns is not None and frame_width is not None:
        # Narrowed before columns were left out: the room they left goes back to the frames.
        rest = _width([row[1:] for row in _table(rows, precision, dropped)[1]]) + 2
        frame_width = max(frame_width, columns - rest)
        shown, cells = table()
    left_out = [group for group in ('joint', 'type', 'position', 'orientation')
                if group in dropped]
    return shown, cells, left_out


def _notice(hidden_rows: int, total_rows: int, left_out: list[str], notes_out: bool) -> str:
    """What the view leaves out, and what shows it."""
    parts = []
    if hidden_rows:
        parts.append(f'{hidden_rows} of {counted(total_rows, "frame")}')
    if left_out:
        parts.append(f'the {", ".join(left_out)} {"column" if len(left_out) == 1 else "columns"}')
    if notes_out:
        parts.append('the legend')
    return f'not shown: {" and ".join(parts)}; a larger terminal or a pipe shows them'


def lay_out(prose: Sequence[str], rows: Sequence[FrameRow],
            size: tuple[int, int] | None = None, notes: Sequence[str] = ()) -> list[str]:
    """The lines of the view: `prose` and `notes` (paragraphs), then the table of `rows`.

    `size`: (columns, lines) of the terminal; the view then takes at most `lines` lines of at
    most `columns` characters (a terminal of fewer than about 30 columns cuts a value). The
    `notes` (a legend) are the first thing left out when the rows do not all fit.
    """
    columns, height = size if size is not None else (None, None)
    shown, table, left_out = _fitted(rows, columns)
    widths = [max(len(row[k]) for row in table) for k in range(len(shown))]

    def wrapped(paragraphs: Sequence[str]) -> list[str]:
        if columns is None:
            return list(paragraphs)
        return [line for paragraph in paragraphs for line in
                (textwrap.wrap(paragraph, columns, subsequent_indent='  ') or [''])]

    text, count, notes_out = wrapped(prose), len(rows), False
    note_lines = wrapped(notes)
    if height is not None:
        everything = len(text) + len(note_lines) + 1 + count
        if left_out:
            everything += len(wrapped([_notice(0, count, left_out, False)]))
        if everything > height:
            notes_out = bool(notes)
            # The text, the table's title row and at least one row, then the notice.
            notice_lines = len(wrapped([_notice(count, count, left_out, notes_out)]))
            if len(text) + 1 + min(count, 1) + notice_lines > height:
                text = text[:max(0, height - 1 - min(count, 1) - notice_lines)]
            room = height - len(text) - 1
            count = max(0, min(count, room - notice_lines))
    lines = text + ([] if notes_out else note_lines)
    for row in table[:count + 1]:
        cells = [row[k].ljust(widths[k]) if _COLUMNS[shown[k]][1] else row[k].rjust(widths[k])
                 for k in range(len(shown))]
        lines.append('  '.join(cells).rstrip())
    if count < len(rows) or left_out or notes_out:
        lines += wrapped([_notice(len(rows) - count, len(rows), left_out, notes_out)])
    return lines
