"""Section 6 of bench/benchmark.py: a fleet of N robots, as N processes and as one container.

Total RSS (and PSS), what each robot after the first adds, beside a bare rclpy node's
process, and CPU per JointState, all robots at 100 Hz in the default configuration.
"""


from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import struct
import subprocess
import sys
import time

from harness import (  # bench/, beside this file
    check_exits,
    Configuration,
    Driver,
    NODE,
    process_cpu_seconds,
    Scale,
    source_states,
    stamped,
    start_processes,
    stop_processes,
    verdict,
)
import psutil
import rclpy
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from robots import BenchRobot
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.ros.qos import TF_QOS

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
        [sys.executable, '-c', 'import sys; from urdf_state_publisher.ros.process import '
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
