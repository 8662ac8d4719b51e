"""What the benchmark's sections measure with, and the processes they start.

The configurations, the scales, the driver that publishes JointStates and reads /tf, and the
processes of the node and the relays.

bench/benchmark.py runs the sections; bench/fleet_section.py and bench/teardown.py use this too.
"""


from __future__ import annotations

from dataclasses import dataclass, field, replace
import os
from pathlib import Path
import random
import signal
import struct
import subprocess
import sys
import time

import psutil
import rclpy
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message, serialize_message
from robots import BenchRobot
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.ros.qos import TF_QOS

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
    leaves at the same moment (ros/process.py), and relays stopped together have hung so in CI.
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


def verdict(ok: bool) -> str:
    return 'met' if ok else 'MISSED'
