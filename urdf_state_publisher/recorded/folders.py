"""A folder given to urdf_state_publisher_bag: the recordings in it, and what else it holds.

Decided from names, before a recording is opened. Each entry of the folder is one of:

- a recording: a rosbag2 bag (a folder with metadata.yaml), a lone .mcap or .db3 file, a ROS 1
  .bag file, or a folder that holds the pieces of one split ROS 1 recording;
- a piece of a ROS 1 recording that `rosbag record --split` made. rosbag's recorder
  (ros_comm's recorder.cpp, updateFilenames) names each piece PREFIX, then the local time the
  piece was started if the name is dated (`-o`, or no name given: YYYY-MM-DD-HH-MM-SS), then
  the piece's number, joined by `_`: `run_0.bag`, `run_1.bag`, or
  `run_2026-11-27-10-00-00_0.bag`, `run_2026-11-27-10-05-00_1.bag` (each piece has its own
  time). With `--max-splits` the oldest pieces are deleted, so the first kept may be numbered
  above 0. The pieces of one prefix are one recording: undated, all of them; dated, those
  numbered one after the other in the order they were started. It is named after its first
  piece without the number; a single file so named is a recording of its own, named after
  itself;
- not read, with why: anything else (notes, a description, a file `rosbag record` has not
  closed (`.bag.active`), the copy `rosbag reindex` keeps (`NAME.orig.bag` beside `NAME.bag`),
  a folder that is no recording).

A folder is itself one recording when it is a rosbag2 bag or when the only recordings it holds
are the pieces of one split recording: its output is then OUTPUT itself. Any other folder is a
batch: one output per recording, under OUTPUT, named after the recording.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import re

__all__ = ['FolderContents', 'folder_contents', 'is_rosbag2_folder', 'NotRead', 'output_name',
           'Recording', 'rosbag2_files_without_metadata', 'SplitRecording']

DESCRIPTION_SUFFIXES = ('.urdf', '.xacro')
# A split piece's name: what comes before its number, then `_` and its number; before the
# number, the time the piece was started if the name is dated.
_PIECE = re.compile(r'^(?P<head>.+)_(?P<number>\d+)$')
_STARTED = re.compile(r'^(?:(?P<prefix>.*)_)?(?P<time>\d{4}(?:-\d{2}){5})$')


@dataclass(frozen=True)
class SplitRecording:
    """The .bag files of one ROS 1 recording that `rosbag record --split` made, in order."""

    name: str  # its first piece's name without the piece number: its output's name
    pieces: tuple[Path, ...]
    missing: tuple[int, ...] = ()  # the numbers between its first and last piece not there

    def __str__(self) -> str:
        """Its pieces, as a user finds them in the folder."""
        return f'{self.pieces[0]} ... {self.pieces[-1].name}'


Recording = Path | SplitRecording


@dataclass(frozen=True)
class NotRead:
    """An entry of a folder that is not read, and why."""

    name: str
    why: str


@dataclass(frozen=True)
class FolderContents:
    """A folder's recordings and the entries not read; `whole`: the folder is one recording."""

    recordings: tuple[Recording, ...]
    not_read: tuple[NotRead, ...]
    whole: bool


def is_rosbag2_folder(path: Path) -> bool:
    return path.is_dir() and (path / 'metadata.yaml').exists()


def rosbag2_files_without_metadata(path: Path) -> list[Path]:
    """The storage files of a rosbag2 bag that lost its metadata.yaml, named as rosbag2 names them.

    rosbag2 names a bag's files after its folder, numbered: `run/run_0.db3`, `run/run_1.mcap`
    (rosbags, unnumbered: `run/run.db3`). What `ros2 bag record` leaves when it is killed before
    it closes.
    """
    pattern = re.compile(rf'^{re.escape(path.name)}(_\d+)?\.(db3|mcap)$')
    return sorted(entry for entry in path.iterdir() if pattern.match(entry.name))


def folder_contents(path: Path) -> FolderContents:
    """The recordings in the folder `path` (not a rosbag2 bag) and what else it holds."""
    entries = sorted(path.iterdir())
    names = {entry.name for entry in entries}
    recordings: list[tuple[str, Recording]] = []
    not_read: list[NotRead] = []
    bags = []
    for entry in entries:
        name = entry.name
        if entry.is_dir():
            if is_rosbag2_folder(entry):
                recordings.append((name, entry))
            elif rosbag2_files_without_metadata(entry):
                not_read.append(NotRead(name, 'a rosbag2 bag without its metadata.yaml (ros2 '
                                        'bag record did not close it): write it with `ros2 bag '
                                        f'reindex {entry}`'))
            else:
                inner = folder_contents(entry)
                if inner.whole:
                    recordings.append((name, entry))
                else:
                    held = (f'a folder of {len(inner.recordings)} recordings'
                            if inner.recordings else 'a folder that holds no recording')
                    not_read.append(NotRead(name, f'{held}; give it as an input of its own'))
        elif entry.suffix in ('.mcap', '.db3'):
            recordings.append((entry.stem, entry))
        elif entry.suffix == '.bag':
            original = name.removesuffix('.orig.bag') + '.bag'
            if name.endswith('.orig.bag') and original in names:
                not_read.append(NotRead(name, f'the copy of {original} that rosbag kept when '
                                        'it changed it (reindex, compress, decompress)'))
            else:
                bags.append(entry)
        elif name.endswith('.bag.active'):
            not_read.append(NotRead(name, 'a ROS 1 recording rosbag record has not closed (it '
                                    'is still recording, or was stopped before it could): once '
                                    f'closed, or after `rosbag reindex {name}` and renaming it '
                                    'without .active, give it as an input'))
        elif name.endswith(DESCRIPTION_SUFFIXES):
            not_read.append(NotRead(name, 'a robot description, not a recording; give it with '
                                    '--description'))
        else:
            not_read.append(NotRead(name, 'not a recording'))
    recordings += [(r.name if isinstance(r, SplitRecording) else r.stem, r)
                   for r in _ros1_recordings(bags)]
    recordings.sort(key=lambda item: item[0])
    found = tuple(recording for _, recording in recordings)
    whole = len(found) == 1 and isinstance(found[0], SplitRecording)
    return FolderContents(found, tuple(not_read), whole)


def _ros1_recordings(files: list[Path]) -> list[Recording]:
    """The ROS 1 recordings of a folder's .bag files: each file, or the pieces of a split one."""
    lone: list[Recording] = []
    pieces: dict[tuple[str, bool], list[tuple[str, int, Path]]] = {}
    for file in files:
        match = _PIECE.match(file.stem)
        if match is None:
            lone.append(file)
            continue
        dated = _STARTED.match(match['head'])
        prefix, time = (dated['prefix'] or '', dated['time']) if dated else (match['head'], None)
        pieces.setdefault((prefix, time is not None), []).append(
            (time or '', int(match['number']), file))
    for (_, dated), started in pieces.items():
        # In the order they were started. A number that does not increase starts a recording;
        # with dated names, one that does not follow the last: --max-splits deletes the first
        # pieces of a recording, so a recording of the same prefix may go on from a number
        # above the last of the one before. Undated, a prefix names one recording (another
        # would have written over its pieces), a piece missing from it is named.
        started.sort()
        groups: list[list[tuple[str, int, Path]]] = []
        for piece in started:
            if groups and piece[1] > groups[-1][-1][1] and (
                    not dated or piece[1] == groups[-1][-1][1] + 1):
                groups[-1].append(piece)
            else:
                groups.append([piece])
        for group in groups:
            if len(group) == 1:
                lone.append(group[0][2])
                continue
            numbers = [number for _, number, _ in group]
            lone.append(SplitRecording(
                name=_PIECE.match(group[0][2].stem)['head'],
                pieces=tuple(file for _, _, file in group),
                missing=tuple(sorted(set(range(numbers[0], numbers[-1] + 1)) - set(numbers)))))
    return lone


def output_name(recording: Recording) -> str:
    """The name of a recording's output in a batch: the recording's, without its suffix."""
    if isinstance(recording, SplitRecording):
        return recording.name
    if recording.is_file():
        return recording.name.removesuffix(recording.suffix)
    return recording.name
