"""Benchmark of urdf_state_publisher against rclpy relays measured in the same run.

  python bench/benchmark.py                  # the full run (about 20 minutes)
  python bench/benchmark.py --smoke          # under a minute: that the script works (tests)
  python bench/benchmark.py --long           # adds node memory after 1 000 000 messages
  python bench/benchmark.py --json FILE      # also writes every figure to FILE
  python bench/benchmark.py --only memory    # section 5 alone (about a minute)
  python bench/benchmark.py --only fleet     # section 6 alone (about 5 minutes)
  python bench/benchmark.py --only bag       # section 7 alone (about 5 minutes)
  python bench/benchmark.py --only latency   # section 8 alone (about 3 minutes)
  python bench/benchmark.py --only cluster   # section 9 alone (about a minute)
  python bench/benchmark.py --only view      # section 10 alone (about a minute)
  python bench/benchmark.py --only view --view-robot tiago_dual.urdf  # and a robot of yours

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
 10. the view: urdf_state_publisher_view's updates reaching a headless Chromium, and its CPU,
     for jvrc1 (meshes) and a 140-joint robot at 100 Hz JointStates (bench/view_section.py;
     needs the view extra, playwright and Debian's chromium; not in --smoke).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
import json
import os
from pathlib import Path
import platform
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
from fleet_section import fleet_section  # bench/, beside this file
from harness import (  # bench/, beside this file
    all_stamps_carried,
    BASELINE,
    check_exits,
    Configuration,
    DECIMATING_FLOOR,
    DEFAULT_CONFIG,
    Driver,
    EVENTS,
    EVERY_MESSAGE,
    FLOORS,
    FULL,
    joint_states,
    LATCHED,
    LATENCY_EVERY,
    Measured,
    NODE,
    percentile,
    process_cpu_seconds,
    PROCESSES,
    Scale,
    SMOKE,
    source_states,
    stamped,
    start_processes,
    stop_processes,
    thread_cpu_seconds,
    topic_prefix,
    TWO_SOURCES,
    verdict,
    wait_answering,
)
import psutil
import rclpy
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message, serialize_message
from relay import tf_pieces
from robots import BenchRobot, generated_hands, jvrc1, sample_arm
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.ros.node import UrdfStatePublisher
from urdf_state_publisher.ros.qos import TF_QOS

CPP_FACT = ('C++ robot_state_publisher 3.3.3, built from source on this machine against the '
            'Kilted wheels, cost 0.25–0.35× the SingleThreadedExecutor relay per JointState '
            'at 500 Hz (not measured here).')


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
import urdf_state_publisher.ros.node
step('urdf_state_publisher.ros.node and the rest of the package')
from rclpy.parameter import Parameter
node = urdf_state_publisher.ros.node.UrdfStatePublisher(parameter_overrides=[
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--smoke', action='store_true', help='under a minute, CI-sized')
    parser.add_argument('--long', action='store_true', help='memory after 1 000 000 messages')
    parser.add_argument('--json', type=Path, help='also write every figure to this file')
    parser.add_argument('--only',
                        choices=['memory', 'fleet', 'bag', 'latency', 'cluster', 'view'],
                        help='run only this section (memory: section 5, fleet: section 6, '
                             'bag: section 7, latency: section 8, cluster: section 9, '
                             'view: section 10)')
    parser.add_argument('--view-robot', type=Path, action='append', default=[],
                        metavar='URDF',
                        help='section 10 also on this description (repeatable; its '
                             'package:// meshes found through AMENT_PREFIX_PATH), such as '
                             "tiago_dual's, expanded by xacro")
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
        # Not in --smoke: it needs the view extra, playwright and Debian's chromium.
        if args.only == 'view' or (args.only is None and not args.smoke):
            from view_section import view_section  # bench/; imports playwright

            given = [BenchRobot(f'{path.stem} (given)', path.resolve())
                     for path in args.view_robot]
            view_section([*robots[1:], *given], driver, workdir, report)
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
