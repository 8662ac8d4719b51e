"""urdf_state_publisher_bag --cluster: a batch on a real Dask scheduler and two workers.

The scheduler and its workers are processes of their own on 127.0.0.1 (dask_cluster), shared
by the module's tests; each worker under its nanny, which starts a new one when a worker dies.
A run is held where a test needs it by a recording whose .mcap file is a FIFO: its run waits in
open() until the test writes to it or puts the real file in its place, however slow the
machine is.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

from conftest import SAMPLE_URDF
from dask_cluster import DaskCluster
import distributed  # noqa: F401 - the oracle (pytest_oracles), missing: a listed skip
import pytest
from rosbags.rosbag2 import Reader
from test_bag_runs import write_states

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

WAIT_S = 120.0
# Each recording's length, in seconds of 100 Hz JointStates: runs of different lengths.
SECONDS = (1.0, 3.0, 2.0, 4.0, 1.5, 2.5, 3.5, 2.0)


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    with DaskCluster(tmp_path_factory.mktemp('dask'), workers=2) as running:
        yield running


@pytest.fixture(scope='module')
def eight(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp('fleet') / 'recordings'
    for k, seconds in enumerate(SECONDS):
        write_states(folder / f'robot_{k}', seconds=seconds)
    return folder


@pytest.fixture(autouse=True)
def two_workers(cluster):
    """Each test starts with two workers, a worker killed by another test replaced."""
    cluster.wait_for_workers(2)


def command(inputs, output: Path, *options) -> list[str]:
    return [sys.executable, '-m', 'urdf_state_publisher.recorded.command',
            *map(str, inputs if isinstance(inputs, list) else [inputs]), str(output),
            '--description', str(SAMPLE_URDF), *map(str, options)]


def run(*arguments, **environment) -> subprocess.CompletedProcess:
    return subprocess.run(command(*arguments), capture_output=True, text=True, timeout=300,
                          env={**os.environ, **environment})


def rows(output: Path) -> dict[str, dict[str, str]]:
    """runs.csv, by output name."""
    with (output / 'runs.csv').open(newline='') as file:
        return {Path(row['output']).name: row for row in csv.DictReader(file)}


def messages(bag: Path) -> list[tuple[str, int, bytes]]:
    """The bag's messages as rosbags reads them: topic, log time, bytes."""
    with Reader(bag) as reader:
        return [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]


def held(folder: Path, name: str, like: Path) -> tuple[Path, Path]:
    """A copy of the recording `like` whose .mcap is a FIFO; the FIFO and the real file."""
    shutil.copytree(like, folder / name)
    [mcap] = (folder / name).glob('*.mcap')
    real = mcap.with_name('real')
    mcap.rename(real)
    os.mkfifo(mcap)
    return mcap, real


def wait_for(predicate, what: str, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        if process is not None and process.poll() is not None:
            pytest.fail(f'the command ended waiting for {what}: {process.communicate()}')
        if time.monotonic() > deadline:
            pytest.fail(f'timed out after {WAIT_S} s waiting for {what}')
        time.sleep(0.05)


def worker_running(cluster: DaskCluster, name: str) -> str | None:
    """The worker whose thread runs the batch's run of recording `name`, if one does."""
    for worker, keys in cluster.client.processing().items():
        if any(str(key).startswith(f'bag-{name}-') for key in keys):
            return worker
    return None


def writer_of(fifo: Path, process: subprocess.Popen | None):
    """`fifo` opened for writing, once a run has opened it to read."""
    def opened() -> bool:
        nonlocal descriptor
        try:
            descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            return False
        return True

    descriptor = -1
    wait_for(opened, f'a run to read {fifo}', process)
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, 'wb')


def test_eight_recordings_are_done_across_both_workers_as_the_local_pool_does_them(
        tmp_path, cluster, eight):
    result = run(eight, tmp_path / 'cluster', '--cluster', cluster.address)
    assert result.returncode == 0, result.stdout + result.stderr
    local = run(eight, tmp_path / 'local', '--jobs', '2')
    assert local.returncode == 0, local.stdout + local.stderr
    table = rows(tmp_path / 'cluster')
    assert sorted(table) == [f'robot_{k}' for k in range(8)]
    for k, seconds in enumerate(SECONDS):
        name = f'robot_{k}'
        cluster_messages = messages(tmp_path / 'cluster' / name)
        # Byte for byte what the local pool wrote for the same recording.
        assert cluster_messages == messages(tmp_path / 'local' / name)
        row = table[name]
        assert (row['status'], row['messages']) == ('0', str(round(seconds * 100)))
        assert int(row['tf_written']) == sum(topic == '/tf' for topic, _, _ in cluster_messages)
    # Both workers took runs; the table names them as the scheduler does.
    assert {row['worker'] for row in table.values()} == set(cluster.worker_pids())
    # The local table names its processes instead: this host, a pid each.
    assert {row['worker'].split('/')[0] for row in rows(tmp_path / 'local').values()} == {
        os.uname().nodename}


def test_a_worker_killed_in_the_middle_of_a_run_its_run_is_done_elsewhere_once(
        tmp_path, cluster, eight):
    folder = tmp_path / 'recordings'
    for k in range(2):
        shutil.copytree(eight / f'robot_{k}', folder / f'robot_{k}')
    fifo, real = held(folder, 'slow', eight / 'robot_1')
    out = tmp_path / 'out'
    # What a worker killed earlier while staging this output left behind.
    (out / '.slow.partial-4242-0badf00d' / 'slow').mkdir(parents=True)
    process = subprocess.Popen(command(folder, out, '--cluster', cluster.address),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: worker_running(cluster, 'slow'), 'the run of slow on a worker', process)
        victim = worker_running(cluster, 'slow')
        pid = cluster.worker_pids()[victim]
        real.rename(fifo)  # its next attempt reads the recording; this one waits on the FIFO
        os.kill(pid, signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stdout + stderr
    table = rows(out)
    assert sorted(table) == ['robot_0', 'robot_1', 'slow']
    assert table['slow']['status'] == '0'
    assert table['slow']['worker'] not in ('', victim)
    # Reported once, as done, with its output whole: the same messages as its recording's twin.
    assert [line.split()[0] for line in stdout.splitlines()].count('slow') == 1
    assert messages(out / 'slow') == messages(out / 'robot_1')
    assert sorted(p.name for p in out.iterdir()) == ['robot_0', 'robot_1', 'runs.csv', 'slow']


def test_a_command_interrupted_and_run_again_does_only_the_missing_outputs(
        tmp_path, cluster, eight):
    folder = tmp_path / 'recordings'
    for k in range(3):
        shutil.copytree(eight / f'robot_{k}', folder / f'robot_{k}')
    fifo, real = held(folder, 'robot_3', eight / 'robot_3')
    out = tmp_path / 'out'
    process = subprocess.Popen(command(folder, out, '--cluster', cluster.address),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_for(lambda: (out / 'runs.csv').exists() and len(rows(out)) == 3,
                 'three runs in the table', process)
        wait_for(lambda: worker_running(cluster, 'robot_3'), 'the held run', process)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == -signal.SIGINT, stdout + stderr
    assert not (out / 'robot_3').exists()
    # The run left on its worker reads an empty recording and writes nothing; then the
    # recording is whole for the second command.
    writer_of(fifo, None).close()  # the command has ended: the run is the worker's
    real.rename(fifo)
    before = rows(out)
    stamps = {name: (out / name / 'metadata.yaml').stat().st_mtime_ns for name in before}
    again = run(folder, out, '--cluster', cluster.address)
    assert again.returncode == 0, again.stdout + again.stderr
    assert '1 run on the Dask cluster' in again.stderr
    table = rows(out)
    assert sorted(table) == ['robot_0', 'robot_1', 'robot_2', 'robot_3']
    for name, stamp in stamps.items():
        assert (out / name / 'metadata.yaml').stat().st_mtime_ns == stamp
        assert table[name] == before[name]
    assert (table['robot_3']['status'], table['robot_3']['messages']) == ('0', '400')
    assert sum(topic == '/joint_states' for topic, _, _ in messages(out / 'robot_3')) == 400


def test_a_bad_recording_among_good_ones_is_reported_not_retried_and_the_rest_done(
        tmp_path, cluster, eight):
    folder = tmp_path / 'recordings'
    for k in range(3):
        shutil.copytree(eight / f'robot_{k}', folder / f'robot_{k}')
    fifo, _ = held(folder, 'broken', eight / 'robot_0')
    out = tmp_path / 'out'
    process = subprocess.Popen(command(folder, out, '--cluster', cluster.address),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Its recording is read once: a second attempt would wait in open() for ever.
        with writer_of(fifo, process) as writer:
            try:
                writer.write(b'\x89MCAP0\r\n' + bytes(64))
            except BrokenPipeError:
                pass
        stdout, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 1, stdout + stderr
    table = rows(out)
    assert [table[f'robot_{k}']['status'] for k in range(3)] == ['0', '0', '0']
    assert table['broken']['status'] == '1'
    assert str(folder / 'broken') in table['broken']['error']
    assert sorted(p.name for p in out.iterdir()) == ['robot_0', 'robot_1', 'robot_2',
                                                     'runs.csv']


def test_dask_scheduler_address_is_honoured_as_cluster_is(tmp_path, cluster, eight):
    result = run([eight / 'robot_0', eight / 'robot_1'], tmp_path / 'out',
                 DASK_SCHEDULER_ADDRESS=cluster.address)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f'2 runs on the Dask cluster at {cluster.address}' in result.stderr
    assert {row['worker'] for row in rows(tmp_path / 'out').values()} <= set(
        cluster.worker_pids())


def test_without_distributed_cluster_says_how_to_install_it(tmp_path, eight):
    result = subprocess.run(
        [sys.executable, '-c', 'import sys; sys.modules["distributed"] = None; '
         'from urdf_state_publisher.recorded.command import main; sys.exit(main())',
         *command([eight / 'robot_0', eight / 'robot_1'], tmp_path / 'out', '--cluster',
                  'tcp://127.0.0.1:1')[3:]], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'urdf_state_publisher_bag: --cluster needs the distributed package (Dask); for this '
        f'Python: {sys.executable} -m pip install distributed (doc/recorded-data.md, '
        '"On a cluster")')
    assert not (tmp_path / 'out').exists()


def test_a_cluster_address_where_no_scheduler_answers_is_one_line_and_nothing_written(
        tmp_path, eight):
    with socket.socket() as closed:  # a port of this machine that nothing listens on
        closed.bind(('127.0.0.1', 0))
        address = f'tcp://127.0.0.1:{closed.getsockname()[1]}'
    result = run([eight / 'robot_0', eight / 'robot_1'], tmp_path / 'out', '--cluster', address)
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f'urdf_state_publisher_bag: --cluster {address}: no Dask scheduler '
                           'answers there (')
    assert line.endswith('); start one (dask scheduler) or give its address')
    assert not (tmp_path / 'out').exists()


def test_the_cluster_command_of_the_recorded_data_page_runs(tmp_path, cluster, eight):
    page = (Path(__file__).resolve().parents[2] / 'doc' / 'recorded-data.md').read_text()
    [block] = [b.split('\n', 1)[1] for b in page.split('```')[1::2]
               if b.split('\n', 1)[1].startswith('urdf_state_publisher_bag /fleet/')]
    words = block.replace('\\\n', ' ').split()
    assert words[0] == 'urdf_state_publisher_bag'
    # The page's paths and scheduler, this test's.
    swapped = {'/fleet/2026-11-27/': str(eight), '/fleet/2026-11-27_tf/': str(tmp_path / 'out'),
               'robot.urdf.xacro': str(SAMPLE_URDF),
               'tcp://scheduler.cluster:8786': cluster.address}
    result = subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                             *[swapped.get(word, word) for word in words[1:]]],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f'8 runs on the Dask cluster at {cluster.address}: 2 workers now' in result.stderr
    assert [row['status'] for row in rows(tmp_path / 'out').values()] == ['0'] * 8


def test_paths_given_relative_to_the_command_are_the_same_files_on_the_workers(
        tmp_path, cluster, eight):
    # The workers run in a folder of their own (the scheduler's machine's, a job's): the
    # recordings, the outputs and the description are found where the command's folder has
    # them.
    shutil.copytree(eight / 'robot_0', tmp_path / 'in' / 'robot_0')
    shutil.copytree(eight / 'robot_1', tmp_path / 'in' / 'robot_1')
    shutil.copy(SAMPLE_URDF, tmp_path / 'robot.urdf')
    result = subprocess.run(
        [sys.executable, '-m', 'urdf_state_publisher.recorded.command', 'in', 'out',
         '--description',
         'robot.urdf', '--cluster', cluster.address], cwd=tmp_path, capture_output=True,
        text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [row['status'] for row in rows(tmp_path / 'out').values()] == ['0', '0']
    assert sum(topic == '/joint_states' for topic, _, _ in messages(
        tmp_path / 'out' / 'robot_1')) == 300


def test_progress_counts_done_running_and_left_and_names_the_dashboard(
        tmp_path, cluster, eight):
    folder = tmp_path / 'recordings'
    for k in range(3):
        shutil.copytree(eight / f'robot_{k}', folder / f'robot_{k}')
    (folder / 'broken').mkdir()
    (folder / 'broken' / 'metadata.yaml').write_text('rosbag2_bagfile_information: [1, 2\n')
    result = run(folder, tmp_path / 'out', '--cluster', cluster.address)
    assert result.returncode == 1, result.stdout + result.stderr
    assert (f'4 runs on the Dask cluster at {cluster.address}: 2 workers now, dashboard '
            f'{cluster.client.dashboard_link}') in result.stderr.splitlines()
    # To a log, a line at each change (recorded.progress), the last once every run is done.
    progress = [line for line in result.stderr.splitlines() if line.startswith('batch: ')]
    assert progress, result.stderr
    for line in progress:
        assert re.fullmatch(r'batch: \d of 4 runs done( \(\d not OK\))?, \d running, \d left; '
                            r'\d+ s(, [\d.]+ runs/s, [\d.]+ s of bag per second)?', line), line
        # Running: at most one a worker (each has one thread), the runs sent ahead to a
        # worker counted left.
        assert int(re.search(r', (\d) running', line)[1]) <= 2, line
    assert progress[-1].startswith('batch: 4 of 4 runs done (1 not OK), 0 running, 0 left; ')
