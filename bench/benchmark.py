"""Benchmark of urdf_state_publisher against rclpy relays measured in the same run.

  python bench/benchmark.py                  # the full run (about 20 minutes)
  python bench/benchmark.py --smoke          # under a minute: that the script works (tests)
  python bench/benchmark.py --long           # adds node memory after 1 000 000 messages
  python bench/benchmark.py --json FILE      # also writes every figure to FILE
  python bench/benchmark.py --only memory    # section 5 alone (about a minute)
  python bench/benchmark.py --only fleet     # section 6 alone (about 5 minutes)
  python bench/benchmark.py --only bag       # section 7 alone (about 5 minutes)
  python bench/benchmark.py --only latency   # section 8 alone (about 3 minutes)
  python bench/benchmark.py --only cluster   # section 9 alone (about 3 minutes)

Sections:
  1. in-process cost per JointState: the node's joint_states callback, called with what its
     subscription delivers (CDR bytes for a raw subscription, else a message), from entry to
     the return of publish() on /tf; beside it the floor relay's callback (bench/relay.py);
  2. end to end over DDS with every message published (ignore_timestamp), per robot and rate,
     each process on its own: the node started as users start it, and the relays of
     bench/relay.py (SingleThreadedExecutor, EventsExecutor and the two floors): CPU per
     JointState sent, /tf out per JointState in, latency from JointState publish to /tf
     receipt, with ratios to the relays of the same robot and rate;
  3. end to end over DDS in the default configuration (publish_frequency 20 Hz, the
     node started with its description only), against a relay that decimates alike: CPU per
     JointState received and per /tf published, and per thread; then the same with two
     sources (each half of the joints on its own topic, source_list) and the resolved
     joint_states published (publish_joint_states), against the same floor reading both;
  4. start-up: process start to the first complete /tf_static, largest robot;
  5. memory: the running node's RSS beside a bare rclpy node's, what each step from a bare
     interpreter to the running node adds, and the node's RSS after 10 000 (and with --long
     1 000 000) messages;
  6. a fleet: N robots (1, 10, 50) at 100 Hz each, default configuration, as N processes and
     as N nodes loaded into one urdf_state_publisher_container: total RSS (and PSS), what
     each robot after the first adds, beside a bare rclpy node's process, and CPU per
     JointState;
  7. recorded data: urdf_state_publisher_bag on a bag of a 100-joint robot at 500 Hz, in the
     default and the every-message configurations, against rosbags copying the same bag, and
     its peak memory on a bag ten times longer (bench/bag_section.py);
  8. latency: JointState publish -> /tf receipt, p50 and p99, of the node and of the lean
     relay (raw subscription, EventsExecutor, prebuilt bytes; decimating alike in the default
     configuration), the sample robot (8 joints, panda's size) at 100 Hz and a 100-joint robot
     at 500 Hz, default and every-message configurations, runs alternating;
  9. a cluster: the bag command's batch of eight recordings on a Dask cluster of two workers
     against the local pool of two processes, and two workers against one, all on this
     machine (bench/bag_cluster_section.py).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, replace
import json
import os
from pathlib import Path
import platform
import random
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

from bag_cluster_section import cluster_section  # bench/, beside this file
from bag_section import bag_section  # bench/, beside this file
import psutil
import rclpy
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message, serialize_message
from relay import tf_pieces
from robots import BenchRobot, generated_hands, jvrc1, sample_arm
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.model import RobotModel
from urdf_state_publisher.node import UrdfStatePublisher
from urdf_state_publisher.qos import TF_QOS

# Read by rclpy.init() and inherited by the processes started here: a domain of our own, so
# that no figure includes another run's traffic (the tests set theirs before starting us).
os.environ.setdefault('ROS_DOMAIN_ID', '77')
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
HERE = Path(__file__).resolve().parent
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
NODE = 'urdf_state_publisher'
# Process name -> bench/relay.py --mode (None: the node). The order runs alternate in.
PROCESSES = {NODE: None, 'relay single': 'single', 'relay events': 'events',
             'floor events': 'floor-events', 'floor waitset': 'floor-waitset'}
BASELINE, EVENTS, FLOORS = 'relay single', 'relay events', ('floor events', 'floor waitset')
DECIMATING_FLOOR = 'floor decimating'


@dataclass(frozen=True)
class Configuration:
    """The node's parameters beyond its description, and the relays it is measured against."""

    label: str
    node_args: tuple[str, ...]
    processes: dict[str, str | None]
    # The JointState topics, each sent its share of the joints at the rate, all with one stamp.
    topics: tuple[str, ...] = ('joint_states',)


# Every JointState published: the node ignores stamps, each relay publishes every message.
EVERY_MESSAGE = Configuration('every message', ('-p', 'ignore_timestamp:=true'), PROCESSES)
# The node's defaults (publish_frequency 20 Hz), against a relay that decimates alike.
DEFAULT_CONFIG = Configuration('default', (), {NODE: None,
                                               DECIMATING_FLOOR: 'floor-decimating'})
# Section 8, latency: the node against the lean relay alone (raw subscription, EventsExecutor,
# prebuilt bytes), every message; in the default configuration DEFAULT_CONFIG's relay is it.
LATENCY_EVERY = replace(EVERY_MESSAGE, processes={NODE: None, 'floor events': 'floor-events'})
# Two drivers merged into the resolved joint_states, against the same floor reading both.
TWO_SOURCES = Configuration(
    'two sources, joint_states out',
    ('-p', 'source_list:=[arm/joint_states, gripper/joint_states]',
     '-p', 'publish_joint_states:=true'),
    DEFAULT_CONFIG.processes, ('arm/joint_states', 'gripper/joint_states'))
STAMP = struct.Struct('<iI')  # builtin_interfaces/Time as CDR stores it
CPP_FACT = ('C++ robot_state_publisher 3.3.3, built from source on this machine against the '
            'Kilted wheels, cost 0.25–0.35× the SingleThreadedExecutor relay per JointState '
            'at 500 Hz (not measured here).')


@dataclass
class Scale:
    in_process_messages: int
    rates: tuple[int, ...]
    seconds: float  # measured per (robot, rate, process), split over `rounds`
    rounds: int
    warm_up: float
    memory_messages: tuple[int, ...]
    startup_runs: int
    memory_stream_s: float  # of 1 kHz joint states before the running node's RSS is read
    fleet_sizes: tuple[int, ...]  # section 6: robots per fleet
    fleet_seconds: float  # section 6: measured per fleet and way of running it
    bag_seconds: float  # section 7: of bag at 500 Hz
    bag_batch: tuple[int, int]  # section 7: a batch's runs a worker, and its paired rounds
    cluster: tuple[float, int]  # section 9: seconds of bag a recording, and paired rounds


FULL = Scale(10_000, (100, 500, 1000), 5.0, 4, 0.25, (10_000,), 3, 10.0, (1, 10, 50), 5.0,
             60.0, (8, 7), (120.0, 3))
SMOKE = Scale(300, (200,), 1.0, 1, 0.3, (1_000,), 1, 1.0, (1, 3), 1.0, 2.0, (2, 1), (1.0, 1))


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def joint_states(model: RobotModel, count: int, seed: int = 1) -> list[JointState]:
    """`count` JointStates naming every independent joint, unstamped, as a healthy robot sends.

    Every value within its joint's limits and keeping every mimic follower within its own
    (the sample arm's fingertip has narrower ones): a state the node clamps is one it warns
    about, which is not the configuration to measure.
    """
    rng = random.Random(seed)
    names = [n for n in model.independent_joints if n in model.scalar_joints]
    plan = model.plan(names)
    bounds = [(max(-3.0, lower), min(3.0, upper))
              for lower, upper in zip(plan.admitted_lower, plan.admitted_upper)]
    states = []
    for _ in range(count):
        state = JointState()
        state.name = names
        state.position = [rng.uniform(*b) for b in bounds]
        states.append(state)
    return states


def source_states(model: RobotModel, topics: tuple[str, ...], count: int, seed: int
                  ) -> list[tuple[bytes, ...]]:
    """`count` serialized JointStates per topic, each with its share of the joints.

    Each topic takes a contiguous share of the joints of `joint_states`, as an arm driver and a
    gripper driver do.
    """
    states = []
    for state in joint_states(model, count, seed):
        names, positions = list(state.name), list(state.position)
        cuts = [round(k * len(names) / len(topics)) for k in range(len(topics) + 1)]
        states.append(tuple(serialize_message(JointState(
            name=names[a:b], position=positions[a:b])) for a, b in zip(cuts, cuts[1:])))
    return states


def stamped(data: bytes, nanoseconds: int) -> bytes:
    """Serialized JointState `data` with its header stamp set (bytes 4..12 of the CDR)."""
    return data[:4] + STAMP.pack(*divmod(nanoseconds, 1_000_000_000)) + data[12:]


def joint_state_callback(node):
    """The node's joint_states callback and whether it takes CDR bytes (raw) or a message."""
    subscription, = [s for s in node.subscriptions if s.topic_name.endswith('/joint_states')]
    return subscription.callback, subscription.raw


def make_node(robot: BenchRobot) -> UrdfStatePublisher:
    return UrdfStatePublisher(parameter_overrides=[
        Parameter('robot_description', value=robot.path.read_text()),
        Parameter('ignore_timestamp', value=True)])


# 1 --------------------------------------------------------------------------------------------

def in_process(robot: BenchRobot, scale: Scale) -> dict:
    node = make_node(robot)
    model = RobotModel.from_file(robot.path)
    callback, raw = joint_state_callback(node)
    serialized = [serialize_message(s) for s in joint_states(model, 200)]
    # Stamps 1 ms apart from 1000 s on: time never runs backwards. Built before timing.
    data = [stamped(serialized[i % len(serialized)], (1000 + i) * 1_000_000)
            for i in range(200 + scale.in_process_messages)]
    inputs = data if raw else [deserialize_message(d, JointState) for d in data]
    clock = time.perf_counter_ns
    costs = []
    for i, message in enumerate(inputs):  # the first 200 warm the caches a running node has
        start = clock()
        callback(message)
        if i >= 200:
            costs.append(clock() - start)

    # The floor relay's callback (bench/relay.py, raw modes), as many transforms as the node.
    transforms = len(model.movable_joints)
    publisher = node.create_publisher(TFMessage, '/tf', TF_QOS)
    pieces = tf_pieces(transforms)
    floor = []
    for message in data[200:]:
        start = clock()
        publisher.publish(message[4:12].join(pieces))
        floor.append(clock() - start)
    node.destroy_node()
    return {
        'robot': robot.label, 'joints': len(model.movable_joints), 'transforms': transforms,
        'raw': raw, 'p50_us': statistics.median(costs) / 1e3,
        'p99_us': percentile(costs, 0.99) / 1e3,
        'floor_p50_us': statistics.median(floor) / 1e3,
        'floor_p99_us': percentile(floor, 0.99) / 1e3,
    }


# 2 --------------------------------------------------------------------------------------------

def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid`, all its threads, dead ones included.

    From the kernel's per-process CPU clock, in nanoseconds: psutil's cpu_times() give the
    same total in 10 ms ticks, too coarse for a window at 100 Hz (both are recorded).
    """
    try:
        return time.clock_gettime_ns((~pid << 3) | 2) / 1e9  # Linux: MAKE_PROCESS_CPUCLOCK
    except OSError:
        times = psutil.Process(pid).cpu_times()
        return times.user + times.system


@dataclass
class Measured:
    """What one process did over all its windows at one robot and rate."""

    sent: int = 0
    matched: int = 0  # /tf messages whose stamp is one this window sent
    latencies_ms: list[float] = field(default_factory=list)
    cpu: float = 0.0
    cpu_psutil: float = 0.0
    transforms: int = 0
    samples: list[bytes] = field(default_factory=list)  # a few /tf messages, checked after
    threads: dict[str, float] = field(default_factory=dict)  # CPU seconds by thread name
    rounds: list[slice] = field(default_factory=list)  # each round's share of latencies_ms


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds of each live thread of `pid`, summed by thread name.

    From /proc/PID/task/TID/schedstat, in nanoseconds (psutil's thread times come in 10 ms
    ticks, too coarse for a window at 100 Hz).
    """
    seconds: dict[str, float] = {}
    for task in Path(f'/proc/{pid}/task').iterdir():
        try:
            name = (task / 'comm').read_text().strip()
            on_cpu_ns = int((task / 'schedstat').read_text().split()[0])
        except (OSError, IndexError, ValueError):  # the thread ended meanwhile
            continue
        seconds[name] = seconds.get(name, 0.0) + on_cpu_ns / 1e9
    return seconds


class Driver:
    """Publishes serialized JointStates at a rate and takes /tf raw, in one thread.

    One loop waits on the /tf subscription until the next JointState is due, so receipt times
    are not delayed by another thread holding the GIL.
    """

    def __init__(self):
        self.node = rclpy.create_node('bench_driver')
        self.wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, self.node.context.handle)
        self.topics = {}

    def connect(self, name: str, prefix: str, topics: tuple[str, ...] = ('joint_states',)
                ) -> None:
        """Publishers and /tf subscription for process `name`, on topics under `prefix`."""
        publishers = [self.node.create_publisher(JointState, prefix + topic,
                                                 qos_profile_sensor_data) for topic in topics]
        subscription = self.node.create_subscription(TFMessage, prefix + 'tf', lambda _: None,
                                                     TF_QOS, raw=True)
        self.topics[name] = (publishers, subscription)

    def disconnect(self) -> None:
        for publishers, subscription in self.topics.values():
            for publisher in publishers:
                self.node.destroy_publisher(publisher)
            self.node.destroy_subscription(subscription)
        self.topics.clear()

    def drive(self, name: str, states: list[tuple[bytes, ...]], rate: float, seconds: float,
              drain: float = 0.25, into: Measured | None = None) -> int:
        """Send JointStates to `name` for `seconds`; count in `into` the /tf sent stamps bring.

        Each of `states` has a JointState per topic of `connect`, sent together, with one
        stamp. Returns how many /tf messages with one of this call's stamps arrived.
        """
        publishers, subscription = self.topics[name]
        handle, wait_set = subscription.handle, self.wait_set
        period = round(1e9 / rate)
        sent: set[int] = set()
        matched = 0
        clock = time.perf_counter_ns
        now = clock()
        next_send, end = now, now + round(seconds * 1e9)
        stop = end + round(drain * 1e9)
        while now < stop:
            if now >= next_send and next_send < end:
                stamp = time.time_ns()
                for publisher, data in zip(publishers, states[len(sent) % len(states)]):
                    publisher.publish(stamped(data, stamp))
                sent.add(stamp)
                next_send += period
            else:
                wait_set.clear_entities()
                wait_set.add_subscription(handle)
                wait_set.wait(max(0, min(next_send if next_send < end else stop, stop) - now))
                while (taken := handle.take_message(TFMessage, True)) is not None:
                    data = taken[0]
                    received = time.time_ns()
                    sec, nanosec = STAMP.unpack_from(data, 8)  # the first transform's stamp
                    stamp = sec * 1_000_000_000 + nanosec
                    if stamp in sent:
                        matched += 1
                        if into is not None:
                            into.latencies_ms.append((received - stamp) / 1e6)
                            into.transforms = struct.unpack_from('<I', data, 4)[0]
                            if len(into.samples) < 3:
                                into.samples.append(data)
            now = clock()
        if into is not None:
            into.sent += len(sent) * len(publishers)
            into.matched += matched
        return matched


def all_stamps_carried(measured: Measured) -> bool:
    """Whether every transform of the sampled /tf messages carries the stamp of the first.

    The first transform's stamp was one a JointState of the run carried (Driver.drive keeps
    only those): so then each transform carries it. The relays single and events stamp the
    first transform only, by design.
    """
    for data in measured.samples:
        transforms = deserialize_message(data, TFMessage).transforms
        if len({(t.header.stamp.sec, t.header.stamp.nanosec) for t in transforms}) != 1:
            return False
    return bool(measured.samples)


def start_processes(robot: BenchRobot, transforms: int, log_dir: Path,
                    config: Configuration) -> dict:
    """Every process of `config` for `robot`, each with its own log; topics per process.

    The node keeps the standard topics and is started exactly as users start it; each relay
    gets its own joint_states and /tf by remapping, so all can run side by side and the runs
    alternate between them without restarts.
    """
    processes = {}
    for name, mode in config.processes.items():
        if mode is None:
            command = [sys.executable, '-m', 'urdf_state_publisher', '--ros-args',
                       '-p', f'description_file:={robot.path}', *config.node_args]
        else:
            prefix = topic_prefix(mode)
            command = [sys.executable, str(HERE / 'relay.py'), '--transforms', str(transforms),
                       '--mode', mode, '--topics', *config.topics, '--ros-args',
                       '-r', f'__node:=relay_{mode}'.replace('-', '_'),
                       *(a for t in config.topics for a in ('-r', f'{t}:={prefix}{t}')),
                       '-r', f'/tf:={prefix}tf']
        log = open(log_dir / f'{name.replace(" ", "_")}.log', 'w')
        processes[name] = (subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT),
                           log)
    return processes


def wait_answering(driver: Driver, name: str, states: list[tuple[bytes, ...]],
                   process: subprocess.Popen, log) -> None:
    """Drive process `name` until it answers a JointState with /tf: discovery and start-up."""
    deadline = time.monotonic() + 30
    while not driver.drive(name, states, 100, 0.2, drain=0.1):
        if process.poll() is not None or time.monotonic() > deadline:
            log.flush()
            raise RuntimeError(f'{name} never answered a JointState with /tf:\n'
                               + Path(log.name).read_text()[-2000:])


def check_exits(codes: dict[str, int], processes: dict) -> None:
    """Raise, with the end of each one's log, if a process did not exit 0 on SIGINT."""
    failed = {name: code for name, code in codes.items() if code}
    if failed:
        logs = ''.join(f'\n--- {name}:\n' + Path(processes[name][1].name).read_text()[-3000:]
                       for name in failed)
        raise RuntimeError(f'processes did not exit 0 on SIGINT: {failed}{logs}')


def topic_prefix(mode: str | None) -> str:
    """The namespace of the topics of a process: the relay's mode, or none for the node."""
    return '/' if mode is None else f'/bench/{mode.replace("-", "_")}/'


def stop_processes(processes: dict) -> dict[str, int]:
    """SIGINT each process, one after the other: each one's exit status.

    One at a time: Fast DDS 2.14 (Jazzy) can deadlock destroying a participant while a peer
    leaves at the same moment (process.py), and relays stopped together have hung so in CI.
    50 node processes stopped at once on 2 cores also overran the node's teardown limit
    (process.TEARDOWN_LIMIT_S), and the watchdog's exit left their shared-memory ports locked.
    """
    codes = {}
    for name, (process, log) in processes.items():
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            codes[name] = process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            codes[name] = process.wait()
        log.close()
    return codes


def end_to_end(robot: BenchRobot, scale: Scale, driver: Driver, log_dir: Path,
               config: Configuration = EVERY_MESSAGE) -> list[dict]:
    model = RobotModel.from_file(robot.path)
    transforms = len(model.movable_joints)
    states = source_states(model, config.topics, 200, seed=2)
    processes = start_processes(robot, transforms, log_dir, config)
    results = {}
    try:
        for name, mode in config.processes.items():
            driver.connect(name, topic_prefix(mode), config.topics)
        for name, (process, log) in processes.items():
            wait_answering(driver, name, states, process, log)
        for rate in scale.rates:
            measured = {name: Measured() for name in config.processes}
            for round_ in range(scale.rounds):
                # Alternating order: a drift in machine load hits every process alike.
                order = list(config.processes)[::-1 if round_ % 2 else 1]
                for name in order:
                    pid = processes[name][0].pid
                    driver.drive(name, states, rate, scale.warm_up, drain=0.1)
                    before = process_cpu_seconds(pid), psutil.Process(pid).cpu_times()
                    threads_before = thread_cpu_seconds(pid)
                    first = len(measured[name].latencies_ms)
                    driver.drive(name, states, rate, scale.seconds / scale.rounds,
                                 into=measured[name])
                    measured[name].rounds.append(slice(first, len(measured[name].latencies_ms)))
                    after = process_cpu_seconds(pid), psutil.Process(pid).cpu_times()
                    threads = measured[name].threads
                    for thread, seconds in thread_cpu_seconds(pid).items():
                        threads[thread] = (threads.get(thread, 0.0) + seconds
                                           - threads_before.get(thread, 0.0))
                    measured[name].cpu += after[0] - before[0]
                    measured[name].cpu_psutil += sum(after[1][:2]) - sum(before[1][:2])
            results[rate] = measured
    finally:
        driver.disconnect()
        codes = stop_processes(processes)
    check_exits(codes, processes)
    return [row(robot, transforms, rate, name, measured, config)
            for rate, by_name in results.items() for name, measured in by_name.items()]


def row(robot: BenchRobot, transforms: int, rate: int, name: str, m: Measured,
        config: Configuration) -> dict:
    sent = max(m.sent, 1)
    return {
        'robot': robot.label, 'joints': transforms, 'rate': rate, 'process': name,
        'configuration': config.label,
        'sent': m.sent, 'received': m.matched, 'out_per_in': m.matched / sent,
        'transforms': m.transforms, 'cpu_us_per_js': m.cpu / sent * 1e6,
        'cpu_us_per_tf': m.cpu / max(m.matched, 1) * 1e6,
        'threads_us_per_js': {t: c / sent * 1e6 for t, c in sorted(m.threads.items())},
        'cpu_us_per_js_psutil': m.cpu_psutil / sent * 1e6,
        'p50_ms': percentile(m.latencies_ms, 0.5), 'p99_ms': percentile(m.latencies_ms, 0.99),
        'round_p50_ms': [percentile(m.latencies_ms[r], 0.5) for r in m.rounds],
        'all_stamps_carried': all_stamps_carried(m),
    }


def paired_ratio(ours: dict, theirs: dict) -> float:
    """The median over rounds of ours ÷ theirs, each round's p50 against the other's.

    Each round measures the two back to back: a drift of the machine's load, which moves both,
    cancels in the ratio.
    """
    return statistics.median(a / b for a, b in zip(ours['round_p50_ms'], theirs['round_p50_ms'])
                             if a is not None and b is not None)


def add_comparisons(rows: list[dict]) -> None:
    """Each row's ratios and differences to the relays of the same robot and rate."""
    by_key = {(r['robot'], r['rate'], r['process']): r for r in rows}
    for r in rows:
        base = by_key[r['robot'], r['rate'], BASELINE]
        events = by_key[r['robot'], r['rate'], EVENTS]
        r['cpu_ratio'] = r['cpu_us_per_js'] / base['cpu_us_per_js']
        r['out_per_in_minus_events'] = r['out_per_in'] - events['out_per_in']
        r['p99_minus_events_ms'] = (None if r['p99_ms'] is None or events['p99_ms'] is None
                                    else r['p99_ms'] - events['p99_ms'])


def verdict(ok: bool) -> str:
    return 'met' if ok else 'MISSED'


TABLE_HEADER = (f'{"robot":<12} {"Hz":>5} {"process":<20} {"sent":>6} {"tf/js":>6} '
                f'{"Δ vs EE":>7} {"CPU µs/js":>9} {"×single":>7} {"p50 ms":>7} {"p99 ms":>7} '
                f'{"Δp99 EE":>7}')


def print_rows(rows: list[dict]) -> None:
    """One line per row, a blank line between (robot, rate) groups."""
    def ms(value):
        return '—' if value is None else f'{value:.2f}'

    previous = None
    for r in rows:
        if previous is not None and (r['robot'], r['rate']) != previous:
            print()
        previous = r['robot'], r['rate']
        delta = r['p99_minus_events_ms']
        print(f'{r["robot"].split()[0]:<12} {r["rate"]:>5} {r["process"]:<20} {r["sent"]:>6} '
              f'{r["out_per_in"]:>6.3f} {r["out_per_in_minus_events"]:>+7.3f} '
              f'{r["cpu_us_per_js"]:>9.1f} {r["cpu_ratio"]:>7.2f} {ms(r["p50_ms"]):>7} '
              f'{ms(r["p99_ms"]):>7} {"—" if delta is None else f"{delta:+.2f}":>7}', flush=True)
    print(flush=True)


def print_targets(rows: list[dict], scale: Scale) -> list[str]:
    """The targets of the end-to-end section against the figures; returns the lines."""
    lines = []
    robots = list(dict.fromkeys(r['robot'] for r in rows))
    by_key = {(r['robot'], r['rate'], r['process']): r for r in rows}
    cpu_rate = 500 if 500 in scale.rates else scale.rates[-1]
    for robot in robots:
        node = by_key[robot, cpu_rate, NODE]
        target = 0.40 if node['joints'] < 20 else 0.30
        lines.append(f'{robot.split()[0]}: CPU/js at {cpu_rate} Hz {node["cpu_ratio"]:.2f}× '
                     f'single (target ≤ {target:.2f}×: {verdict(node["cpu_ratio"] <= target)})')
        for rate in [r for r in scale.rates if r >= 500] or scale.rates[-1:]:
            node = by_key[robot, rate, NODE]
            out = node['out_per_in_minus_events']
            delta = node['p99_minus_events_ms']
            lines.append(
                f'{robot.split()[0]}: {rate} Hz: tf/js {node["out_per_in"]:.3f} vs events '
                f'{out:+.3f} (target ≥ 0: {verdict(out >= 0)}); p99 vs events '
                + ('—' if delta is None else f'{delta:+.2f} ms')
                + f' (target ≤ +0.30 ms: {verdict(delta is not None and delta <= 0.3)})')
        for rate in scale.rates:
            best = min((by_key[robot, rate, f] for f in FLOORS), key=lambda r: r['cpu_us_per_js'])
            node = by_key[robot, rate, NODE]
            lines.append(f'{robot.split()[0]}: {rate} Hz: best floor {best["process"]} '
                         f'{best["cpu_us_per_js"]:.1f} µs/js = {best["cpu_ratio"]:.2f}× single; '
                         f'node {node["cpu_us_per_js"] / best["cpu_us_per_js"]:.2f}× best floor')
    print('  targets (not asserted):')
    for line in lines:
        print('    ' + line)
    return lines


def add_floor_ratios(rows: list[dict]) -> None:
    """Each default-configuration row's CPU ratio to the decimating floor of its robot and rate."""
    by_key = {(r['robot'], r['rate'], r['process']): r for r in rows}
    for r in rows:
        floor = by_key[r['robot'], r['rate'], DECIMATING_FLOOR]
        r['floor_ratio'] = r['cpu_us_per_js'] / floor['cpu_us_per_js']


DEFAULT_HEADER = (f'{"robot":<12} {"Hz":>5} {"process":<17} {"sent":>6} {"tf/js":>6} '
                  f'{"CPU µs/js":>9} {"×floor":>6} {"CPU µs/tf":>9}  CPU µs/js by thread')


def print_default_rows(rows: list[dict]) -> None:
    previous = None
    for r in rows:
        if previous is not None and (r['robot'], r['rate']) != previous:
            print()
        previous = r['robot'], r['rate']
        threads = ', '.join(f'{name} {us:.1f}' for name, us in sorted(
            r['threads_us_per_js'].items(), key=lambda item: -item[1]) if us >= 0.05)
        print(f'{r["robot"].split()[0]:<12} {r["rate"]:>5} {r["process"]:<17} {r["sent"]:>6} '
              f'{r["out_per_in"]:>6.3f} {r["cpu_us_per_js"]:>9.1f} {r["floor_ratio"]:>6.2f} '
              f'{r["cpu_us_per_tf"]:>9.0f}  {threads}', flush=True)
    print(flush=True)


def default_targets(rows: list[dict]) -> list[str]:
    """The default configuration's target, node ÷ decimating floor ≤ 1.15, per robot and rate."""
    lines = []
    for r in rows:
        if r['process'] == NODE:
            lines.append(f'{r["robot"].split()[0]}: {r["rate"]} Hz in: node '
                         f'{r["floor_ratio"]:.2f}× the decimating floor (target ≤ 1.15: '
                         f'{verdict(r["floor_ratio"] <= 1.15)})')
    print('  targets (not asserted):')
    for line in lines:
        print('    ' + line)
    return lines


# 3 --------------------------------------------------------------------------------------------

def startup(robot: BenchRobot, scale: Scale, driver: Driver) -> tuple[float, float]:
    """Medians of the seconds from process start to the first complete /tf_static received.

    And to the node's summary of its model on stderr, which it logs just before it publishes
    /tf_static: the difference is the time DDS takes to connect the two processes.
    """
    model = RobotModel.from_file(robot.path)
    expected = len(model.static_transforms())
    summary = f"robot '{model.name}': root"  # how the node's summary of the model begins
    subscription = driver.node.create_subscription(TFMessage, '/tf_static', lambda _: None,
                                                   LATCHED, raw=True)
    wait_set = driver.wait_set
    times, ready_times = [], []
    try:
        for _ in range(scale.startup_runs):
            start = time.perf_counter()
            process = subprocess.Popen(
                [sys.executable, '-m', 'urdf_state_publisher', '--ros-args',
                 '-p', f'description_file:={robot.path}'],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            ready = []

            def watch_log(stderr=process.stderr, ready=ready, start=start) -> None:
                for line in stderr:  # read to the end: a full pipe would block the node
                    if not ready and summary in line:
                        ready.append(time.perf_counter() - start)

            log_reader = threading.Thread(target=watch_log, daemon=True)
            log_reader.start()
            try:
                complete = None
                while complete is None:
                    if time.perf_counter() - start > 30:
                        raise RuntimeError('no complete /tf_static within 30 s')
                    wait_set.clear_entities()
                    wait_set.add_subscription(subscription.handle)
                    wait_set.wait(50_000_000)
                    while (taken := subscription.handle.take_message(TFMessage, True)):
                        # The sequence length: as many transforms as the robot's fixed frames.
                        if struct.unpack_from('<I', taken[0], 4)[0] == expected:
                            complete = time.perf_counter() - start
                times.append(complete)
            finally:
                process.send_signal(signal.SIGINT)
                process.wait(15)
                log_reader.join(5)
            ready_times += ready
            time.sleep(0.3)
    finally:
        driver.node.destroy_subscription(subscription)
    return statistics.median(times), statistics.median(ready_times)


# 4 --------------------------------------------------------------------------------------------

def memory(robot: BenchRobot, checkpoints: tuple[int, ...]) -> list[tuple[int, float]]:
    node = make_node(robot)
    callback, raw = joint_state_callback(node)
    serialized = [serialize_message(s)
                  for s in joint_states(RobotModel.from_file(robot.path), 1000, seed=3)]
    process = psutil.Process()
    results, done = [], 0
    for checkpoint in checkpoints:
        while done < checkpoint:
            data = stamped(serialized[done % len(serialized)], (1000 + done) * 1_000_000)
            callback(data if raw else deserialize_message(data, JointState))
            done += 1
        results.append((checkpoint, process.memory_info().rss / 2**20))
    node.destroy_node()
    return results


# What a process holds after each step towards a running node, in the order the node's own
# imports would bring them in: the difference to the line before is what that step adds.
MEMORY_STEPS = r"""
import json, sys
import psutil
process = psutil.Process()
def step(label):
    print(json.dumps([label, process.memory_info().rss / 2**20]), flush=True)
step('python, psutil')
import rclpy
rclpy.init()
bare = rclpy.create_node('bare')
step('rclpy, initialised, one node')
import numpy
step('numpy')
import diagnostic_msgs.msg, rcl_interfaces.msg, sensor_msgs.msg, std_msgs.msg, tf2_msgs.msg
step('message types (sensor_msgs, tf2_msgs, diagnostic_msgs, ...)')
import xml.etree.ElementTree
step('xml.etree.ElementTree (the stdlib XML parser: expat, C tree builder)')
import urdf_state_publisher.description
step('urdf_state_publisher.description (parsing, validation)')
import urdf_state_publisher.node
step('urdf_state_publisher.node and the rest of the package')
from rclpy.parameter import Parameter
node = urdf_state_publisher.node.UrdfStatePublisher(parameter_overrides=[
    Parameter('description_file', value=sys.argv[1])])
step('the node, started on the robot')
"""


def memory_by_step(robot: BenchRobot) -> list[tuple[str, float]]:
    """RSS in MiB after each step of MEMORY_STEPS, in a fresh process."""
    result = subprocess.run([sys.executable, '-c', MEMORY_STEPS, str(robot.path)],
                            capture_output=True, text=True, timeout=120, check=True)
    return [tuple(json.loads(line)) for line in result.stdout.splitlines()]


def running_rss(robot: BenchRobot, scale: Scale, driver: Driver, log_dir: Path
                ) -> tuple[float, float]:
    """RSS in MiB of the node, default configuration, after a stream, and of a bare node.

    Both started the same way, side by side; the bare one is bench/relay.py --mode bare.
    """
    model = RobotModel.from_file(robot.path)
    states = source_states(model, ('joint_states',), 200, seed=4)
    config = Configuration('memory', (), {NODE: None, 'bare': 'bare'})
    processes = start_processes(robot, len(model.movable_joints), log_dir, config)
    try:
        driver.connect(NODE, topic_prefix(None))
        wait_answering(driver, NODE, states, *processes[NODE])
        driver.drive(NODE, states, 1000, scale.memory_stream_s)
        return tuple(psutil.Process(processes[name][0].pid).memory_info().rss / 2**20
                     for name in (NODE, 'bare'))
    finally:
        driver.disconnect()
        check_exits(stop_processes(processes), processes)


def in_process_section(robots: list[BenchRobot], scale: Scale, report: dict) -> None:
    """Section 1: the node's joint_states callback in this process, beside the floor's."""
    print('\n1. In-process cost per JointState: callback entry to return of publish() on /tf '
          f'({scale.in_process_messages} messages; no /tf subscriber)')
    print("   floor = the floor relay's callback: stamp patched into a pre-serialized TFMessage "
          'of as many transforms, publish(bytes)')
    print(f'{"robot":<34} {"joints":>6} {"input":>7} {"ours µs p50":>11} {"p99":>7} '
          f'{"floor µs p50":>12} {"p99":>7}  target p50 ≤ 60 µs')
    report['in_process'] = []
    for robot in robots:
        r = in_process(robot, scale)
        report['in_process'].append(r)
        print(f'{r["robot"]:<34} {r["joints"]:>6} {"bytes" if r["raw"] else "message":>7} '
              f'{r["p50_us"]:>11.1f} {r["p99_us"]:>7.1f} {r["floor_p50_us"]:>12.1f} '
              f'{r["floor_p99_us"]:>7.1f}  {verdict(r["p50_us"] <= 60)}')


def against_decimating_floor(robots: list[BenchRobot], scale: Scale, driver: Driver,
                             workdir: Path, config: Configuration) -> list[dict]:
    """The rows of `config` for every robot, each with its ratio to the floor, printed."""
    print(DEFAULT_HEADER, flush=True)
    rows = []
    for robot in robots:
        robot_rows = end_to_end(robot, scale, driver, workdir, config)
        add_floor_ratios(robot_rows)
        print_default_rows(robot_rows)
        rows += robot_rows
    return rows


def dds_sections(robots: list[BenchRobot], scale: Scale, driver: Driver, workdir: Path,
                 report: dict) -> None:
    """Sections 2 to 4: over DDS, every message and the default configuration; start-up."""
    print('\n2. End to end over DDS, every message published (ignore_timestamp), each '
          f'process on its own, {scale.seconds:g} s per (robot, rate, process) in '
          f'{scale.rounds} alternating round(s)')
    print("   tf/js = /tf messages received carrying a sent JointState's stamp ÷ "
          "JointStates sent; CPU µs/js = the process's user+system CPU ÷ JointStates sent;")
    print('   ×single = CPU ratio to the SingleThreadedExecutor relay; Δ vs EE and Δp99 EE = '
          'difference to the EventsExecutor relay; latency = JointState publish → /tf '
          'receipt')
    print(f'   node: python -m {NODE} -p description_file:=… -p ignore_timestamp:=true '
          '(default QoS: SensorDataQoS, depth 5); relays: bench/relay.py --mode …')
    print(TABLE_HEADER, flush=True)
    rows = []
    for robot in robots:
        robot_rows = end_to_end(robot, scale, driver, workdir)
        add_comparisons(robot_rows)
        print_rows(robot_rows)
        rows += robot_rows
    report['end_to_end'] = rows
    clock_total = sum(r['cpu_us_per_js'] * r['sent'] for r in rows) / 1e6
    psutil_total = sum(r['cpu_us_per_js_psutil'] * r['sent'] for r in rows) / 1e6
    print(f"  CPU over all windows: {clock_total:.2f} s from the kernel's per-process CPU "
          f'clocks, {psutil_total:.2f} s from psutil cpu_times (10 ms ticks)')
    report['targets'] = print_targets(rows, scale)

    print(f'\n3. End to end over DDS, default configuration (publish_frequency 20 Hz): '
          f'{scale.seconds:g} s per (robot, rate, process) in {scale.rounds} alternating '
          'round(s)')
    print(f'   node: python -m {NODE} -p description_file:=…, nothing else; floor: '
          'bench/relay.py --mode floor-decimating (EventsExecutor, raw JointState, a '
          'prebuilt TFMessage once 50 ms of stamps have passed)')
    print("   CPU µs/js = CPU ÷ JointStates received; ×floor = that ÷ the floor's; "
          "CPU µs/tf = CPU ÷ /tf messages published; by thread: each thread's CPU ÷ "
          'JointStates')
    report['default_config'] = default_rows = against_decimating_floor(
        robots, scale, driver, workdir, DEFAULT_CONFIG)
    report['default_targets'] = default_targets(default_rows)
    print(f'   {TWO_SOURCES.label}: each half of the joints on its own topic '
          '(arm/joint_states, gripper/joint_states) at the rate, with one stamp; node: '
          f'{" ".join(TWO_SOURCES.node_args)}; floor: the same relay reading both topics')
    report['two_sources'] = against_decimating_floor(robots, scale, driver, workdir,
                                                     TWO_SOURCES)

    largest = robots[-1]
    seconds, ready = startup(largest, scale, driver)
    report['startup_s'], report['startup_summary_logged_s'] = seconds, ready
    print(f'\n4. Start-up, process start to the first complete /tf_static, {largest.label}: '
          f'{seconds:.2f} s (median of {scale.startup_runs}; target ≤ 0.51 s: '
          f'{verdict(seconds <= 0.51)})')
    print(f'   of which the node itself: {ready:.2f} s to its model summary on stderr, '
          'logged just before it publishes /tf_static; the rest is DDS discovery')


LATENCY_HEADER = (f'{"robot":<12} {"Hz":>5} {"configuration":<14} {"ours p50":>9} '
                  f'{"relay p50":>9} {"×":>5} {"ours p99":>9} {"relay p99":>9} {"×":>5} '
                  f'{"CPU µs/js":>9} {"relay":>7}')


def latency_section(cases: list[tuple[BenchRobot, int]], scale: Scale, driver: Driver,
                    workdir: Path, report: dict) -> None:
    """Section 8: JointState publish -> /tf receipt, the node beside the lean relay."""
    rounds = scale.rounds * 2
    seconds = scale.seconds / scale.rounds * rounds
    print(f'\n8. Latency, JointState publish -> /tf receipt (µs), the node beside the lean '
          f'relay, {seconds:g} s per (robot, configuration, process) in {rounds} '
          'alternating rounds: p50 and p99 over all rounds; × p50 = the median over rounds of '
          "each round's p50 ratio (the two measured back to back)")
    print('   relay: bench/relay.py --mode floor-events (every message) or floor-decimating '
          '(default: a prebuilt /tf once 50 ms of stamps have passed)')
    print(LATENCY_HEADER, flush=True)
    rows, lines = [], []
    for robot, rate in cases:
        for config in (DEFAULT_CONFIG, LATENCY_EVERY):
            measured = end_to_end(
                robot, replace(scale, rates=(rate,), seconds=seconds, rounds=rounds), driver,
                workdir, config)
            ours = next(r for r in measured if r['process'] == NODE)
            relay = next(r for r in measured if r['process'] != NODE)
            entry = {'robot': robot.label, 'rate': rate, 'configuration': config.label,
                     'ours': ours, 'relay': relay, 'p50_ratio': paired_ratio(ours, relay),
                     'p99_ratio': ours['p99_ms'] / relay['p99_ms']}
            rows.append(entry)
            print(f'{robot.label.split()[0]:<12} {rate:>5} {config.label:<14} '
                  f'{ours["p50_ms"] * 1e3:>9.0f} {relay["p50_ms"] * 1e3:>9.0f} '
                  f'{entry["p50_ratio"]:>5.2f} {ours["p99_ms"] * 1e3:>9.0f} '
                  f'{relay["p99_ms"] * 1e3:>9.0f} {entry["p99_ratio"]:>5.2f} '
                  f'{ours["cpu_us_per_js"]:>9.1f} {relay["cpu_us_per_js"]:>7.1f}', flush=True)
            lines.append(f'{robot.label.split()[0]} {rate} Hz {config.label}: p50 '
                         f'{entry["p50_ratio"]:.2f}× the relay (target ≤ 1.2: '
                         f'{verdict(entry["p50_ratio"] <= 1.2)}), p99 {entry["p99_ratio"]:.2f}× '
                         f'(target ≤ 1.3: {verdict(entry["p99_ratio"] <= 1.3)})')
    print('  targets (not asserted):')
    for line in lines:
        print('    ' + line)
    report['latency'] = {'rows': rows, 'targets': lines}


def memory_section(robots: list[BenchRobot], scale: Scale, driver: Driver, workdir: Path,
                   report: dict) -> None:
    """Section 5: the running node beside a bare one, by import step, over many messages."""
    largest = robots[-1]
    print(f'\n5. Memory, {largest.label}')
    node_rss, bare_rss = running_rss(largest, scale, driver, workdir)
    report['rss'] = {'node_mib': node_rss, 'bare_mib': bare_rss}
    print(f'   running processes, side by side: the node (default configuration, after '
          f'{scale.memory_stream_s:g} s of 1 kHz joint states) {node_rss:.1f} MiB, a bare '
          f'rclpy node {bare_rss:.1f} MiB: +{node_rss - bare_rss:.1f} MiB (target ≤ +10: '
          f'{verdict(node_rss - bare_rss <= 10)})')

    steps = memory_by_step(largest)
    report['memory_steps'] = [{'step': label, 'rss_mib': rss} for label, rss in steps]
    print('   by step, in a fresh process (RSS after the step, and what the step added):')
    for (label, rss), (_, before) in zip(steps, [(None, steps[0][1]), *steps]):
        print(f'     {rss:7.1f} MiB  {rss - before:+6.1f}  {label}')

    print(f'   node in-process, {robots[1].label}:')
    samples = memory(robots[1], scale.memory_messages)
    report['memory'] = [{'messages': count, 'rss_mib': rss} for count, rss in samples]
    for count, rss in samples:
        print(f'     RSS after {count:>9,} messages: {rss:7.1f} MiB')
    if len(samples) > 1:
        growth = samples[-1][1] - samples[0][1]
        print(f'     growth: {growth:+.1f} MiB (target: no growth, ≤ 1 MiB of noise: '
              f'{verdict(growth <= 1.0)})')


# 6 --------------------------------------------------------------------------------------------

FLEET_RATE = 100  # Hz of JointStates per robot
CONTAINER = 'urdf_state_publisher_container'


@dataclass
class Fleet:
    """The processes of N robots, run one way; their pids and the JointState topics."""

    way: str  # 'processes' or 'container'
    processes: dict  # name -> (Popen, log), as start_processes makes them
    topics: list[str]


def fleet_robot_arguments(robot: BenchRobot, k: int) -> tuple[str, str, dict]:
    """Robot k's namespace, frame prefix and parameters: one description, a fleet of copies."""
    return f'/robot{k}', f'robot{k}/', {'description_file': str(robot.path),
                                         'frame_prefix': f'robot{k}/'}


def start_fleet_processes(robot: BenchRobot, count: int, log_dir: Path, driver: Driver
                          ) -> Fleet:
    """N node processes, each in its robot's namespace, started as users start them.

    One after the other, each once the previous has subscribed, so that a process that does
    not come up is named. Seen here: Fast DDS 2.14 (Jazzy) hangs for good at start-up, in
    boost::interprocess' open-or-create spin wait, when its participant's shared-memory port
    (/dev/shm/fastrtps_portN) is one that a process killed mid-teardown left locked; the node's
    teardown watchdog (process.TEARDOWN_LIMIT_S) ending 12 of 50 processes stopped at once left
    such ports. `fastdds shm clean` does not remove them: delete the files of a port no process
    maps.
    """
    fleet = Fleet('processes', {}, [])
    try:
        for k in range(count):
            namespace, prefix, _ = fleet_robot_arguments(robot, k)
            log = open(log_dir / f'fleet_process_{k}.log', 'w')
            command = [sys.executable, '-m', NODE, '--ros-args', '-r', f'__ns:={namespace}',
                       '-p', f'description_file:={robot.path}', '-p', f'frame_prefix:={prefix}']
            fleet.processes[f'robot{k}'] = (
                subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT), log)
            fleet.topics.append(namespace + '/joint_states')
            wait_subscribed(driver, fleet.topics[-1:], fleet.way)
    except BaseException:
        stop_processes(fleet.processes)
        raise
    return fleet


def wait_subscribed(driver: Driver, topics: list[str], way: str) -> None:
    """Wait until every topic of `topics` has its robot's subscription (discovery)."""
    deadline = time.monotonic() + 60
    while missing := [t for t in topics if driver.node.count_subscribers(t) == 0]:
        if time.monotonic() > deadline:
            raise RuntimeError(f'no subscription in 60 s on {", ".join(missing)} ({way})')
        time.sleep(0.1)


def start_fleet_container(robot: BenchRobot, count: int, log_dir: Path, driver: Driver
                          ) -> Fleet:
    """One container with N robots loaded, as a launch file's ComposableNodeContainer does."""
    from composition_interfaces.srv import LoadNode

    log = open(log_dir / 'fleet_container.log', 'w')
    process = subprocess.Popen(
        [sys.executable, '-c', 'import sys; from urdf_state_publisher.process import '
         'container_main; sys.exit(container_main())', '--ros-args', '-r', '__node:=fleet'],
        stdout=log, stderr=subprocess.STDOUT)
    fleet = Fleet('container', {CONTAINER: (process, log)}, [])
    client = driver.node.create_client(LoadNode, '/fleet/_container/load_node')
    try:
        if not client.wait_for_service(timeout_sec=30):
            raise RuntimeError('the container never offered its load_node service')
        for k in range(count):
            namespace, _, parameters = fleet_robot_arguments(robot, k)
            request = LoadNode.Request(
                package_name=NODE, plugin_name='urdf_state_publisher::UrdfStatePublisher',
                node_namespace=namespace,
                parameters=[Parameter(n, value=v).to_parameter_msg()
                            for n, v in parameters.items()])
            future = client.call_async(request)
            rclpy.spin_until_future_complete(driver.node, future, timeout_sec=30)
            response = future.result()
            if response is None or not response.success:
                raise RuntimeError(f'loading robot {k} failed: '
                                   f'{response.error_message if response else "no reply"}')
            fleet.topics.append(namespace + '/joint_states')
    except BaseException:
        stop_processes(fleet.processes)
        raise
    finally:
        driver.node.destroy_client(client)
    return fleet


def drive_fleet(driver: Driver, fleet: Fleet, states: list[bytes], seconds: float
                ) -> tuple[int, int, set[str]]:
    """Send every robot of `fleet` a JointState at FLEET_RATE for `seconds`.

    Returns the JointStates sent, the /tf messages received meanwhile, and the robots they came
    from (the frame_prefix of their first transform's parent frame).
    """
    publishers = [driver.node.create_publisher(JointState, topic, qos_profile_sensor_data)
                  for topic in fleet.topics]
    tf = driver.node.create_subscription(TFMessage, '/tf', lambda _: None, TF_QOS, raw=True)
    wait_set = driver.wait_set
    try:
        wait_subscribed(driver, fleet.topics, fleet.way)
        period = round(1e9 / FLEET_RATE)
        sent = received = 0
        robots: set[str] = set()
        clock = time.perf_counter_ns
        start = clock()
        end = start + round(seconds * 1e9)
        due = start
        while due < end:
            while (now := clock()) < due:
                wait_set.clear_entities()
                wait_set.add_subscription(tf.handle)
                wait_set.wait(due - now)
                while (taken := tf.handle.take_message(TFMessage, True)) is not None:
                    received += 1
                    length, = struct.unpack_from('<I', taken[0], 16)  # the first frame_id
                    robots.add(taken[0][20:20 + length].split(b'/')[0].decode())
            data = stamped(states[sent // len(publishers) % len(states)], time.time_ns())
            for publisher in publishers:
                publisher.publish(data)
            sent += len(publishers)
            due += period
        return sent, received, robots
    finally:
        for publisher in publishers:
            driver.node.destroy_publisher(publisher)
        driver.node.destroy_subscription(tf)


def measure_fleet(driver: Driver, fleet: Fleet, states: list[bytes], scale: Scale) -> dict:
    """CPU per JointState over a window of driving, then total RSS and PSS, of one fleet."""
    pids = [process.pid for process, _ in fleet.processes.values()]
    drive_fleet(driver, fleet, states, max(1.0, scale.warm_up * 4))  # start-up settles
    before = sum(process_cpu_seconds(pid) for pid in pids)
    sent, received, robots = drive_fleet(driver, fleet, states, scale.fleet_seconds)
    cpu = sum(process_cpu_seconds(pid) for pid in pids) - before
    memory = [psutil.Process(pid).memory_full_info() for pid in pids]
    return {'way': fleet.way, 'sent': sent, 'cpu_us_per_js': cpu / sent * 1e6,
            'tf_per_robot_s': received / len(fleet.topics) / scale.fleet_seconds,
            'robots_publishing': len(robots),
            'rss_mib': sum(m.rss for m in memory) / 2**20,
            'pss_mib': sum(m.pss for m in memory) / 2**20}


def fleet_section(robot: BenchRobot, scale: Scale, driver: Driver, workdir: Path,
                  report: dict) -> None:
    """Section 6: N robots as N processes and as one container, side by side in one run."""
    model = RobotModel.from_file(robot.path)
    states = [s for s, in source_states(model, ('joint_states',), 200, seed=6)]
    print(f'\n6. A fleet of {robot.label}: N robots at {FLEET_RATE} Hz each, default '
          'configuration, each in its own namespace with its own frame_prefix')
    print(f'   processes: N × python -m {NODE} --ros-args -r __ns:=/robotK …; container: '
          f'one {CONTAINER} with N nodes loaded through its load_node service')
    print('   RSS and PSS: the sums over the processes (PSS shares the libraries out); '
          f'CPU µs/js: their CPU ÷ JointStates sent, over {scale.fleet_seconds:g} s;')
    print('   tf/s: /tf messages received per robot and second (publish_frequency 20 Hz), from '
          'how many robots; stop s: SIGINT to exit 0, the processes one after the other')
    print(f'{"N":>4} {"way":<10} {"RSS MiB":>8} {"PSS MiB":>8} {"per robot":>9} '
          f'{"CPU µs/js":>9} {"×processes":>10} {"tf/s":>5} {"from":>4} {"stop s":>6}')
    rows = []
    for count in scale.fleet_sizes:
        by_way = {}
        for way in ('processes', 'container'):
            fleet = (start_fleet_processes(robot, count, workdir, driver) if way == 'processes'
                     else start_fleet_container(robot, count, workdir, driver))
            try:
                by_way[way] = measure_fleet(driver, fleet, states, scale)
            finally:
                started = time.perf_counter()
                codes = stop_processes(fleet.processes)
                stop_s = time.perf_counter() - started
            check_exits(codes, fleet.processes)
            by_way[way]['stop_s'] = stop_s
        for way, r in by_way.items():
            r.update(robots=count, robot=robot.label,
                     per_robot_mib=r['rss_mib'] / count,
                     cpu_ratio=r['cpu_us_per_js'] / by_way['processes']['cpu_us_per_js'])
            rows.append(r)
            print(f'{count:>4} {way:<10} {r["rss_mib"]:>8.1f} {r["pss_mib"]:>8.1f} '
                  f'{r["per_robot_mib"]:>9.1f} {r["cpu_us_per_js"]:>9.1f} '
                  f'{r["cpu_ratio"]:>10.2f} {r["tf_per_robot_s"]:>5.1f} '
                  f'{r["robots_publishing"]:>4} {r["stop_s"]:>6.2f}', flush=True)
    report['fleet'] = rows
    report['fleet_targets'] = fleet_targets(rows, robot, driver, workdir)


def fleet_targets(rows: list[dict], robot: BenchRobot, driver: Driver, workdir: Path
                  ) -> list[str]:
    """What each robot after the first costs in the container, beside a bare rclpy node."""
    config = Configuration('bare', (), {'bare': 'bare'})
    processes = start_processes(robot, 0, workdir, config)
    try:
        time.sleep(2.0)  # started and spinning
        bare_rss = psutil.Process(processes['bare'][0].pid).memory_info().rss / 2**20
    finally:
        check_exits(stop_processes(processes), processes)
    container = {r['robots']: r for r in rows if r['way'] == 'container'}
    processes_rows = {r['robots']: r for r in rows if r['way'] == 'processes'}
    lines = [f'a bare rclpy node, as a process of its own: {bare_rss:.1f} MiB']
    sizes = sorted(container)
    for count in sizes[1:]:
        extra = (container[count]['rss_mib'] - container[sizes[0]]['rss_mib']) / (
            count - sizes[0])
        lines.append(f'{count} robots: each robot after the first adds {extra:.2f} MiB to '
                     f"the container (target ≤ 2.7 MiB, what it adds to rclcpp's container: "
                     f'{verdict(extra <= 2.7)}), {processes_rows[count]["per_robot_mib"]:.1f} '
                     'MiB as a process')
    ten = 10 if 10 in container else sizes[-1]
    ratio = container[ten]['cpu_ratio']
    lines.append(f'{ten} robots: CPU per JointState, container ÷ processes {ratio:.2f} '
                 f'(target ≤ 1.10: {verdict(ratio <= 1.1)})')
    print('  targets (not asserted):')
    for line in lines:
        print('    ' + line)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--smoke', action='store_true', help='under a minute, CI-sized')
    parser.add_argument('--long', action='store_true', help='memory after 1 000 000 messages')
    parser.add_argument('--json', type=Path, help='also write every figure to this file')
    parser.add_argument('--only', choices=['memory', 'fleet', 'bag', 'latency', 'cluster'],
                        help='run only this section (memory: section 5, fleet: section 6, '
                             'bag: section 7, latency: section 8, cluster: section 9)')
    args = parser.parse_args()
    scale = SMOKE if args.smoke else FULL
    if args.long:
        scale.memory_messages = (10_000, 1_000_000)

    rclpy.init()
    # The in-process nodes' start-up summaries would interleave with the tables.
    rclpy.logging.set_logger_level(NODE, rclpy.logging.LoggingSeverity.ERROR)
    workdir = Path(tempfile.mkdtemp(prefix='usp-bench-'))
    robots = [sample_arm(), jvrc1(), generated_hands(workdir)]
    report: dict = {'rates': list(scale.rates), 'processes': list(PROCESSES),
                    'robots': [r.label for r in robots]}
    machine = (f'{platform.processor() or platform.machine()}, {os.cpu_count()} cores, '
               f'load {os.getloadavg()[0]:.2f}, Python {platform.python_version()}, rclpy '
               f'{_version("ros_rclpy") or Path(rclpy.__file__).parent.parent.name}, RMW '
               f'{os.environ.get("RMW_IMPLEMENTATION", "default")}, '
               f'ROS_DOMAIN_ID {os.environ["ROS_DOMAIN_ID"]}')
    report['machine'] = machine
    print(f'machine: {machine}')
    print(f'reference: {CPP_FACT}')

    if args.only is None:
        in_process_section(robots, scale, report)

    driver = Driver()
    try:
        if args.only is None:
            dds_sections(robots, scale, driver, workdir, report)
        if args.only in (None, 'memory'):
            memory_section(robots, scale, driver, workdir, report)
        if args.only in (None, 'fleet'):
            fleet_section(robots[-1], scale, driver, workdir, report)
        hundred = generated_hands(workdir, hands=5, fingers=6, joints_per_finger=3)
        if args.only in (None, 'bag'):
            bag_section(hundred, scale.bag_seconds, scale.bag_batch, workdir, report)
        if args.only in (None, 'latency'):
            latency_section([(robots[0], 100), (hundred, 500)], scale, driver, workdir,
                            report)
        if args.only in (None, 'cluster'):
            cluster_section(hundred, *scale.cluster, workdir, report)
    finally:
        driver.node.destroy_node()
    rclpy.try_shutdown()
    if args.json:
        # allow_nan=False: a figure that is not a number fails here, not in a reader.
        args.json.write_text(json.dumps(report, indent=1, allow_nan=False))
    return 0


def _version(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


if __name__ == '__main__':
    sys.exit(main())
