"""urdf_state_publisher_bag on a folder as people keep one: every recording in it, the rest named.

The recordings are written here with rosbags. What a folder holds is stated by the test (which
files are one recording, which are not recordings at all); the split ROS 1 names are those
rosbag's recorder gives (ros_comm's recorder.cpp: PREFIX, the start time of each piece when
dated, the piece's number, joined by `_`).
"""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

from bag_fixtures import error_line
from conftest import SAMPLE_URDF
import pytest
from rosbags.rosbag2 import Reader
from test_bag_ros1 import write_ros1, write_ros2

from urdf_state_publisher.recorded.folders import folder_contents, SplitRecording

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed


def run(*arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                           *map(str, arguments), '--description', str(SAMPLE_URDF)],
                          capture_output=True, text=True, timeout=300)


def joint_states(bag: Path) -> list[int]:
    """The log times of a bag's /joint_states."""
    with Reader(bag) as reader:
        chosen = [c for c in reader.connections if c.topic == '/joint_states']
        return [log_ns for _, log_ns, _ in reader.messages(chosen)]


def test_a_folder_of_mixed_recordings_converts_each_and_names_the_rest(tmp_path):
    day = tmp_path / 'day'
    day.mkdir()
    write_ros2(day / 'arm_run', range(30))                          # a rosbag2 bag
    write_ros2(tmp_path / 'lone', range(40))                        # its file, lone: an .mcap
    [mcap] = (tmp_path / 'lone').glob('*.mcap')
    mcap.rename(day / 'morning.mcap')
    write_ros1(day / 'afternoon.bag', range(50), extra=False)       # a ROS 1 bag
    (day / 'notes.txt').write_text('the gripper was changed at noon')
    (day / 'robot.urdf').write_text(SAMPLE_URDF.read_text())
    write_ros1(day / 'evening.bag.active', range(5), extra=False)  # not closed
    result = run(day, tmp_path / 'out')
    assert result.returncode == 0, result.stdout + result.stderr
    out = tmp_path / 'out'
    assert sorted(p.name for p in out.iterdir()) == ['afternoon', 'arm_run', 'morning',
                                                     'runs.csv']
    # Each output holds its own recording's states, all of them.
    assert [len(joint_states(out / name)) for name in ('arm_run', 'morning', 'afternoon')] == [
        30, 40, 50]
    notes = {line.split(': ', 1)[0]: line for line in result.stdout.splitlines()
             if ': not read: ' in line}
    assert sorted(notes) == ['evening.bag.active', 'notes.txt', 'robot.urdf']
    assert notes['notes.txt'] == 'notes.txt: not read: not a recording'
    assert '--description' in notes['robot.urdf']
    assert 'rosbag reindex' in notes['evening.bag.active']


def test_a_split_recording_is_known_by_its_names_beside_an_unrelated_bag(tmp_path):
    day = tmp_path / 'day'
    day.mkdir()
    # `rosbag record -O run --split`: run_0.bag, run_1.bag, run_2.bag; then another recording.
    for number, states in enumerate((range(0, 30), range(30, 60), range(60, 90))):
        write_ros1(day / f'run_{number}.bag', states, extra=False)
    write_ros1(day / 'calibration.bag', range(200, 220), extra=False)
    result = run(day, tmp_path / 'out')
    assert result.returncode == 0, result.stdout + result.stderr
    out = tmp_path / 'out'
    assert sorted(p.name for p in out.iterdir()) == ['calibration', 'run', 'runs.csv']
    # One run over the three pieces, in log-time order: every state, once.
    times = joint_states(out / 'run')
    assert len(times) == 90 and times == sorted(times)
    assert len(joint_states(out / 'calibration')) == 20
    assert 'run: 3 pieces of one recording split by rosbag record --split' in result.stdout


def test_dated_split_names_are_one_recording_per_start(tmp_path):
    # `rosbag record -o run --split`: each piece named with the time it was started; a second
    # recording with the same prefix starts its numbers again. --max-splits deleted the first
    # pieces of the second one.
    names = ['run_2026-11-27-10-00-00_0.bag', 'run_2026-11-27-10-05-00_1.bag',
             'run_2026-11-27-11-00-00_4.bag', 'run_2026-11-27-11-05-00_5.bag',
             'run_2026-11-27-12-00-00.bag', '2026-11-27-13-00-00_0.bag']
    for name in names:
        (tmp_path / name).touch()
    found = folder_contents(tmp_path)
    split = [r for r in found.recordings if isinstance(r, SplitRecording)]
    assert [(r.name, [p.name for p in r.pieces]) for r in split] == [
        ('run_2026-11-27-10-00-00', names[0:2]), ('run_2026-11-27-11-00-00', names[2:4])]
    lone = sorted(r.name for r in found.recordings if not isinstance(r, SplitRecording))
    assert lone == ['2026-11-27-13-00-00_0.bag', 'run_2026-11-27-12-00-00.bag']
    assert not found.whole and found.not_read == ()


def test_a_folder_of_one_split_recording_is_that_recording(tmp_path):
    folder = tmp_path / 'split'
    folder.mkdir()
    write_ros1(folder / 'run_0.bag', range(0, 20), extra=False)
    write_ros1(folder / 'run_1.bag', range(20, 40), extra=False)
    (folder / 'README').write_text('robot 3, hall B')
    result = run(folder, tmp_path / 'out')
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(joint_states(tmp_path / 'out')) == 40  # OUTPUT is the bag itself
    assert result.stdout.splitlines()[-1] == 'README: not read: not a recording'


def test_a_folder_of_one_bag_is_a_batch_of_one(tmp_path):
    # Not a split recording for being the only .bag there: its output is named after it.
    folder = tmp_path / 'data'
    folder.mkdir()
    write_ros1(folder / 'robot.bag', range(10), extra=False)
    result = run(folder, tmp_path / 'out')
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(joint_states(tmp_path / 'out' / 'robot')) == 10


def test_the_backup_rosbag_keeps_is_not_read_twice(tmp_path):
    folder = tmp_path / 'data'
    folder.mkdir()
    write_ros1(folder / 'robot.bag', range(10), extra=False)
    write_ros1(folder / 'robot.orig.bag', range(10), extra=False)  # rosbag reindex's copy
    found = folder_contents(folder)
    assert found.recordings == (folder / 'robot.bag',)
    [note] = found.not_read
    assert note.name == 'robot.orig.bag' and 'robot.bag' in note.why


def test_a_folder_of_recordings_given_to_run_bag_is_named_with_what_to_do(tmp_path):
    folder = tmp_path / 'data'
    folder.mkdir()
    write_ros1(folder / 'a.bag', range(10), extra=False)
    write_ros1(folder / 'b.bag', range(10), extra=False)
    # A folder of two recordings given where one bag is written: named, with what to do.
    result = subprocess.run(
        [sys.executable, '-c', 'import sys; from pathlib import Path; '
         'from urdf_state_publisher.recorded.run import run_bag, RunOptions; '
         f'print(run_bag(Path({str(folder)!r}), Path({str(tmp_path / "out")!r}), '
         'RunOptions(live=False)).error)'], capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == (
        f'{folder}: a folder of recordings, not one recording (a rosbag2 bag, or the pieces of '
        'one split ROS 1 recording): give each recording, or give the folder to '
        'urdf_state_publisher_bag as its only INPUT and a folder as OUTPUT, one output each'
    ), result.stderr


def test_a_folder_with_nothing_to_read_is_one_line(tmp_path):
    (tmp_path / 'data').mkdir()
    (tmp_path / 'data' / 'notes.txt').write_text('no recording')
    line = error_line(run(tmp_path / 'data', tmp_path / 'out'))
    assert 'not a recording, nor a folder of recordings' in line
    assert not (tmp_path / 'out').exists()


def test_an_undated_split_recording_missing_a_piece_is_one_recording_that_names_it(tmp_path):
    for name in ('run_0.bag', 'run_1.bag', 'run_3.bag'):
        (tmp_path / name).touch()
    [recording] = folder_contents(tmp_path).recordings
    assert isinstance(recording, SplitRecording)
    assert (recording.name, recording.missing) == ('run', (2,))
    assert [p.name for p in recording.pieces] == ['run_0.bag', 'run_1.bag', 'run_3.bag']


def test_a_rosbag2_bag_left_without_metadata_in_a_folder_is_named_and_lone_files_are_read(
        tmp_path):
    (tmp_path / 'killed').mkdir()
    (tmp_path / 'killed' / 'killed_0.db3').touch()  # ros2 bag record killed: no metadata.yaml
    (tmp_path / 'evening.db3').touch()
    (tmp_path / 'noon.mcap').touch()
    found = folder_contents(tmp_path)
    assert found.recordings == (tmp_path / 'evening.db3', tmp_path / 'noon.mcap')
    [note] = found.not_read
    assert note.name == 'killed' and f'ros2 bag reindex {tmp_path / "killed"}' in note.why


def test_a_batchs_outputs_are_not_written_in_the_folder_read(tmp_path):
    day = tmp_path / 'day'
    day.mkdir()
    write_ros1(day / 'a.bag', range(10), extra=False)
    write_ros1(day / 'b.bag', range(10), extra=False)
    line = error_line(run(day, day / 'out'))
    assert line.startswith(f'urdf_state_publisher_bag: {day / "out"} is inside the input')
    assert sorted(p.name for p in day.iterdir()) == ['a.bag', 'b.bag']
