"""Section 9 of the benchmark: a batch of urdf_state_publisher_bag on a Dask cluster.

The same eight recordings (a 100-joint robot's JointStates at 500 Hz, MCAP; hard links to one
bag) are processed by one command four ways: on the local pool with two processes (`--jobs 2`)
and with one (`--jobs 1`: what the machine gives two at once), on a Dask cluster of two
workers and on one of one worker (`--cluster`), each worker a process of one thread under its
nanny, the scheduler and the workers on this machine (test/dask_cluster.py, as the tests start
them), each cluster started for its way and ended after it. Each figure is a whole command,
start-up, connecting and the table included. The ways alternate in paired rounds, and each
ratio is the median of the rounds' own (this machine's speed moves within seconds). Targets:
the cluster of two workers at least 0.9 times the local pool's throughput, and two workers at
least 1.8 times one. The bags are in memory (/dev/shm) where the machine has it.
"""

from __future__ import annotations

import compileall
import os
from pathlib import Path
import shutil
import statistics
import sys
import tempfile

from bag_section import process_seconds, RATE_HZ, write_bag

import urdf_state_publisher

RECORDINGS = 8
# The scheduler and worker processes of the tests, started the same way here.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'test'))


def cluster_section(robot, seconds: float, rounds: int, workdir: Path, report: dict) -> None:
    """Print and record the section; `robot` is a BenchRobot of about 100 joints."""
    from dask_cluster import DaskCluster

    print(f'\n9. a cluster: urdf_state_publisher_bag on {RECORDINGS} recordings of '
          f'{robot.label}, {RATE_HZ} Hz, {seconds:g} s each (MCAP): the local pool of 2 '
          f'processes and of 1, a Dask cluster of 2 workers and one of 1, on this machine; '
          f'{rounds} '
          "alternating rounds: seconds the best, ratios the median of the rounds' own")
    compileall.compile_dir(Path(urdf_state_publisher.__file__).parent, quiet=1)
    shm = Path('/dev/shm')
    workdir = Path(tempfile.mkdtemp(prefix='usp-cluster-', dir=shm if shm.is_dir() else workdir))
    bag = workdir / 'bag_in'
    write_bag(bag, robot.path, seconds)
    runs = workdir / 'runs'
    runs.mkdir()
    for k in range(RECORDINGS):  # links: the same bytes, as many recordings
        shutil.copytree(bag, runs / f'run_{k}', copy_function=os.link)
    command = [sys.executable, '-m', 'urdf_state_publisher.recorded.command', str(runs),
               str(workdir / 'out'), '--description', str(robot.path)]
    # Each way's workers: the local pool's processes, or a Dask cluster's (started for the
    # way, and ended after it, so that no idle cluster takes the machine from another way).
    ways = {'local pool, 2 processes': ('--jobs', 2), 'Dask, 2 workers': ('--cluster', 2),
            'Dask, 1 worker': ('--cluster', 1), 'local pool, 1 process': ('--jobs', 1)}
    timed: dict[str, list[float]] = {way: [] for way in ways}
    for round_ in range(rounds):
        for way, (option, workers) in list(ways.items())[::-1 if round_ % 2 else 1]:
            if option == '--jobs':
                timed[way].append(process_seconds([*command, option, str(workers)],
                                                  workdir / 'out'))
                continue
            with DaskCluster(workdir / f'cluster_{round_}_{workers}', workers=workers) as dask:
                timed[way].append(process_seconds([*command, option, dask.address],
                                                  workdir / 'out'))
    shutil.rmtree(workdir)
    local, two_workers, one_worker, one_process = (timed[way] for way in ways)
    against_local = statistics.median(pool / dask for pool, dask in zip(local, two_workers))
    scaling = statistics.median(single / double
                                for single, double in zip(one_worker, two_workers))
    # What this machine gives two at once: the local pool's own, beside the cluster's.
    machine = statistics.median(single / double for single, double in zip(one_process, local))
    for way, figures in timed.items():
        print(f'{way}: best {min(figures):.2f} s, {RECORDINGS / min(figures):.2f} runs a second')
    targets = [
        f'a cluster of 2 workers: {against_local:.2f}x the throughput of the local pool of 2 '
        f'processes (target at least 0.9x): {"met" if against_local >= 0.9 else "NOT MET"}',
        f'2 workers: {scaling:.2f}x the throughput of 1 (target at least 1.8x): '
        f'{"met" if scaling >= 1.8 else "NOT MET"}; the local pool\'s 2 processes against 1 '
        f'in the same rounds (what this machine gives): {machine:.2f}x',
    ]
    for line in targets:
        print(f'target: {line}')
    report['cluster'] = {'robot': robot.label, 'rate_hz': RATE_HZ, 'seconds_of_bag': seconds,
                         'recordings': RECORDINGS, 'seconds': timed,
                         'against_local_pool': against_local, 'two_against_one': scaling,
                         'local_two_against_one': machine,
                         'targets': targets}
