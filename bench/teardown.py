# ruff: noqa: E402 - the domain is set before rclpy is imported
"""How long the node takes to stop: SIGINT to process exit, under a JointState stream.

  python bench/teardown.py                     # 50 runs, under whatever load the machine has
  python bench/teardown.py --busy 2 --runs 60  # with 2 CPU hogs (stress-ng --cpu 2) running
  python bench/teardown.py --peers             # the benchmark's 4 relays stop with the node
  python bench/teardown.py --json FILE         # also writes every run to FILE

Each run starts the node as users start it (the entry point of `python -m urdf_state_publisher`),
streams JointStates into it at --rate Hz (the benchmark's driver and joint values) until it
answers with /tf, for --stream more seconds, then sends SIGINT and keeps streaming until the
process has exited. With --peers, the benchmark's four relays (bench/relay.py) run beside it
on topics of their own and get their SIGINT at the same moment: DDS participants that leave
together, where Fast DDS's teardown has hung (benchmark.py stops its processes one after the
other for that reason). The table gives SIGINT to exit, and the phases of the
process's own stop, which a wrapper around the same entry point timestamps (CLOCK_MONOTONIC
is one clock for all processes of the machine):
  noticed   SIGINT to the spin loop's return (the loop polls the request; callbacks queue);
  guarded   the part process.TEARDOWN_LIMIT_S bounds: node.destroy_node() + rclpy shutdown;
  exit      from there to the end of the process (interpreter and middleware finalisation).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# A domain of its own: the benchmark's processes (domain 77) do not see these runs.
os.environ.setdefault('ROS_DOMAIN_ID', '78')

# (bench/, beside this file)
from harness import Driver, HERE, joint_states, NODE, percentile, PROCESSES, topic_prefix
import rclpy
from rclpy.serialization import serialize_message
from robots import generated_hands, jvrc1, sample_arm

from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.ros.process import TEARDOWN_LIMIT_S

# The node's entry point with timestamps at the phase boundaries, printed on stderr. Nothing
# else changes: the same StopRequest, run_node and node class.
TIMED_ENTRY = """
import sys, time
import rclpy
from urdf_state_publisher.ros import process
from urdf_state_publisher.ros.node import UrdfStatePublisher

def mark(name):
    print(f'teardown-mark {name} {time.monotonic()!r}', file=sys.stderr, flush=True)

spin = process.spin_until_stopped
def timed_spin(node, stop):
    spin(node, stop)
    mark('spun')
process.spin_until_stopped = timed_spin
destroy = UrdfStatePublisher.destroy_node
def timed_destroy(self):
    mark('destroy')
    destroy(self)
    mark('destroyed')
UrdfStatePublisher.destroy_node = timed_destroy
try_shutdown = rclpy.try_shutdown
def timed_try_shutdown(*args, **kwargs):
    try_shutdown(*args, **kwargs)
    mark('shut')
rclpy.try_shutdown = timed_try_shutdown
sys.exit(process.main())
"""
ROBOTS = {'sample_arm': sample_arm, 'jvrc1': jvrc1, 'many_hands': generated_hands}


def marks(log: str) -> dict[str, float]:
    found = {}
    for line in log.splitlines():
        if line.startswith('teardown-mark '):
            _, name, value = line.split()
            found[name] = float(value)
    return found


def start_peers(transforms: int, log_path: Path) -> list[subprocess.Popen]:
    """The benchmark's relays, each on its own topics, as benchmark.start_processes starts them."""
    peers = []
    with open(log_path, 'w') as log:
        for name, mode in PROCESSES.items():
            if mode is None:
                continue
            prefix = topic_prefix(name)
            peers.append(subprocess.Popen(
                [sys.executable, str(HERE / 'relay.py'), '--transforms', str(transforms),
                 '--mode', mode, '--ros-args', '-r', f'__node:=relay_{mode}'.replace('-', '_'),
                 '-r', f'joint_states:={prefix}joint_states', '-r', f'/tf:={prefix}tf'],
                stdout=log, stderr=subprocess.STDOUT))
    return peers


def one_run(driver: Driver, states: list[bytes], robot_path: Path, rate: float,
            stream_s: float, log_path: Path, peers: bool) -> dict:
    """Start, stream, SIGINT while streaming, stream until exit: the run's times."""
    with open(log_path, 'w') as log:
        process = subprocess.Popen(
            [sys.executable, '-c', TIMED_ENTRY, '--ros-args',
             '-p', f'description_file:={robot_path}', '-p', 'ignore_timestamp:=true'],
            stdout=log, stderr=subprocess.STDOUT)
    others = start_peers(len(RobotModel.from_file(robot_path).movable_joints),
                         log_path.with_suffix('.peers.log')) if peers else []
    signalled = False
    try:
        deadline = time.monotonic() + 60
        while not driver.drive(NODE, states, 100, 0.2, drain=0.1):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError('the node never answered a JointState with /tf:\n'
                                   + log_path.read_text()[-2000:])
        driver.drive(NODE, states, rate, stream_s, drain=0.0)
        exited: list[float] = []
        status: list[int] = []

        def wait() -> None:  # waitpid releases the GIL: the exit is seen as it happens
            status.append(process.wait())
            exited.append(time.monotonic())

        waiter = threading.Thread(target=wait, daemon=True)
        for peer in others:
            peer.send_signal(signal.SIGINT)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        signalled = True
        waiter.start()
        give_up = sent + TEARDOWN_LIMIT_S + 60
        while waiter.is_alive() and time.monotonic() < give_up:
            driver.drive(NODE, states, rate, 0.05, drain=0.0)
        waiter.join(5)
        if not exited:
            process.kill()
            process.wait()
            return {'status': None, 'exit_s': None}  # the finally below stops the peers
    finally:
        for child in [process, *others]:
            if not signalled:  # an error before the stop: stop them all the same way
                child.send_signal(signal.SIGINT)
            try:  # the relays stop as the node does: give them as long
                child.wait(TEARDOWN_LIMIT_S + 60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    peer_statuses = [peer.returncode for peer in others]
    found = marks(log_path.read_text())
    result = {'status': status[0], 'exit_s': exited[0] - sent}
    if any(peer_statuses):
        result['peer_statuses'] = peer_statuses
    if status[0]:  # what it printed: faulthandler's stack, if the limit ended it
        result['log'] = log_path.read_text()[-3000:]
    if {'spun', 'destroy', 'shut'} <= found.keys():
        result |= {'noticed_s': found['spun'] - sent,
                   'guarded_s': found['shut'] - found['destroy'],
                   'destroy_s': found['destroyed'] - found['destroy'],
                   'after_s': exited[0] - found['shut']}
    return result


def table(runs: list[dict]) -> str:
    columns = (('SIGINT to exit', 'exit_s'), ('noticed', 'noticed_s'),
               ('guarded (destroy+shutdown)', 'guarded_s'), ('of which destroy_node', 'destroy_s'),
               ('exit after shutdown', 'after_s'))
    lines = [f'{"seconds":<28} {"count":>5} {"p50":>6} {"p90":>6} {"p99":>6} {"max":>6}']
    for label, key in columns:
        values = [r[key] for r in runs if r.get(key) is not None]
        if values:
            figures = [percentile(values, q) for q in (0.5, 0.9, 0.99)] + [max(values)]
            lines.append(f'{label:<28} {len(values):>5} '
                         + ' '.join(f'{figure:>6.2f}' for figure in figures))
    statuses: dict[str, int] = {}
    for r in runs:
        key = 'killed (no exit)' if r['status'] is None else str(r['status'])
        statuses[key] = statuses.get(key, 0) + 1
    peers = sum(1 for r in runs if r.get('peer_statuses'))
    if peers:
        lines.append(f'runs where a relay did not exit 0: {peers}')
    lines.append('exits by status: ' + ', '.join(f'{k}: {v}' for k, v in sorted(statuses.items())))
    return '\n'.join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--runs', type=int, default=50)
    parser.add_argument('--rate', type=float, default=1000.0, help='JointStates per second')
    parser.add_argument('--stream', type=float, default=1.0,
                        help='seconds of stream after the first /tf, before SIGINT')
    parser.add_argument('--robot', choices=ROBOTS, default='many_hands')
    parser.add_argument('--busy', type=int, default=0,
                        help='keep this many CPU hogs (stress-ng --cpu N) running throughout')
    parser.add_argument('--peers', action='store_true',
                        help="the benchmark's relays run beside the node and stop with it")
    parser.add_argument('--json', type=Path, help='also write every run to this file')
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix='usp-teardown-'))
    robot = ROBOTS[args.robot](workdir) if args.robot == 'many_hands' else ROBOTS[args.robot]()
    states = [serialize_message(s)
              for s in joint_states(RobotModel.from_file(robot.path), 200, seed=2)]
    hogs = None
    if args.busy:
        if shutil.which('stress-ng') is None:
            parser.error('--busy needs stress-ng on PATH (e.g. apt-get install stress-ng)')
        hogs = subprocess.Popen(['stress-ng', '--cpu', str(args.busy), '--quiet'],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    rclpy.init()
    driver = Driver()
    runs = []
    try:
        driver.connect(NODE, '/')
        print(f'{robot.label}, {args.rate:g} Hz, {args.stream:g} s of stream before SIGINT, '
              f'{os.cpu_count()} cores, {args.busy} CPU hog(s), '
              f'{"4 relays stopped with it, " if args.peers else ""}TEARDOWN_LIMIT_S '
              f'{TEARDOWN_LIMIT_S:g}', flush=True)
        for i in range(args.runs):
            run = one_run(driver, states, robot.path, args.rate, args.stream,
                          workdir / f'run_{i}.log', args.peers)
            runs.append(run)
            print(f'run {i + 1:>3}: status {run["status"]}, '
                  + ', '.join(f'{k} {v:.3f}' if isinstance(v, float) else f'{k} {v}'
                              for k, v in run.items() if k not in ('status', 'log')
                              and v is not None), flush=True)
            if run.get('log'):
                print(run['log'], flush=True)
    finally:
        if hogs is not None:
            os.killpg(hogs.pid, signal.SIGTERM)  # stress-ng and every worker it started
            hogs.wait()
        driver.disconnect()
        driver.node.destroy_node()
        rclpy.try_shutdown()
    print(table(runs))
    if args.json:
        args.json.write_text(json.dumps({'robot': robot.label, 'rate': args.rate,
                                         'busy': args.busy, 'peers': args.peers,
                                         'runs': runs}, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
