"""The demo's view laid out for a terminal's size: pure, in-process, at fixed sizes."""

import re

import pytest

from urdf_state_publisher.tools.demo_layout import FrameRow, lay_out

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

PROSE = ['urdf_state_publisher demo: node publishing robot on /tf (8 moving joints, 50.0 Hz) '
         'and /tf_static (5 fixed frames + 2 sensors); Ctrl-C to quit', '']
TITLES = ['frame', 'joint', 'type', 'value', 'x [m]', 'y [m]', 'z [m]', 'roll°', 'pitch°',
          'yaw°']


def rows(count: int, depth_every: int = 3) -> list[FrameRow]:
    """`count` frames of a tree, each with a pose whose numbers need their width: -180.0°."""
    result = []
    for k in range(count):
        prefix = '  ' * (k // depth_every) + ('└ ' if k else '')
        result.append(FrameRow(f'{prefix}link_{k}', f'joint_number_{k}', 'revolute',
                               f'{-180.0 + k:.1f}°', (-1.2345 - k, 0.5 + k / 1000, 10.25),
                               (-180.0 + k, 45.25, 179.96)))
    return result


def table_of(lines: list[str]) -> tuple[list[str], list[list[str]], list[str]]:
    """The column titles, each row's cells (split at runs of 2 spaces), the lines after."""
    start = next(k for k, line in enumerate(lines) if line.startswith('frame '))
    end = next((k for k, line in enumerate(lines) if line.startswith('not shown')), len(lines))
    # 'x [m]' holds one space: the titles are known words, found in order.
    titles = [t for t in TITLES if t in lines[start]]
    # The frame cell: the tree's lines and spaces (maybe shortened to '…'), then the name.
    frame = re.compile(r'[ …│├└]*\S+')
    cells = [[frame.match(line)[0], *re.split(r' {2,}', line[frame.match(line).end():].strip())]
             for line in lines[start + 1:end]]
    return titles, cells, [line.strip() for line in lines[end:]]


def check_numbers(titles: list[str], cells: list[list[str]], all_rows: list[FrameRow],
                  metres: int, degrees: int) -> None:
    """Every number shown whole: the true value rounded to the stated decimals, never cut."""
    for row, shown in zip(all_rows, cells):
        expected = {'x [m]': row.position[0], 'y [m]': row.position[1],
                    'z [m]': row.position[2], 'roll°': row.angles[0], 'pitch°': row.angles[1],
                    'yaw°': row.angles[2]}
        by_title = dict(zip(titles, shown[-len(titles):] if len(shown) == len(titles)
                            else shown))
        assert by_title['value'] == row.value
        for title, value in expected.items():
            if title in by_title:
                decimals = metres if title.endswith('[m]') else degrees
                assert by_title[title] == f'{value:.{decimals}f}', (title, shown)


def test_a_file_or_a_pipe_gets_every_row_and_column_at_full_precision():
    frames = rows(83)
    lines = lay_out(PROSE, frames)
    titles, cells, after = table_of(lines)
    assert titles == TITLES and len(cells) == 83 and after == []
    check_numbers(titles, cells, frames, 3, 1)


def test_120_by_40_shows_every_column_and_says_which_rows_are_left_out():
    frames = rows(83, depth_every=20)
    lines = lay_out(PROSE, frames, (120, 40))
    assert len(lines) <= 40 and max(map(len, lines)) <= 120
    titles, cells, after = table_of(lines)
    assert titles == TITLES
    check_numbers(titles, cells, frames, 3, 1)
    assert cells[0][0] == 'link_0' and len(cells) < 83
    assert ' '.join(after) == (f'not shown: {83 - len(cells)} of 83 frames; a larger terminal '
                               'or a pipe shows them')


def test_fewer_decimals_come_before_leaving_a_column_out():
    frames = rows(10)
    full = lay_out(PROSE, frames)
    width = max(len(line) for line in full[len(PROSE):])  # the table's, at full precision
    lines = lay_out(PROSE, frames, (width - 1, 40))
    titles, cells, after = table_of(lines)
    assert titles == TITLES and after == []
    check_numbers(titles, cells, frames, 2, 0)


def test_80_by_24_leaves_columns_out_in_the_stated_order_and_names_them():
    frames = rows(16)
    lines = lay_out(PROSE, frames, (80, 23))  # the terminal's 24 lines, but the cursor's
    assert len(lines) <= 23 and max(map(len, lines)) <= 80
    titles, cells, after = table_of(lines)
    # Type first, then the orientation; the frame, value and position stay.
    assert titles[0] == 'frame' and 'value' in titles and 'x [m]' in titles
    assert 'type' not in titles and 'roll°' not in titles
    left_out = [group for group, title in (('joint', 'joint'), ('type', 'type'),
                                           ('position', 'x [m]'), ('orientation', 'roll°'))
                if title not in titles]
    check_numbers(titles, cells, frames, 2, 0)
    hidden = 16 - len(cells)
    said = ' '.join(after)
    assert said.startswith('not shown: ' + (f'{hidden} of 16 frames and ' if hidden else ''))
    assert f'the {", ".join(left_out)} columns; a larger terminal or a pipe shows them' in said


def test_a_tiny_terminal_gets_what_fits_and_the_count_of_the_rest():
    frames = rows(83)
    lines = lay_out(PROSE, frames, (40, 10))
    assert len(lines) <= 10 and max(map(len, lines)) <= 40
    titles, cells, after = table_of(lines)
    assert titles == ['frame', 'value']
    assert 1 <= len(cells) and all(cell[-1] == frame.value for cell, frame in zip(cells, frames))
    assert ' '.join(after).startswith(f'not shown: {83 - len(cells)} of 83 frames and the joint, '
                                      'type, position, orientation columns')


def test_a_deep_trees_frames_keep_their_names_and_lose_their_tree_lines():
    frames = rows(12, depth_every=1)  # link_11 at 22 spaces of tree
    lines = lay_out(PROSE, frames, (60, 30))
    assert max(map(len, lines)) <= 60
    _, cells, _ = table_of(lines)
    assert cells[11][0].startswith('…') and cells[11][0].endswith('└ link_11')


def test_the_legend_is_left_out_before_a_row_and_said_to_be():
    legend = ['Values: * = mimic joint; (limit) = clamped.', '']
    frames = rows(6, depth_every=20)
    # Room for everything: the legend, above the table.
    roomy = lay_out(PROSE, frames, (120, 40), legend)
    assert legend[0] in roomy and not any(line.startswith('not shown') for line in roomy)
    # One line short of everything (prose, legend, title row, 6 rows): the legend goes, no row.
    height = len(roomy) - 1
    short = lay_out(PROSE, frames, (120, height), legend)
    assert len(short) <= height and legend[0] not in short
    _, cells, after = table_of(short)
    assert len(cells) == 6
    assert after == ['not shown: the legend; a larger terminal or a pipe shows them']
