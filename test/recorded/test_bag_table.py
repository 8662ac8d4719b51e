"""A batch's table of runs (runs.csv) and its resumption, on the local pool of processes.

A batch run again does only the runs whose outputs are not complete, and keeps the rows of the
others; an output counts as complete when it is a whole bag, not because a folder of its name
is there; a run whose process is killed (SIGKILL: no clean-up) leaves nothing under its
output's name.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import time

from bag_fixtures import full_pipe
from conftest import SAMPLE_URDF
import pytest
from rosbags.rosbag2 import Reader
from test_bag_runs import JOINTS, write_states

from urdf_state_publisher.recorded.table import COLUMNS, is_complete

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed


def bag(*arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                           *map(str, arguments), '--description', str(SAMPLE_URDF)],
                          capture_output=True, text=True, timeout=300)


def table(output: Path) -> list[dict[str, str]]:
    with (output / 'runs.csv').open(newline='') as file:
        return list(csv.DictReader(file))


def joint_states_in(path: Path) -> int:
    """The JointStates of a bag, as rosbags counts them."""
    with Reader(path) as reader:
        return sum(1 for c, _, _ in reader.messages() if c.topic == '/joint_states')


def transforms_in(path: Path) -> int:
    with Reader(path) as reader:
        return sum(1 for c, _, _ in reader.messages() if c.topic == '/tf')


def test_a_batch_writes_a_row_per_recording_with_its_counts_findings_and_worker(tmp_path):
    recordings = tmp_path / 'in'
    write_states(recordings / 'short', seconds=1.0)
    write_states(recordings / 'long', seconds=3.0)
    # A joint the description does not have: a finding.
    write_states(recordings / 'odd', seconds=2.0, names=(*JOINTS, 'tail_joint'))
    (recordings / 'broken').mkdir()
    (recordings / 'broken' / 'metadata.yaml').write_text('rosbag2_bagfile_information: [1, 2\n')
    result = bag(recordings, tmp_path / 'out', '--findings', tmp_path / 'findings.json',
                 '--jobs', '2')
    assert result.returncode == 1, result.stdout + result.stderr
    rows = {Path(row['input']).name: row for row in table(tmp_path / 'out')}
    assert list(table(tmp_path / 'out')[0]) == list(COLUMNS)
    assert sorted(rows) == ['broken', 'long', 'odd', 'short']
    for name, seconds in [('short', 1.0), ('long', 3.0), ('odd', 2.0)]:
        row = rows[name]
        output = tmp_path / 'out' / name
        assert row['output'] == str(output)
        assert row['status'] == '0'
        assert int(row['messages']) == joint_states_in(recordings / name) == seconds * 100
        assert int(row['tf_written']) == transforms_in(output)
        assert float(row['seconds']) > 0
        host, pid = row['worker'].split('/')
        assert host == os.uname().nodename and int(pid) != os.getpid()
    # The findings, counted by the kind the findings file gives each.
    runs = {Path(run['input']).name: run for run in json.loads(
        (tmp_path / 'findings.json').read_text())['runs']}
    [finding] = runs['odd']['findings']
    assert rows['odd']['findings'] == f'{finding["kind"]}: 1'
    assert rows['short']['findings'] == ''
    assert rows['broken']['status'] == '1'
    assert rows['broken']['output'] == str(tmp_path / 'out' / 'broken')
    assert rows['broken']['error'] == runs['broken']['error']


def test_a_batch_run_again_does_only_what_is_not_complete_and_overwrite_redoes_all(tmp_path):
    recordings = tmp_path / 'in'
    for k in range(4):
        write_states(recordings / f'run_{k}', seconds=1.0 + k)
    out = tmp_path / 'out'
    first = bag(recordings, out, '--jobs', '2')
    assert first.returncode == 0, first.stdout + first.stderr
    rows = table(out)
    shutil.rmtree(out / 'run_1')  # lost
    (out / 'run_2' / 'metadata.yaml').unlink()  # a folder of that name, not a bag
    stamps = {k: (out / f'run_{k}' / 'metadata.yaml').stat().st_mtime_ns for k in (0, 3)}
    again = bag(recordings, out, '--jobs', '2')
    # The folder that is not a bag is not taken for an output, nor replaced without --overwrite.
    assert again.returncode == 1, again.stdout + again.stderr
    assert f'{out / "run_2"} exists: give --overwrite to replace it' in again.stdout
    resumed = table(out)
    assert [row['output'] for row in resumed] == [row['output'] for row in rows]
    for k in (0, 3):  # neither run again nor their rows rewritten
        assert (out / f'run_{k}' / 'metadata.yaml').stat().st_mtime_ns == stamps[k]
        assert resumed[k] == rows[k]
    assert resumed[1]['status'] == '0' and resumed[1]['worker'] != ''
    assert joint_states_in(out / 'run_1') == 200
    assert resumed[2]['status'] == '1'
    overwritten = bag(recordings, out, '--jobs', '2', '--overwrite')
    assert overwritten.returncode == 0, overwritten.stdout + overwritten.stderr
    for k in (0, 3):
        assert (out / f'run_{k}' / 'metadata.yaml').stat().st_mtime_ns != stamps[k]
    assert [row['status'] for row in table(out)] == ['0'] * 4


def test_a_run_killed_leaves_nothing_under_its_name_and_the_batch_run_again_does_it(
        tmp_path):
    recordings = tmp_path / 'in'
    write_states(recordings / 'run_0', seconds=5.0)
    out = tmp_path / 'out'
    # Its stderr a full pipe: the run stages its output, then waits at its first log line
    # until the pipe is read, so that it is killed mid-run however slow this test is.
    read_end, write_end = full_pipe()
    process = subprocess.Popen(
        [sys.executable, '-m', 'urdf_state_publisher.recorded.command', str(recordings / 'run_0'),
         str(out / 'run_0'), '--description', str(SAMPLE_URDF), '--jobs', '1'],
        stdout=subprocess.DEVNULL, stderr=write_end)
    os.close(write_end)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob('.run_0.partial*/run_0/*')) and process.poll() is None:
            assert time.monotonic() < deadline, 'timed out waiting for the staged output'
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait(60)
    finally:
        os.close(read_end)
    assert process.returncode == -signal.SIGKILL
    assert not (out / 'run_0').exists()
    [left] = out.glob('.run_0.partial*')
    assert not is_complete(left / 'run_0')
    # The batch does it, and the killed run's staging folder goes once it has.
    again = bag(recordings, out)
    assert again.returncode == 0, again.stdout + again.stderr
    assert sorted(p.name for p in out.iterdir()) == ['run_0', 'runs.csv']
    assert joint_states_in(out / 'run_0') == 500


def test_an_output_is_complete_only_when_its_metadata_and_every_file_it_lists_are_there(
        tmp_path):
    whole = write_states(tmp_path / 'whole', seconds=1.0)
    assert is_complete(whole)
    cut = shutil.copytree(whole, tmp_path / 'cut')
    [mcap] = cut.glob('*.mcap')
    mcap.unlink()
    assert not is_complete(cut)
    garbled = shutil.copytree(whole, tmp_path / 'garbled')
    (garbled / 'metadata.yaml').write_text('rosbag2_bagfile_information: [1, 2\n')
    assert not is_complete(garbled)
    bare = shutil.copytree(whole, tmp_path / 'bare')
    (bare / 'metadata.yaml').unlink()
    assert not is_complete(bare)
    assert not is_complete(tmp_path / 'nowhere')
