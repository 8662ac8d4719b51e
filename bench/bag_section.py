"""Section 7 of the benchmark: urdf_state_publisher_bag against copying the same bag.

A bag of a 100-joint robot's JointStates at 500 Hz (MCAP) is processed by the command in the
default configuration and with every message published (ignore_timestamp); the floor is rosbags
copying the same bag, every record read and written, measured in the same run. The same
recording as a ROS 1 bag (each message converted to CDR on the way) is run in the default
configuration, its output MCAP too. The command runs as a lone run does, the recording copied
and the output written by a second process (recorded.writer); as processes, it is also run with
--jobs 1, in one, and on the ROS 1 bag. Runs alternate in five rounds, each round running every
way back to back: the seconds shown are each way's best, and every ratio is the median of the
rounds' own ratios (this machine's speed moves by a third within seconds; the best of each way,
taken in different rounds, would put that into the ratio). The bags are in memory (a tmpfs,
/dev/shm, where the machine has one): on a disk the time to write grows with the bytes
written, and the command writes more than the copy, its /tf. Peak memory (the process's
high-water mark, plus its writer process's when it has one) is read in a fresh process per
bag, for the bag and for one ten times longer: what streaming promises is that the second adds
nothing that grows.
"""

from __future__ import annotations

import compileall
import json
import os
from pathlib import Path
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import urdf_state_publisher

RATE_HZ = 500
BILLION = 1_000_000_000
START_NS = 1_700_000_000 * BILLION
ROUNDS = 5
# The command and the floor, each in a process of its own: what its main loop costs, and the
# peak RSS of the whole process.
RUN = r"""
import contextlib, io, json, sys, time
mode, source, target, *rest = sys.argv[1:]
# Timed from after the imports, as the command imports what it needs at start.
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
import numpy
from urdf_state_publisher.recorded import command as bag
from urdf_state_publisher.engine import state_engine as engine
start = time.perf_counter()
if mode.startswith('floor'):
    # floor_tf SIZE: also a prebuilt /tf of SIZE bytes for each record, as the command writes
    # one for each with every message published.
    payload = bytes(int(rest[0])) if mode == 'floor_tf' else None
    with Reader(source) as reader, Writer(target, version=8,
                                          storage_plugin=StoragePlugin.MCAP) as writer:
        out = {c.id: writer.add_connection(c.topic, c.msgtype, msgdef=c.msgdef.data,
                                           rihs01=c.digest) for c in reader.connections}
        if payload is not None:
            tf = writer.add_connection('/tf', 'tf2_msgs/msg/TFMessage', msgdef='x',
                                       rihs01='RIHS01_' + '0' * 64)
        for connection, log_ns, data in reader.messages():
            writer.write(out[connection.id], log_ns, data)
            if payload is not None:
                writer.write(tf, log_ns, payload)
else:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = bag.main([source, target, *rest])
    assert status == 0, status
elapsed = time.perf_counter() - start
# VmHWM: this process image's peak (ru_maxrss would also count the interpreter before the
# ROS wheels' bootstrap re-executes it).
with open('/proc/self/status') as status:
    [peak_kib] = [int(line.split()[1]) for line in status if line.startswith('VmHWM:')]
# And the peak of the process that wrote the output, where one did: the two summed, the pages
# they share counted twice.
import resource
peak_kib += resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({'seconds': elapsed, 'peak_rss_mib': peak_kib / 1024}))
"""


def write_bag(path: Path, description: Path, seconds: float) -> int:
    """A bag of the robot's JointStates at RATE_HZ for `seconds`; the number of records."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import get_typestore, Stores

    from urdf_state_publisher.kinematics.model import RobotModel

    store = get_typestore(Stores.ROS2_JAZZY)
    model = RobotModel.from_file(description)
    names = [n for n in model.independent_joints if n in model.scalar_joints]
    rng = np.random.default_rng(3)
    lower = np.array([max(model.limits(n)[0], -3.0) for n in names])
    upper = np.array([min(model.limits(n)[1], 3.0) for n in names])
    types = store.types
    # A few hundred distinct states, as a driver repeats its names with new values.
    templates = [bytes(store.serialize_cdr(types['sensor_msgs/msg/JointState'](
        header=types['std_msgs/msg/Header'](
            stamp=types['builtin_interfaces/msg/Time'](sec=0, nanosec=0), frame_id=''),
        name=names,
        position=lower + (upper - lower) * rng.random(len(names)),
        velocity=rng.random(len(names)), effort=rng.random(len(names))),
        'sensor_msgs/msg/JointState')) for _ in range(256)]
    period = BILLION // RATE_HZ
    count = int(seconds * RATE_HZ)
    with Writer(path, version=8, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                           typestore=store)
        for k in range(count):
            stamp = START_NS + k * period
            data = bytearray(templates[k % len(templates)])
            data[4:12] = int(stamp // BILLION).to_bytes(4, 'little') + int(
                stamp % BILLION).to_bytes(4, 'little')
            writer.write(connection, stamp + 200_000, bytes(data))
    return count


def write_ros1_bag(path: Path, rosbag2: Path) -> None:
    """The recording of the rosbag2 bag at `rosbag2` as ROS 1 recorded it (headers with seq)."""
    from rosbags.rosbag1 import Writer
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import get_typestore, Stores

    ros1, ros2 = get_typestore(Stores.ROS1_NOETIC), get_typestore(Stores.ROS2_JAZZY)
    converted: dict[bytes, bytes] = {}  # the 256 distinct states, each converted once
    with Reader(rosbag2) as reader, Writer(path) as writer:
        connection = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                           typestore=ros1)
        for _, log_ns, data in reader.messages():
            body = bytes(data[12:])  # after the CDR header and the stamp: the same in each
            if body not in converted:
                converted[body] = bytes(ros2.cdr_to_ros1(data, 'sensor_msgs/msg/JointState'))
            message = bytearray(converted[body])
            message[4:12] = data[4:12]  # seq stays 0; the stamp, little-endian in both
            writer.write(connection, log_ns, bytes(message))


# The floor as a process of its own, as the command is one: it imports only rosbags.
# The copy as a process of its own: SOURCE TARGET, or several such pairs one after the other.
FLOOR_PROCESS = r"""
import sys
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
for source, target in zip(sys.argv[1::2], sys.argv[2::2]):
    with Reader(source) as reader, Writer(target, version=8,
                                          storage_plugin=StoragePlugin.MCAP) as writer:
        out = {c.id: writer.add_connection(c.topic, c.msgtype, msgdef=c.msgdef.data,
                                           rihs01=c.digest) for c in reader.connections}
        for connection, log_ns, data in reader.messages():
            writer.write(out[connection.id], log_ns, data)
"""


def process_seconds(argv: list[str], target: Path) -> float:
    """The wall time of a whole process, start-up included."""
    return processes_seconds([argv], target)


def processes_seconds(argvs: list[list[str]], target: Path) -> float:
    """The wall time of processes started at once, from their start to the last one's end."""
    if target.exists():
        shutil.rmtree(target)
    start = time.perf_counter()
    processes = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True) for argv in argvs]
    said = [process.communicate(timeout=3600)[0] for process in processes]
    elapsed = time.perf_counter() - start
    for argv, process, output in zip(argvs, processes, said):
        if process.returncode != 0:
            raise RuntimeError(f'{argv[:3]} failed: {output}')
    return elapsed


def run(mode: str, source: Path, target: Path, *arguments: str) -> dict:
    if target.exists():
        shutil.rmtree(target)
    result = subprocess.run([sys.executable, '-c', RUN, mode, str(source), str(target),
                             *arguments], capture_output=True, text=True, timeout=3600)
    if result.returncode != 0:
        raise RuntimeError(f'{mode} failed: {result.stdout}{result.stderr}')
    return json.loads(result.stdout.splitlines()[-1])


def bag_section(robot, seconds: float, batch_scale: tuple[int, int], workdir: Path,
                report: dict) -> None:
    """Print and record the table; `robot` is a BenchRobot of about 100 joints.

    `batch_scale`: the batch's runs a worker and rounds (batch_throughput).
    """
    print(f'\n7. recorded data: urdf_state_publisher_bag on {robot.label}, {RATE_HZ} Hz, '
          f'{seconds:g} s of bag (MCAP), against rosbags copying the same bag; {ROUNDS} '
          "alternating rounds: seconds the best, ratios the median of the rounds' own")
    # The package's bytecode compiled, as an installed package has it: this checkout's
    # environment may forbid writing it (PYTHONDONTWRITEBYTECODE), and compiling its modules
    # at each start would be counted against the command.
    compileall.compile_dir(Path(urdf_state_publisher.__file__).parent, quiet=1)
    shm = Path('/dev/shm')
    workdir = Path(tempfile.mkdtemp(prefix='usp-bag-', dir=shm if shm.is_dir() else workdir))
    bag = workdir / 'bag_in'
    records = write_bag(bag, robot.path, seconds)
    ros1_bag = workdir / 'bag_in.bag'
    write_ros1_bag(ros1_bag, bag)
    description = ('--description', str(robot.path))
    ways = {'floor: rosbags copy': ('floor', bag, ()),
            'default configuration': ('bag', bag, description),
            'every message': ('bag', bag, (*description, '--ros-args', '-p',
                                           'ignore_timestamp:=true')),
            'ROS 1 bag, default': ('bag', ros1_bag, (*description, '--storage', 'mcap'))}
    best: dict[str, dict] = {}
    in_rounds: dict[str, list[float]] = {label: [] for label in ways}
    for _ in range(ROUNDS):
        for label, (mode, source, arguments) in ways.items():
            measured = run(mode, source, workdir / 'bag_out', *arguments)
            in_rounds[label].append(measured['seconds'])
            if label not in best or measured['seconds'] < best[label]['seconds']:
                best[label] = measured

    def median_ratio(label: str, to: str = 'floor: rosbags copy') -> float:
        """The median of the rounds' own ratios of `label` to `to` (see the module's doc)."""
        return statistics.median(a / b for a, b in zip(in_rounds[label], in_rounds[to]))
    print(f'{"way":<24} {"s":>7} {"us/record":>10} {"x floor":>8} {"x real time":>12} '
          f'{"peak MiB":>9}')
    rows = []
    for label, measured in best.items():
        rows.append({'way': label, 'seconds': measured['seconds'],
                     'us_per_record': measured['seconds'] / records * 1e6,
                     'ratio_to_floor': median_ratio(label),
                     'real_time_multiple': seconds / measured['seconds'],
                     'peak_rss_mib': measured['peak_rss_mib']})
        row = rows[-1]
        print(f'{label:<24} {row["seconds"]:>7.2f} {row["us_per_record"]:>10.1f} '
              f'{row["ratio_to_floor"]:>8.2f} {row["real_time_multiple"]:>12.0f} '
              f'{row["peak_rss_mib"]:>9.1f}')
    # The command as a user runs it, against the copy as a process of its own; every message
    # against a copy that also writes a prebuilt /tf of the command's size for each record.
    command = [sys.executable, '-m', 'urdf_state_publisher.recorded.command']
    tf_size = first_tf_size(workdir, bag, description)
    # Each round runs the command and its copy back to back (paired, as above).
    whole: dict[str, float] = {}
    ratios: dict[str, list[float]] = {'default': [], 'one process': [], 'every message': [],
                                      'ROS 1': []}
    for _ in range(ROUNDS):
        round_seconds = {}
        for label, argv, target in (
                ('floor: rosbags copy, a process', [sys.executable, '-c', FLOOR_PROCESS,
                                                    str(bag), str(workdir / 'bag_out')],
                 workdir / 'bag_out'),
                ('command, default, a process', [*command, str(bag), str(workdir / 'bag_out'),
                                                 *description], workdir / 'bag_out'),
                # --jobs 1: one process, without the second that copies and writes.
                ('command, --jobs 1, a process', [*command, str(bag), str(workdir / 'bag_out'),
                                                  *description, '--jobs', '1'],
                 workdir / 'bag_out'),
                ('command, ROS 1 bag, a process', [*command, str(ros1_bag),
                                                   str(workdir / 'bag_out'),
                                                   *ways['ROS 1 bag, default'][2]],
                 workdir / 'bag_out')):
            round_seconds[label] = process_seconds(argv, target)
            whole[label] = min(whole.get(label, float('inf')), round_seconds[label])
        copy = round_seconds['floor: rosbags copy, a process']
        ratios['default'].append(round_seconds['command, default, a process'] / copy)
        ratios['one process'].append(round_seconds['command, --jobs 1, a process'] / copy)
        ratios['ROS 1'].append(round_seconds['command, ROS 1 bag, a process']
                               / round_seconds['command, default, a process'])
        floor_tf = run('floor_tf', bag, workdir / 'bag_out', str(tf_size))
        every = run('bag', bag, workdir / 'bag_out', *ways['every message'][2])
        ratios['every message'].append(every['seconds'] / floor_tf['seconds'])
        if floor_tf['seconds'] < best.get('floor_tf', {'seconds': float('inf')})['seconds']:
            best['floor_tf'] = floor_tf
    process_ratio, one_process, tf_ratio, ros1_process = (statistics.median(ratios[k]) for k in (
        'default', 'one process', 'every message', 'ROS 1'))
    print(f'as processes (start-up included), the median of {ROUNDS} rounds of ratios: the '
          f'command {process_ratio:.2f}x the copy (best {whole["command, default, a process"]:.2f}'
          f' s against {whole["floor: rosbags copy, a process"]:.2f} s); with --jobs 1, its '
          f'output written by the same process: {one_process:.2f}x (best '
          f'{whole["command, --jobs 1, a process"]:.2f} s); the ROS 1 bag: {ros1_process:.2f}x '
          f'the rosbag2 bag (best {whole["command, ROS 1 bag, a process"]:.2f} s)')
    print(f'every message against a copy that also writes a {tf_size:,}-byte /tf a record '
          f'(best {best["floor_tf"]["seconds"]:.2f} s), the median of {ROUNDS} rounds of ratios: '
          f'{tf_ratio:.2f}x')
    batch = batch_throughput(workdir, bag, description, *batch_scale)
    # Memory: a bag ten times longer, default configuration, in a fresh process.
    longer = workdir / 'bag_in_10x'
    write_bag(longer, robot.path, seconds * 10)
    long_peak = run('bag', longer, workdir / 'bag_out', *description)['peak_rss_mib']
    added = long_peak - best['default configuration']['peak_rss_mib']
    shutil.rmtree(longer)
    print(f'peak RSS, default configuration: {best["default configuration"]["peak_rss_mib"]:.1f} '
          f'MiB for {seconds:g} s of bag, {long_peak:.1f} MiB for {10 * seconds:g} s '
          f'(+{added:.1f} MiB)')
    default, every = (median_ratio(k) for k in ('default configuration', 'every message'))
    ros1 = median_ratio('ROS 1 bag, default', 'default configuration')
    targets = [
        f'one run as a process, default configuration: {process_ratio:.2f}x the copy as a '
        f'process (target at most 1.5x): {"met" if process_ratio <= 1.5 else "NOT MET"}',
        f'every message: {tf_ratio:.2f}x the copy that also writes the /tf bytes (target at '
        f'most 1.5x): {"met" if tf_ratio <= 1.5 else "NOT MET"}',
        f'many runs on {batch["workers"]} workers: {batch["speedup"]:.2f}x the throughput of '
        f'one at a time (target at least 1.8x): {"met" if batch["speedup"] >= 1.8 else "NOT MET"}'
        f'; the same {batch["runs_per_worker"]} runs as fast as on one worker: '
        f'{batch["end_to_end"]:.2f}x; the copy\'s own (the floor): {batch["floor_speedup"]:.2f}x',
        f'a ROS 1 bag, the command as a process: {ros1_process:.2f}x the same recording as a '
        f'rosbag2 bag (target at most 1.5x): {"met" if ros1_process <= 1.5 else "NOT MET"}; in '
        f'process, after the imports: {ros1:.2f}x',
        f'default configuration: {default:.2f}x the floor (target at most 1.5x): '
        f'{"met" if default <= 1.5 else "NOT MET"}',
        f'every message: {every:.2f}x the floor (target at most 3x): '
        f'{"met" if every <= 3.0 else "NOT MET"}',
        f'a bag ten times longer adds {added:.1f} MiB (target at most 10 MiB): '
        f'{"met" if added <= 10.0 else "NOT MET"}',
    ]
    for line in targets:
        print(f'target: {line}')
    print('the replay way (ros2 bag play with the node running and ros2 bag record): bound to '
          '1x real time (not runnable here: rosbag2 is not on PyPI)')
    shutil.rmtree(workdir)
    report['bag'] = {'robot': robot.label, 'rate_hz': RATE_HZ, 'seconds_of_bag': seconds,
                     'records': records, 'rows': rows, 'peak_rss_10x_mib': long_peak,
                     'added_by_10x_mib': added, 'targets': targets,
                     'process_seconds': whole, 'floor_tf_seconds': best['floor_tf']['seconds'],
                     'round_ratios': ratios,
                     'batch': batch}


def first_tf_size(workdir: Path, bag: Path, description: tuple[str, ...]) -> int:
    """The size of the /tf message the command writes for this robot."""
    from rosbags.rosbag2 import Reader

    run('bag', bag, workdir / 'bag_out', *description)
    with Reader(workdir / 'bag_out') as reader:
        tf = [c for c in reader.connections if c.topic == '/tf']
        for _, _, data in reader.messages(tf):
            return len(data)
    raise RuntimeError('no /tf written')


def batch_throughput(workdir: Path, bag: Path, description: tuple[str, ...],
                     each: int, rounds: int) -> dict:
    """Batches of copies of the bag in one command, on one worker and on every core.

    The throughput of W workers is runs a second in a batch of W * `each` runs on W workers
    against one of `each` runs on one: each worker as busy (weak scaling), the start-up in
    both, and the machine's speed, which moves within seconds, alike for the two. The strong
    scaling, the same `each` runs on one worker and on W, is shown beside it, and a floor.
    `rounds` paired rounds.
    """
    workers = os.cpu_count() or 1
    shared = workers * each
    # (workers, runs); 0 workers: the floor, rosbags copying `each` bags one after the other
    # in one process, and in `workers` such processes at once: what the machine gives.
    # (On one core some are the same way, timed once a round.)
    ways = tuple(dict.fromkeys(((1, each), (workers, shared), (workers, each), (0, 1),
                                (0, workers))))
    sizes = tuple(dict.fromkeys((each, shared)))
    for size in sizes:
        runs = workdir / f'runs_{size}'
        runs.mkdir()
        for k in range(size):  # links: the same bytes, as many recordings
            shutil.copytree(bag, runs / f'run_{k}', copy_function=os.link)
    best: dict[tuple[int, int], float] = {}
    in_rounds: dict[tuple[int, int], list[float]] = {way: [] for way in ways}
    # Paired rounds, as the ratios above: each round times every way back to back, in
    # alternating order, and each figure is the median of the rounds' own.
    for round_ in range(rounds):
        for jobs, size in ways[::-1 if round_ % 2 else 1]:
            out = workdir / 'batch_out'
            if jobs:
                measured = process_seconds(
                    [sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                     str(workdir / f'runs_{size}'), str(out), *description, '--jobs', str(jobs)],
                    out)
            else:
                measured = processes_seconds([[sys.executable, '-c', FLOOR_PROCESS, *(
                    str(path) for k in range(each)
                    for path in (workdir / f'runs_{shared}' / f'run_{p * each + k}',
                                 out / f'copy_{p}_{k}'))] for p in range(size)], out)
            in_rounds[jobs, size].append(measured)
            best[jobs, size] = min(best.get((jobs, size), float('inf')), measured)
    for size in sizes:
        shutil.rmtree(workdir / f'runs_{size}')
    speedups = [workers * one / every
                for one, every in zip(in_rounds[1, each], in_rounds[workers, shared])]
    strong = [one / every for one, every in zip(in_rounds[1, each], in_rounds[workers, each])]
    floors = [workers * one / every
              for one, every in zip(in_rounds[0, 1], in_rounds[0, workers])]
    speedup, end_to_end, floor = (statistics.median(v) for v in (speedups, strong, floors))
    print(f'batches (best s): {each} runs {best[1, each]:.2f} s on 1 worker, '
          f'{best[workers, each]:.2f} s on {workers}; {shared} runs on {workers} '
          f'{best[workers, shared]:.2f} s. The median of {rounds} rounds: {workers} '
          f'workers {speedup:.2f}x the runs a second of one, each with {each} runs; the same '
          f'{each} runs {end_to_end:.2f}x as fast as on one worker; the floor, rosbags copying '
          f'{each} bags in each of {workers} processes at once against in one: {floor:.2f}x '
          f'the bags a second (best {best[0, 1]:.2f} s and {best[0, workers]:.2f} s)')
    return {'runs_per_worker': each, 'workers': workers,
            'best_seconds': {(f'{size} runs, {jobs} worker(s)' if jobs else
                              f'floor: {size} process(es), {each} copies each'):
                             seconds for (jobs, size), seconds in best.items()},
            'speedup': speedup, 'round_speedups': speedups, 'end_to_end': end_to_end,
            'round_end_to_end': strong, 'floor_speedup': floor, 'round_floor_speedups': floors}
