"""urdf_state_publisher_bag as a tool for scripts: its input kept, its exit status, its findings.

Each test runs the command as a script would and holds it to what the recorded-data page
promises: the input is never written to; the exit status says whether the description and the
recording fit; findings are dated by the message that caused them; hints name the nearest
joint or nothing; options go anywhere.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
import re
import resource
import signal
import struct
import subprocess
import sys
import time

from bag_fixtures import error_line
from conftest import SAMPLE_URDF
import numpy as np
import pytest
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import get_typestore, Stores

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

STORE = get_typestore(Stores.ROS2_JAZZY)
T = STORE.types
BILLION = 1_000_000_000
START_NS = 1_700_000_000 * BILLION
# The sample robot's independent moving joints: a recording of them fits it.
JOINTS = ('torso_lift_joint', 'shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
          'wrist_roll_joint', 'left_finger_joint')
SAMPLE = SAMPLE_URDF.read_text()


def joint_state(ns: int, names, positions) -> bytes:
    return bytes(STORE.serialize_cdr(T['sensor_msgs/msg/JointState'](
        header=T['std_msgs/msg/Header'](stamp=T['builtin_interfaces/msg/Time'](
            sec=ns // BILLION, nanosec=ns % BILLION), frame_id=''),
        name=list(names), position=np.asarray(positions, dtype=float), velocity=np.array([]),
        effort=np.array([])), 'sensor_msgs/msg/JointState'))


def write_states(path: Path, seconds: float = 1.0, names=JOINTS, value=None,
                 topic: str = '/joint_states') -> Path:
    """JointStates at 100 Hz, logged at their stamps; `value(k, t)` the positions at step k."""
    writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    connection = writer.add_connection(topic, 'sensor_msgs/msg/JointState', typestore=STORE)
    for k in range(int(seconds * 100)):
        ns = START_NS + k * 10_000_000
        positions = value(k, k / 100) if value else [0.02] * len(names)
        writer.write(connection, ns, joint_state(ns, names, positions))
    writer.close()
    return path


def run(*arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                           *map(str, arguments)], capture_output=True, text=True, timeout=300)


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob('*')) if p.is_file()}


# Never lose data --------------------------------------------------------------------------

@pytest.mark.parametrize('output', ['same', 'inside', 'holding', 'symlink', 'dotdot'])
def test_an_output_over_or_in_the_input_is_refused_and_the_input_kept(tmp_path, output):
    bag = write_states(tmp_path / 'run')
    before = digest(bag)
    (tmp_path / 'link').symlink_to(bag)
    target = {'same': bag, 'inside': bag / 'out', 'holding': tmp_path,
              'symlink': tmp_path / 'link', 'dotdot': bag / '..' / 'run'}[output]
    result = run(bag, target, '--description', SAMPLE_URDF, '--overwrite')
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f'urdf_state_publisher_bag: {target} ')
    assert 'give an output outside the input' in line
    assert digest(bag) == before


def test_a_lone_mcap_inside_the_output_folder_is_refused(tmp_path):
    folder = tmp_path / 'data'
    write_states(tmp_path / 'run')
    folder.mkdir()
    [mcap] = (tmp_path / 'run').glob('*.mcap')
    lone = mcap.rename(folder / 'run.mcap')
    before = lone.read_bytes()
    result = run(lone, folder, '--description', SAMPLE_URDF, '--overwrite')
    assert result.returncode == 1 and 'holds the input' in result.stderr
    assert lone.read_bytes() == before


def test_an_overwrite_stopped_as_the_new_output_goes_in_keeps_the_old_one(tmp_path,
                                                                         monkeypatch):
    # The stop lands as the new output is being moved in, after the old one was moved out of
    # its way: the old output must be there, as it was, and nothing else.
    from urdf_state_publisher.recorded import run as bag_run

    bag = write_states(tmp_path / 'run')
    assert run(bag, tmp_path / 'out', '--description', SAMPLE_URDF).returncode == 0
    before = digest(tmp_path / 'out')
    moves_in = []
    rename = Path.rename

    def stopped_as_the_new_output_moves_in(self, target):
        if Path(target) == tmp_path / 'out' and self.name == 'out':  # from its staging folder
            moves_in.append(self)
            raise KeyboardInterrupt
        return rename(self, target)

    monkeypatch.setattr(Path, 'rename', stopped_as_the_new_output_moves_in)
    options = bag_run.RunOptions(description=(str(SAMPLE_URDF),), overwrite=True, live=False)
    with pytest.raises(KeyboardInterrupt):
        bag_run.run_bag(bag, tmp_path / 'out', options)
    assert moves_in
    assert digest(tmp_path / 'out') == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ['out', 'run']


@pytest.mark.parametrize('second', ['SIGINT', 'SIGTERM'])
def test_a_second_stop_does_not_cut_the_clean_up(tmp_path, monkeypatch, second):
    # A stop mid-run, then a second one (Ctrl-C pressed again, or the signal a batch's main
    # process passes on) while the run cleans up: the clean-up completes, the stop stands.
    from urdf_state_publisher.recorded import command as bag
    from urdf_state_publisher.recorded import input as bag_input
    from urdf_state_publisher.recorded import output as bag_output
    from urdf_state_publisher.recorded import run as bag_run

    bag_path = write_states(tmp_path / 'run')
    written, closed = [], []
    write, close = bag_output.OutputBag.write, bag_input.Rosbag2Input.close

    def write_then_stop(self, *record):
        written.append(record)
        if len(written) == 10:
            signal.raise_signal(signal.SIGTERM)
        return write(self, *record)

    def close_stopped_again(self):
        closed.append(self)
        signal.raise_signal(getattr(signal, second))  # inside the clean-up: before the rmtree
        return close(self)

    monkeypatch.setattr(bag_output.OutputBag, 'write', write_then_stop)
    monkeypatch.setattr(bag_input.Rosbag2Input, 'close', close_stopped_again)
    # SIGINT as in a terminal (a shell without job control starts background jobs with it
    # ignored, and the command leaves an ignored signal ignored), then the command's handlers.
    interactive = signal.signal(signal.SIGINT, signal.default_int_handler)
    stopped_by, previous = bag._stop_signals_interrupt()
    try:
        with pytest.raises(KeyboardInterrupt):
            bag_run.run_bag(bag_path, tmp_path / 'out',
                            bag_run.RunOptions(description=(str(SAMPLE_URDF),), live=False))
    finally:
        for number, handler in {**previous, signal.SIGINT: interactive}.items():
            signal.signal(number, handler)
    assert stopped_by == [signal.SIGTERM]
    assert len(written) == 10
    assert len(closed) == 1  # the second stop was raised, in the clean-up
    assert sorted(p.name for p in tmp_path.iterdir()) == ['run']


# The command, stopped by SIGTERM at a call its runs make once their output is in place: one
# run's input closed in its clean-up, or a batch's table printed.
STOPPED_AT = """
import signal, sys
from urdf_state_publisher.recorded import command as bag
from urdf_state_publisher.recorded import input as bag_input

owner, name = {'run': (bag_input.Rosbag2Input, 'close'), 'batch': (bag, '_print_table')}[
    sys.argv.pop(1)]
call = getattr(owner, name)

def stopped(*arguments):
    signal.raise_signal(signal.SIGTERM)
    return call(*arguments)

setattr(owner, name, stopped)
sys.exit(bag.main())
"""


def test_a_stop_after_the_output_moved_in_says_it_was_written(tmp_path):
    # A stop can land in the last moments of a run, its output already in place (the clean-up,
    # the summary): the run is done, and the command says so, then ends by the stop.
    bag = write_states(tmp_path / 'run')
    assert run(bag, tmp_path / 'out', '--description', SAMPLE_URDF).returncode == 0
    whole = (tmp_path / 'out').rename(tmp_path / 'whole')
    result = subprocess.run([sys.executable, '-c', STOPPED_AT, 'run', str(bag),
                             str(tmp_path / 'out'), '--description', str(SAMPLE_URDF)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == -signal.SIGTERM, result.stdout + result.stderr
    assert result.stderr.splitlines()[1:] == [  # after the description's INFO line
        'urdf_state_publisher_bag: stopped by SIGTERM; the output was written before it: '
        f'{tmp_path / "out"}']
    assert result.stdout.splitlines()[-1] == f'output: {tmp_path / "out"}'  # its summary
    # The output whole: its metadata to the byte, each topic's messages as a run writes them.
    assert digest(tmp_path / 'out').keys() == digest(whole).keys()
    assert digest(tmp_path / 'out')['metadata.yaml'] == digest(whole)['metadata.yaml']
    written = by_topic(read_output(whole)[0])
    assert written['/tf'] and by_topic(read_output(tmp_path / 'out')[0]) == written
    assert sorted(p.name for p in tmp_path.iterdir()) == ['out', 'run', 'whole']


def test_a_batch_stopped_once_every_run_is_done_says_all_were_written(tmp_path):
    # The stop comes as the table is printed: every output is in place, and the line says so.
    for k in range(2):
        write_states(tmp_path / 'runs' / f'run_{k}')
    result = subprocess.run([sys.executable, '-c', STOPPED_AT, 'batch', str(tmp_path / 'runs'),
                             str(tmp_path / 'out'), '--description', str(SAMPLE_URDF),
                             '--jobs', '2'], capture_output=True, text=True, timeout=300)
    assert result.returncode == -signal.SIGTERM, result.stdout + result.stderr
    assert [line for line in result.stderr.splitlines() if not line.startswith('batch: ')] == [
        'urdf_state_publisher_bag: stopped by SIGTERM; 2 of 2 outputs written before it']
    assert [line.split()[::4] for line in result.stdout.splitlines()[1:3]] == [
        ['run_0', 'ok'], ['run_1', 'ok']]  # the table
    for k in range(2):
        assert (tmp_path / 'out' / f'run_{k}' / 'metadata.yaml').exists()


def test_a_batch_worker_stopped_after_its_output_moved_in_returns_its_summary(tmp_path,
                                                                              monkeypatch):
    # The batch counts the runs done by the summaries its workers return: a stop in a run's
    # last moments must not lose one, and the worker then starts no further run.
    import multiprocessing

    from urdf_state_publisher.recorded import command as bag
    from urdf_state_publisher.recorded import input as bag_input
    from urdf_state_publisher.recorded import stops as bag_stops

    for k in range(2):
        write_states(tmp_path / f'run_{k}')
    close = bag_input.Rosbag2Input.close

    def close_stopped(self):
        signal.raise_signal(signal.SIGTERM)  # in the clean-up, after the output moved in
        return close(self)

    monkeypatch.setattr(bag_input.Rosbag2Input, 'close', close_stopped)
    handlers = {number: signal.getsignal(number) for number in bag.STOP_SIGNALS}
    # What the worker's handlers change, this process's as it was once the test is done.
    for name in ('_done', '_noted'):
        monkeypatch.setattr(bag_stops, name, False)
    monkeypatch.setattr(bag, '_worker_stopped', False)
    monkeypatch.setattr(bag, '_stopping', None)
    bag._start_worker(multiprocessing.Event())  # the worker's handlers, in this process
    try:
        options = bag.RunOptions(description=(str(SAMPLE_URDF),), live=False)
        try:
            summary = bag._batch_run(tmp_path / 'run_0', tmp_path / 'out' / 'run_0',
                                     options).summary
        except KeyboardInterrupt:
            pytest.fail('the stop took the summary of a run whose output was in place')
        assert bag._batch_run(tmp_path / 'run_1', tmp_path / 'out' / 'run_1', options) is None
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
    assert summary.status == bag.EXIT_OK
    assert summary.output == str(tmp_path / 'out' / 'run_0')
    assert (tmp_path / 'out' / 'run_0' / 'metadata.yaml').exists()
    assert sorted(p.name for p in (tmp_path / 'out').iterdir()) == ['run_0']


def damage_a_message_length(mcap: Path, index: int) -> None:
    """The length of message record `index` (from 0) of the first chunk set past any file's end.

    Read by the MCAP specification: a record is its opcode (u8), its length (u64) and its body;
    a chunk (opcode 6) holds its messages' start and end times, uncompressed size and CRC,
    its compression (a u32-long string) and its records (a u64-long byte array).
    """
    data = bytearray(mcap.read_bytes())
    offset = 8  # past the magic
    while data[offset] != 0x06:
        offset += 9 + struct.unpack_from('<Q', data, offset + 1)[0]
    offset += 9 + 28
    compression_length = struct.unpack_from('<I', data, offset)[0]
    assert compression_length == 0, 'rosbags wrote a compressed chunk: its records are not bare'
    offset += 4 + 8
    seen = 0  # messages (opcode 5), past the chunk's schema and channel records
    while data[offset] != 0x05 or seen < index:
        seen += data[offset] == 0x05
        offset += 9 + struct.unpack_from('<Q', data, offset + 1)[0]
    struct.pack_into('<Q', data, offset + 1, 2**62)
    mcap.write_bytes(bytes(data))


@pytest.mark.parametrize('jobs', ['1', '2'], ids=['one-process', 'writer-process'])
def test_a_recording_damaged_inside_is_one_line_and_nothing_written(tmp_path, jobs):
    # It opens (its summary is whole), so the damage is met while its messages are read.
    bag = write_states(tmp_path / 'run')
    [mcap] = bag.glob('*.mcap')
    damage_a_message_length(mcap, 50)
    before = digest(bag)
    line = error_line(run(bag, tmp_path / 'out', '--description', SAMPLE_URDF, '--jobs', jobs))
    assert line.startswith(f'urdf_state_publisher_bag: {bag}: damaged: cannot read ')
    assert line.endswith('nothing is written from a recording that cannot be read whole')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['run']
    assert digest(bag) == before


def limit_file_size(size: int):
    """For a child process: files no larger than `size` bytes, a write past it failing with
    EFBIG (its signal, SIGXFSZ, ignored), as a full disk fails a write."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return limit


@pytest.mark.parametrize('jobs', ['1', '2'], ids=['one-process', 'writer-process'])
def test_an_output_that_cannot_be_written_is_one_line_and_nothing_left(tmp_path, jobs):
    bag = write_states(tmp_path / 'run', seconds=20.0)  # about 1.7 MB of records
    before = digest(bag)
    out = tmp_path / 'results' / 'out'
    result = subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                             str(bag),
                             str(out), '--description', str(SAMPLE_URDF), '--jobs', jobs],
                            capture_output=True, text=True, timeout=300,
                            preexec_fn=limit_file_size(500_000))
    # What failed, once, as the command's own line: not an internal error of the engine,
    # which keeps a node running whatever it is handed, nor a traceback.
    line = error_line(result)
    assert line.startswith(f'urdf_state_publisher_bag: {out}: cannot write it (OSError: ')
    assert line.endswith('File too large); nothing is written'), line
    assert '[ERROR]' not in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ['run']  # nor the folder it made
    assert digest(bag) == before


def test_an_output_failing_inside_the_engine_stops_the_run_at_that_message(tmp_path):
    # A /tf write fails inside the engine's handling of a JointState, which takes any error for
    # one of its own and goes on, as a node must: the run stops at that message all the same.
    from urdf_state_publisher.recorded.feed import BagFeed
    from urdf_state_publisher.recorded.output import BagOutputError
    from urdf_state_publisher.recorded.plan import plan_run, RunOptions

    plan = plan_run(write_states(tmp_path / 'run'), tmp_path / 'out', RunOptions(
        description=(str(SAMPLE_URDF),), live=False))

    class FullOnTf:
        """An output whose /tf cannot be written; everything else is."""

        handles = list(range(len(plan.connections)))
        written: list[int] = []

        def write(self, handle: int, log_ns: int, data: bytes) -> None:
            if handle == plan.ours['/tf']:
                raise BagOutputError('OSError: [Errno 28] No space left on device')
            self.written.append(log_ns)

    feed = BagFeed(plan, FullOnTf())
    with pytest.raises(BagOutputError, match='No space left'):
        feed.run()
    # The recording's first JointState is due: its /tf failed, and nothing came after it.
    assert feed.now_ns == START_NS
    assert max(FullOnTf.written) <= START_NS
    plan.input.close()


# The exit status ------------------------------------------------------------------------

def test_a_recording_that_fits_exits_0(tmp_path):
    result = run(write_states(tmp_path / 'run'), tmp_path / 'out', '--description', SAMPLE_URDF)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_joint_in_common_exits_2_with_the_output_written(tmp_path):
    """A prefixed description against an unprefixed recording: written, but no /tf."""
    xacro = tmp_path / 'robot.urdf.xacro'
    xacro.write_text(SAMPLE_URDF.with_suffix('.urdf.xacro').read_text())
    result = run(write_states(tmp_path / 'run'), tmp_path / 'out', '--description', xacro,
                 'prefix:=left_')
    assert result.returncode == 2, result.stdout + result.stderr
    assert ("the description and the recording do not fit: the recording names no moving "
            "joint of robot 'sample_arm', so no /tf was computed") in result.stdout
    assert (tmp_path / 'out' / 'metadata.yaml').exists()


def test_a_joint_the_recording_never_names_exits_2_naming_it(tmp_path):
    """A misspelt joint in the URDF: the recording's elbow_joint moves nothing."""
    urdf = tmp_path / 'robot.urdf'
    urdf.write_text(SAMPLE.replace('"elbow_joint"', '"elbow_jiont"'))
    result = run(write_states(tmp_path / 'run'), tmp_path / 'out', '--description', urdf)
    assert result.returncode == 2, result.stdout + result.stderr
    assert ("the recording never names these moving joints of robot 'sample_arm': "
            'elbow_jiont; their frames stay still on /tf') in result.stdout
    # The hint names the nearest joint, not a prefix that turns elbow_ into torso_lift_.
    assert "Hint: 'elbow_joint' is nearest to joint 'elbow_jiont'" in result.stdout
    assert 'prefix' not in result.stdout


def test_strict_exits_3_on_a_warning_and_0_without_one(tmp_path):
    clamped = write_states(tmp_path / 'clamped', value=lambda k, t: [0.02, 0.02, 0.02, 3.0,
                                                                     0.02, 0.02])
    assert run(clamped, tmp_path / 'a', '--description', SAMPLE_URDF).returncode == 0
    assert run(clamped, tmp_path / 'b', '--description', SAMPLE_URDF,
               '--strict').returncode == 3
    clean = write_states(tmp_path / 'clean')
    assert run(clean, tmp_path / 'c', '--description', SAMPLE_URDF, '--strict').returncode == 0


# publish_joint_states -------------------------------------------------------------------

def test_publish_joint_states_never_replaces_the_recorded_motion(tmp_path):
    bag = write_states(tmp_path / 'run', value=lambda k, t: [0.02 + 0.001 * k] * 6)
    refused = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF, '--ros-args', '-p',
                  'publish_joint_states:=true')
    assert refused.returncode == 1
    [line] = refused.stderr.splitlines()
    working = '-p publish_joint_states:=true -p source_list:=[/joint_states] -r __ns:=/resolved'
    assert working in line
    # The arguments it names work: the resolved state from the recorded motion, beside it.
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF, '--ros-args',
                 *working.split())
    assert result.returncode == 0, result.stdout + result.stderr
    with Reader(tmp_path / 'out') as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
        resolved = [STORE.deserialize_cdr(data, 'sensor_msgs/msg/JointState')
                    for c, _, data in reader.messages() if c.topic == '/resolved/joint_states']
    assert counts['/joint_states'] == 100  # the recording's, kept
    assert resolved and resolved[-1].position[list(resolved[-1].name).index('elbow_joint')] > 0.1


# Findings at their own time -----------------------------------------------------------------

def test_findings_are_dated_by_their_message_and_counted_per_joint(tmp_path):
    # Beyond its limit from 0.35 s to 0.39 s, NaN from 1.20 s to 1.24 s: at 20 Hz
    # (publish_frequency), the states of 0.35 s and 1.20 s are the ones computed.
    def value(k, t):
        elbow = 3.0 if 35 <= k < 40 else 0.02
        torso = float('nan') if 120 <= k < 125 else 0.02
        return [torso, 0.02, 0.02, elbow, 0.02, 0.02]

    bag = write_states(tmp_path / 'run', seconds=3.0, value=value)
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF)
    out = result.stdout
    # Each of the five messages counted; the last seen as the next state's turn came (a state
    # held by the rate limit is judged when the next one arrives, at most 10 ms on).
    assert re.search(r'\n      elbow_joint: 5 messages, first at 0\.350 s, last at 0\.(39|40)0 s',
                     out), out
    assert '      torso_lift_joint: 5 messages, first at 1.200 s, last at 1.240 s' in out, out
    # Not at the next once-a-second status (1.000 s and 2.000 s), when the node logs them.
    assert '[WARN] first at 0.350 s' in out and '[WARN] first at 1.200 s' in out
    # The live log line gives the same time as the summary (not the status's, 1.000 s).
    assert '[WARN] [bag time 0.350 s] joint values outside their limits' in result.stderr, \
        result.stderr


def test_joint_states_naming_no_joint_are_dated_by_the_first_of_them(tmp_path):
    # Another robot's names (a prefix the description lacks) from 0.37 s on, a message on
    # another topic at 0 s: the misfit comes with the first JointState, not with the node's
    # next status (1.000 s), when it logs it.
    writer = Writer(tmp_path / 'run', version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    note = writer.add_connection('/note', 'std_msgs/msg/String', typestore=STORE)
    states = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                   typestore=STORE)
    writer.write(note, START_NS, bytes(STORE.serialize_cdr(T['std_msgs/msg/String'](data='go'),
                                                           'std_msgs/msg/String')))
    names = [f'left_{joint}' for joint in JOINTS]
    for k in range(37, 300):
        ns = START_NS + k * 10_000_000
        writer.write(states, ns, joint_state(ns, names, [0.02] * len(names)))
    writer.close()
    result = run(tmp_path / 'run', tmp_path / 'out', '--description', SAMPLE_URDF,
                 '--findings', tmp_path / 'findings.json')
    assert result.returncode == 2, result.stdout + result.stderr
    assert re.search(r'\n  \[ERROR\] first at 0\.370 s: no name in the JointStates is a joint',
                     result.stdout), result.stdout
    # Each name's messages, in the findings file (the terminal shows the first few).
    [run_summary] = json.loads((tmp_path / 'findings.json').read_text())['runs']
    [finding] = [f for f in run_summary['findings'] if f['level'] == 'ERROR']
    assert finding['names'] == [{'name': name, 'first': 0.37, 'last': 2.99, 'count': 263}
                                for name in names]


def test_a_long_bag_with_a_recurring_condition_prints_a_screenful(tmp_path):
    """Beyond the limit for 0.1 s of every 2 s, for 60 s: 30 episodes, a few lines."""
    bag = write_states(tmp_path / 'run', seconds=60.0,
                       value=lambda k, t: [0.02, 0.02, 0.02, 3.0 if k % 200 < 10 else 0.02,
                                           0.02, 0.02])
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF)
    assert result.returncode == 0
    assert len(result.stderr.splitlines()) <= 6, result.stderr
    assert 'more log lines of conditions shown above not printed' in result.stderr
    assert '[WARN] first at 0.000 s, 30 times: joint values outside' in result.stdout
    assert re.search(r'\n      elbow_joint: 300 messages, first at 0\.000 s, last at '
                     r'58\.[01]\d0 s', result.stdout), result.stdout


# Hints and the command line -------------------------------------------------------------

def test_an_extra_name_gets_no_wrong_hint(tmp_path):
    bag = write_states(tmp_path / 'run', names=(*JOINTS, 'ghost_joint'),
                       value=lambda k, t: [0.02] * 7)
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF)
    assert 'does not have (ignored): ghost_joint' in result.stdout
    assert 'Hint' not in result.stdout  # 'ghost_joint' is not 'elbow_joint'


def test_a_stopped_batch_starts_no_further_run(tmp_path, monkeypatch):
    # The pool hands a worker its next run before the last one ends, and a stop cancels only
    # the runs not yet handed out: the worker itself must not start one.
    import multiprocessing

    from urdf_state_publisher.recorded import command as bag
    from urdf_state_publisher.recorded import table as bag_table

    stopping = multiprocessing.Event()
    monkeypatch.setattr(bag, '_stopping', stopping)  # what the worker's initializer sets
    started = []

    def stopped_run(source, target, options):
        started.append(source)
        if len(started) == 1:
            raise KeyboardInterrupt  # the worker's signal, in the middle of its first run
        return 'run'  # a later run that started: what the assertions below catch

    monkeypatch.setattr(bag_table, 'run_bag', stopped_run)
    with pytest.raises(KeyboardInterrupt):
        bag._batch_run(tmp_path / 'run_0', tmp_path / 'out' / 'run_0', bag.RunOptions())
    assert stopping.is_set()  # by the worker that heard it, whatever the others heard
    assert bag._batch_run(tmp_path / 'run_1', tmp_path / 'out' / 'run_1',
                          bag.RunOptions()) is None
    assert started == [tmp_path / 'run_0']


def test_a_batchs_progress_is_shown_from_its_start_to_its_end(tmp_path):
    # To a pipe: plain lines, one per change. The first comes before any run is done (the
    # batch's first second, not its first run's end); the counts only go up; the last says all.
    for k in range(3):
        write_states(tmp_path / 'runs' / f'run_{k}')
    result = run(tmp_path / 'runs', tmp_path / 'out', '--description', SAMPLE_URDF,
                 '--jobs', '1')
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith('batch: ')]
    done = [int(line.split()[1]) for line in lines]
    assert done[0] == 0 and lines[0].endswith(' s'), lines  # no throughput before a run is done
    assert done == sorted(done) and done[-1] == 3, lines
    assert re.fullmatch(r'batch: 3 of 3 runs done, 0 running, 0 left; \d+ s, [\d.]+ runs/s, '
                        r'[\d.]+ s of bag per second', lines[-1]), lines
    # Named as the outputs are in the batch's folder.
    assert [line.split()[0] for line in result.stdout.splitlines()[1:4]] == [
        'run_0', 'run_1', 'run_2']


def test_a_batch_names_each_run_as_its_output(tmp_path):
    # A lone .mcap's output drops the suffix: the table names the run as its output is named.
    rosbag2 = write_states(tmp_path / 'run_0')
    (tmp_path / 'in').mkdir()
    for name in ('a', 'b'):
        bag_file = tmp_path / 'in' / f'{name}.mcap'
        [mcap] = rosbag2.glob('*.mcap')
        bag_file.write_bytes(mcap.read_bytes())
    result = run(tmp_path / 'in' / 'a.mcap', tmp_path / 'in' / 'b.mcap', tmp_path / 'out',
                 '--description', SAMPLE_URDF, '--jobs', '1')
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(p.name for p in (tmp_path / 'out').iterdir()) == ['a', 'b', 'runs.csv']
    assert [line.split()[0] for line in result.stdout.splitlines()[1:3]] == ['a', 'b']


def test_a_batch_starts_its_longest_recordings_first(tmp_path):
    # One worker runs them one after the other: each output's metadata is written as its run
    # ends, so their times give the order the runs were started in. The table keeps the
    # inputs' order.
    runs = tmp_path / 'runs'
    for name, seconds in (('a_short', 0.5), ('b_long', 3.0), ('c_middle', 1.5)):
        write_states(runs / name, seconds=seconds)
    result = run(runs, tmp_path / 'out', '--description', SAMPLE_URDF, '--jobs', '1')
    assert result.returncode == 0, result.stdout + result.stderr
    finished = sorted(('a_short', 'b_long', 'c_middle'), key=lambda name: (
        tmp_path / 'out' / name / 'metadata.yaml').stat().st_mtime_ns)
    assert finished == ['b_long', 'c_middle', 'a_short']
    table = [line.split()[0] for line in result.stdout.splitlines()[1:4]]
    assert table == ['a_short', 'b_long', 'c_middle']


def test_the_command_called_in_process_leaves_the_callers_signal_handlers(tmp_path, capsys):
    # main() is also a function (the benchmark calls it): its handlers are its call's.
    from urdf_state_publisher.recorded import command as bag

    stop_signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    before = {number: signal.getsignal(number) for number in stop_signals}
    assert bag.main([str(tmp_path / 'nowhere'), str(tmp_path / 'out')]) == 1
    assert 'no such bag' in capsys.readouterr().err
    assert {number: signal.getsignal(number) for number in stop_signals} == before


def test_options_go_anywhere(tmp_path):
    bag = write_states(tmp_path / 'run')
    for k, words in enumerate([('--description', SAMPLE_URDF, bag, 'out0'),
                               (bag, '--description', SAMPLE_URDF, 'out1'),
                               (bag, 'out2', '--description', SAMPLE_URDF, '--strict')]):
        result = subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                                 *map(str, words)], cwd=tmp_path, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        assert (tmp_path / f'out{k}' / 'metadata.yaml').exists()


def test_the_joint_state_topics_a_bag_has_are_named(tmp_path):
    bag = write_states(tmp_path / 'run', topic='/arm/js')
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF)
    assert result.returncode == 1
    assert result.stderr.strip().endswith(
        'its JointState topics are /arm/js: read them with --ros-args -p '
        'source_list:=[/arm/js] (or -r joint_states:=/arm/js)')


# A lone run's second core, and what it writes -------------------------------------------

def read_output(path: Path) -> tuple[list, dict]:
    """Every message (topic, log time, bytes) in the order stored, and each connection."""
    reader = Reader(path)
    reader.open()
    try:
        return ([(c.topic, log_ns, bytes(raw)) for c, log_ns, raw in reader.messages()],
                {c.topic: c for c in reader.connections})
    finally:
        reader.close()


def by_topic(messages: list) -> dict[str, list]:
    """Each topic's (log time, bytes), in the order stored: what a run guarantees, whichever of
    its processes wrote the topic (the interleaving of two processes' topics is timing's)."""
    topics = {}
    for topic, log_ns, data in messages:
        topics.setdefault(topic, []).append((log_ns, data))
    return topics


def python_script(script: str, *arguments) -> subprocess.CompletedProcess:
    """`script` run by a Python of its own.

    A process that forks should have no other thread; the suite's may, from rclpy's tests.
    """
    return subprocess.run([sys.executable, '-c', script, *map(str, arguments)],
                          capture_output=True, text=True, timeout=300)


def with_writer_process(body: str, connections: str = '[]', batch_bytes: int | None = None
                        ) -> str:
    """A script that starts a writer process for the output sys.argv[1], with `connections`
    (an expression) and no recorded topic to copy, then runs `body` (`writer` is the process).
    """
    return ('import multiprocessing, os, signal, sys, time\n'
            'from urdf_state_publisher.recorded import writer as writer_process\n'
            'from urdf_state_publisher.recorded.output import OutputConnection, OutputFormat\n'
            + (f'writer_process.BATCH_BYTES = {batch_bytes}\n' if batch_bytes else '')
            + f'connections = {connections}\n'
            'writer = writer_process.WriterProcess(sys.argv[1], OutputFormat("jazzy", "mcap", '
            '"none"),\n'
            '                                      connections, sys.argv[1], {})\n'
            + body)


def write_recording(path: Path, storage: str) -> Path:
    """A recording with a topic of each role (recorded.routing.Role): joint states for 2 s, a topic
    only copied (at 30 Hz, for 3.5 s: on after the joint states stop), recorded /tf of the
    robot's frames and of another's, another node's diagnostics."""
    writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP if storage == 'mcap'
                    else StoragePlugin.SQLITE3)
    writer.open()
    states = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                   typestore=STORE)
    notes = writer.add_connection('/notes', 'std_msgs/msg/String', typestore=STORE)
    tf = writer.add_connection('/tf', 'tf2_msgs/msg/TFMessage', typestore=STORE)
    diagnostics = writer.add_connection('/diagnostics', 'diagnostic_msgs/msg/DiagnosticArray',
                                        typestore=STORE)
    written = []
    for k in range(200):
        ns = START_NS + k * 10_000_000
        positions = [0.02 + 0.01 * np.sin(k / 100 + j) for j in range(6)]
        written.append((ns, states, joint_state(ns, JOINTS, positions)))
        if k % 10 == 0:
            header = T['std_msgs/msg/Header'](stamp=T['builtin_interfaces/msg/Time'](
                sec=ns // BILLION, nanosec=ns % BILLION), frame_id='odom')
            transforms = [T['geometry_msgs/msg/TransformStamped'](
                header=header, child_frame_id=child, transform=T['geometry_msgs/msg/Transform'](
                    translation=T['geometry_msgs/msg/Vector3'](x=1.0, y=0.0, z=0.0),
                    rotation=T['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)))
                for child in ('base_link', 'other_robot')]
            written.append((ns, tf, bytes(STORE.serialize_cdr(
                T['tf2_msgs/msg/TFMessage'](transforms=transforms), 'tf2_msgs/msg/TFMessage'))))
            written.append((ns + 1, diagnostics, bytes(STORE.serialize_cdr(
                T['diagnostic_msgs/msg/DiagnosticArray'](header=header, status=[]),
                'diagnostic_msgs/msg/DiagnosticArray'))))
    for k in range(106):
        ns = START_NS + k * 33_333_333
        written.append((ns, notes, bytes(STORE.serialize_cdr(
            T['std_msgs/msg/String'](data=f'note {k}'), 'std_msgs/msg/String'))))
    for ns, connection, data in sorted(written, key=lambda item: item[0]):
        writer.write(connection, ns, data)
    writer.close()
    return path


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_a_run_written_from_a_second_process_writes_the_same_bag(tmp_path, storage):
    bag = write_recording(tmp_path / 'run', storage)
    # Batches of a few messages and a look at the pipe after each copied message: many
    # hand-overs, their records interleaved with the copied ones, a last batch not full.
    script = ('import json, sys\n'
              'from urdf_state_publisher.recorded import writer as writer_process\n'
              'from urdf_state_publisher.recorded.run import run_bag, RunOptions\n'
              'writer_process.BATCH_BYTES = 2_000\n'
              'writer_process.COPIES_BETWEEN_LOOKS = 1\n'
              'bag, out, description, second_process = sys.argv[1:]\n'
              'summary = run_bag(bag, out, RunOptions(description=(description,), live=False,\n'
              '                  writer_process=second_process == "True"))\n'
              'print(json.dumps([summary.status, summary.error, summary.messages,\n'
              '                  summary.written, summary.replaced_transforms,\n'
              '                  summary.kept_transforms, len(summary.findings)]))\n')
    written, summaries = {}, {}
    for second_process in (False, True):
        out = tmp_path / f'out_{second_process}'
        result = python_script(script, bag, out, SAMPLE_URDF, second_process)
        assert result.returncode == 0, result.stderr
        summaries[second_process] = json.loads(result.stdout)
        written[second_process] = read_output(out)
    (alone, alone_connections), (split, split_connections) = written[False], written[True]
    recorded, _ = read_output(bag)
    # Every message of the recording read once, whichever process read it.
    assert summaries[True] == summaries[False]
    assert summaries[True][:3] == [0, None, len(recorded)]

    # Each topic the same messages in the same order; the node's diagnostics go on to the
    # recording's last message, after the joint states stop.
    assert set(by_topic(alone)) == {'/tf', '/tf_static', '/diagnostics', '/joint_states',
                                    '/notes', '/robot_description'}
    assert by_topic(split) == by_topic(alone)
    assert max(ns for topic, ns, _ in alone if topic == '/diagnostics') > max(
        ns for topic, ns, _ in alone if topic == '/joint_states') + BILLION // 2
    # Read in log-time order, whatever the order of the records in the file.
    assert [ns for _, ns, _ in split] == sorted(ns for _, ns, _ in split)
    assert {topic: (c.msgtype, c.msgdef, c.digest, c.ext)
            for topic, c in split_connections.items()} == {
        topic: (c.msgtype, c.msgdef, c.digest, c.ext) for topic, c in alone_connections.items()}


def test_a_run_is_planned_and_its_writer_started_before_numpy_is_loaded(tmp_path):
    # The writer process copies while the run loads numpy and the engine: the plan, the
    # command's arguments and the writer need neither.
    bag = write_states(tmp_path / 'run')
    script = ('import sys\n'
              'from pathlib import Path\n'
              'from urdf_state_publisher.recorded import command as bag; from '
              'urdf_state_publisher.recorded import plan as bag_plan; from '
              'urdf_state_publisher.recorded import writer as writer_process\n'
              'plan = bag_plan.plan_run(*map(Path, sys.argv[1:3]), bag_plan.RunOptions(\n'
              '    description=(sys.argv[3],), ros_args=("-p", "publish_joint_states:=true",\n'
              '    "-p", "source_list:=[/joint_states]", "-r", "__ns:=/resolved")))\n'
              'writer = writer_process.WriterProcess(sys.argv[2], plan.output_format,\n'
              '                                      plan.connections, plan.input_path,\n'
              '                                      plan.copies)\n'
              'writer.close()\n'
              'print(sorted(m for m in sys.modules if m.split(".")[0] == "numpy"))\n')
    result = python_script(script, bag, tmp_path / 'out', SAMPLE_URDF)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]'
    assert read_output(tmp_path / 'out')[0] == read_output(bag)[0]


def test_the_batches_pipe_holds_a_whole_batch_where_the_system_allows():
    # A batch handed over in one copy, not in a wait for each 64 KiB (a pipe's default size)
    # the writer reads.
    import fcntl
    import os

    from urdf_state_publisher.recorded import writer as writer_process

    reading, writing = os.pipe()
    writer_process._widen(writing)
    largest = int(Path('/proc/sys/fs/pipe-max-size').read_text())
    assert fcntl.fcntl(writing, fcntl.F_GETPIPE_SZ) == min(writer_process.BATCH_BYTES, largest)
    os.close(reading)
    os.close(writing)


def test_what_the_writer_process_raises_the_run_raises(tmp_path):
    # rosbags refuses a connection added twice: the writer process stops there, while the run
    # goes on handing over messages until it finds out, and raises what the writer raised.
    twice = ('[OutputConnection("/a", "std_msgs/msg/String", "string data", '
             '"RIHS01_" + "0" * 64, [])] * 2')
    script = with_writer_process('from urdf_state_publisher.recorded.output import '
                                 'BagOutputError\n'
                                 'call = "write"\n'
                                 'try:\n'
                                 '    for k in range(1_000_000):\n'
                                 '        writer.write(writer.handles[0], k, bytes(200))\n'
                                 '    call = "close"\n'
                                 '    writer.close()\n'
                                 'except BagOutputError as error:\n'
                                 '    left = len(multiprocessing.active_children())\n'
                                 '    print(f"{call} raised: {error}; writers left: {left}")\n',
                                 connections=twice, batch_bytes=100)
    result = python_script(script, tmp_path / 'out')
    assert result.returncode == 0, result.stderr
    # Raised by a hand-over (the writer ends within milliseconds of the error; a million
    # messages take seconds), not left for close to find.
    assert result.stdout.startswith(
        'write raised: WriterError: Connection can only be added once')
    assert result.stdout.rstrip().endswith('writers left: 0')


def test_the_outputs_own_types_are_defined_as_jazzy_defines_them(tmp_path):
    bag = write_states(tmp_path / 'run')
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF, '--ros-args', '-p',
                 'publish_joint_states:=true', '-p', 'source_list:=[/joint_states]',
                 '-r', '__ns:=/resolved')
    assert result.returncode == 0, result.stderr
    _, connections = read_output(tmp_path / 'out')
    ours = {topic: c for topic, c in connections.items() if topic != '/joint_states'}
    assert set(ours) == {'/tf', '/tf_static', '/diagnostics', '/resolved/robot_description',
                         '/resolved/joint_states'}
    for connection in ours.values():
        assert connection.msgdef.data == STORE.generate_msgdef(connection.msgtype,
                                                               ros_version=2)[0]
        assert connection.digest == STORE.hash_rihs01(connection.msgtype)


def test_a_bag_recorded_without_definitions_is_copied_with_jazzys(tmp_path):
    import sqlite3

    bag = tmp_path / 'run'
    writer = Writer(bag, version=9, storage_plugin=StoragePlugin.SQLITE3)
    writer.open()
    connection = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                       typestore=STORE)
    sent = [(START_NS + k * 10_000_000, joint_state(START_NS + k * 10_000_000, JOINTS,
                                                    [0.02] * 6)) for k in range(50)]
    for log_ns, data in sent:
        writer.write(connection, log_ns, data)
    writer.close()
    # As a rosbag2 before Iron stored it: schema 3, no message definitions.
    [database] = bag.glob('*.db3')
    with sqlite3.connect(database) as db:
        db.execute('UPDATE schema SET schema_version = 3')
        db.execute('DROP TABLE message_definitions')
    db.close()
    _, recorded = read_output(bag)
    assert recorded['/joint_states'].msgdef.data == ''
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF)
    assert result.returncode == 0, result.stderr
    messages, connections = read_output(tmp_path / 'out')
    assert [(log_ns, data) for topic, log_ns, data in messages
            if topic == '/joint_states'] == sent
    assert connections['/joint_states'].msgdef.data == STORE.generate_msgdef(
        'sensor_msgs/msg/JointState', ros_version=2)[0]


def test_a_writer_process_killed_is_one_error_of_the_run(tmp_path):
    # Killed (out of memory, a signal) before it could say why: the next hand-over says so.
    # A batch of 100 bytes: the second record is handed over with the first.
    script = with_writer_process('os.kill(writer._process.pid, signal.SIGKILL)\n'
                                 'writer._process.join()\n'
                                 'try:\n'
                                 '    writer.write(0, 1, bytes(200))\n'
                                 '    writer.write(0, 2, bytes(200))\n'
                                 'except writer_process.BagOutputError as error:\n'
                                 '    print(error)\n'
                                 'try:\n'
                                 '    writer.close()\n'
                                 'except writer_process.BagOutputError as error:\n'
                                 '    print(error)\n', batch_bytes=100)
    result = python_script(script, tmp_path / 'out')
    assert result.returncode == 0, result.stderr
    # Said by the hand-over, and again by every call after it.
    assert result.stdout == 2 * ('its writer process ended before closing it (killed: out of '
                                 'memory, or by a signal)\n')


def test_the_writer_process_ends_with_the_run_killed(tmp_path):
    # A run killed outright (SIGKILL: no clean-up of its own) leaves no writer process behind.
    script = with_writer_process('[child] = multiprocessing.active_children()\n'
                                 'print(child.pid, flush=True)\n'
                                 'time.sleep(600)\n')
    run = subprocess.Popen([sys.executable, '-c', script, str(tmp_path / 'out')],
                           stdout=subprocess.PIPE, text=True)
    writer = Path(f'/proc/{int(run.stdout.readline())}/status')
    run.kill()
    run.wait()
    # No longer the test's grandchild: gone, or a zombie its new parent has not reaped. It
    # ends as soon as it reads the end of the pipe; the minute is only how long to wait before
    # failing.
    deadline = time.monotonic() + 60
    while writer.exists() and 'State:\tZ' not in writer.read_text():
        assert time.monotonic() < deadline, 'the writer process outlived the run'
        time.sleep(0.05)
