"""Soak run: the node on jvrc1 under a steady JointState stream; losses, memory and CPU over time.

Not part of the test suite. Run it by hand:

  python bench/soak.py --minutes 30 --rate 1000    # the soak
  python bench/soak.py --minutes 0.2               # a quick check that the script works
  python bench/soak.py --container --minutes 5 --rate 100   # the container run (below)

It starts `python -m urdf_state_publisher` in its own process (its own DDS domain), publishes
JointStates naming every independent joint at --rate Hz with stamps exactly 1/rate apart (so
the node, at publish_frequency = rate, publishes one /tf per JointState), and every --interval
seconds records: JointStates sent, received by the node (its /diagnostics), /tf messages
received here, node RSS and CPU. Every 100th /tf message is decoded and checked (finite
numbers, unit quaternions). At the end it prints a table and a verdict; exit status 0 when
nothing was lost beyond --max-loss and the node's memory did not grow beyond --max-growth-mb.

With --container, robots are loaded and unloaded in an urdf_state_publisher_container for the
duration instead, under a stream of joint states, and the container's RSS slope per cycle is
set beside a bare rclpy node's (bench/container_soak.py).
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = Path(__file__).resolve().parent


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--minutes', type=float, default=30.0, help='duration (default 30)')
    parser.add_argument('--rate', type=float, default=1000.0,
                        help='JointStates per second (default 1000)')
    parser.add_argument('--depth', type=int, default=5,
                        help="the node's joint_states queue depth, set through its QoS-override "
                             'parameter (default 5: SensorDataQoS, as robot_state_publisher)')
    parser.add_argument('--interval', type=float, default=10.0,
                        help='seconds between samples (default 10; shorter for short runs, so '
                             'that there are at least 6 samples)')
    parser.add_argument('--robot', choices=('jvrc1', 'sample_arm'), default='jvrc1')
    parser.add_argument('--container', action='store_true',
                        help='the container run: robots loaded and unloaded under a stream')
    parser.add_argument('--max-loss', type=float, default=0.001,
                        help='largest tolerated fraction of JointStates the node does not '
                             'receive (best effort; default 0.001)')
    parser.add_argument('--max-growth-mb', type=float, default=5.0,
                        help='largest tolerated RSS growth after warm-up, MB (default 5)')
    return parser.parse_args(argv)


def robot_path(name: str) -> Path:
    sys.path.insert(0, str(HERE))
    from robots import jvrc1, sample_arm  # bench/, beside this file

    return (jvrc1() if name == 'jvrc1' else sample_arm()).path


class Node:
    """The node in its own process, with a parameters file and a log file."""

    def __init__(self, directory: Path, description: str, rate: float, depth: int):
        import yaml

        parameters = directory / 'soak_params.yaml'
        parameters.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
            'robot_description': description, 'publish_frequency': float(rate),
            'qos_overrides': {'/joint_states': {'subscription': {'depth': depth}}}}}}))
        self.log_path = directory / 'soak_node.log'
        self._log = open(self.log_path, 'w')
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'urdf_state_publisher', '--ros-args', '--params-file',
             str(parameters), '-r', '__node:=soak_node'],
            stdout=self._log, stderr=subprocess.STDOUT)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()
        finally:
            self._log.close()


class Observer:
    """Counts /tf messages (raw), checks every 100th, keeps the node's /diagnostics counters."""

    def __init__(self, node):
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from tf2_msgs.msg import TFMessage

        self.tf_received = 0
        self.checked = 0
        self.unsound = 0
        self.static_received = 0
        self.node_received = 0
        self.node_dropped: dict[str, int] = {}
        self._lock = threading.Lock()
        tf_qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(TFMessage, '/tf', self._on_tf, tf_qos, raw=True)
        node.create_subscription(TFMessage, '/tf_static', self._on_static, latched)
        node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 10)

    def _on_tf(self, data: bytes) -> None:
        with self._lock:
            self.tf_received += 1
            check = self.tf_received % 100 == 1
        if check:
            from rclpy.serialization import deserialize_message
            from tf2_msgs.msg import TFMessage

            message = deserialize_message(data, TFMessage)
            sound = all(_sound(t.transform) for t in message.transforms)
            with self._lock:
                self.checked += 1
                self.unsound += not sound

    def _on_static(self, message) -> None:
        self.static_received += 1

    def _on_diagnostics(self, array) -> None:
        for status in array.status:
            values = {item.key: item.value for item in status.values}
            if 'joint_states received' in values:
                with self._lock:
                    self.node_received = int(values['joint_states received'])
                    self.node_dropped = {k[len('dropped: '):]: int(v) for k, v in values.items()
                                         if k.startswith('dropped: ')}


def _sound(transform) -> bool:
    t, r = transform.translation, transform.rotation
    numbers = (t.x, t.y, t.z, r.x, r.y, r.z, r.w)
    return all(math.isfinite(v) for v in numbers) and abs(
        math.sqrt(r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w) - 1.0) < 1e-9


class Publisher(threading.Thread):
    """JointStates naming every independent joint at `rate` Hz, values within limits."""

    def __init__(self, node, model, rate: float):
        super().__init__(daemon=True)
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import JointState

        self._publisher = node.create_publisher(JointState, 'joint_states',
                                                qos_profile_sensor_data)
        self._message = JointState()
        self._names = [n for n in model.independent_joints if n in model.scalar_joints]
        self._message.name = self._names
        self._ranges = [model.limits(n) for n in self._names]
        self._period = 1.0 / rate
        self._step_ns = round(1e9 / rate)
        self._halt = threading.Event()
        self.sent = 0
        self.late = 0  # times the loop fell more than 10 periods behind its schedule

    def subscribers(self) -> int:
        return self._publisher.get_subscription_count()

    def run(self) -> None:
        start_ns = 1_000_000 * 1_000_000_000  # sec 1 000 000: far from 0, never backwards
        start = time.monotonic()
        while not self._halt.is_set():
            k = self.sent
            message = self._message
            message.header.stamp.sec, message.header.stamp.nanosec = divmod(
                start_ns + k * self._step_ns, 1_000_000_000)
            message.position = [
                _within(lower, upper, 0.5 * math.sin(k * 1e-3 + i))
                for i, (lower, upper) in enumerate(self._ranges)]
            self._publisher.publish(message)
            self.sent += 1
            delay = start + self.sent * self._period - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -10 * self._period:
                self.late += 1

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join()


def _within(lower: float, upper: float, value: float) -> float:
    if math.isinf(lower) or math.isinf(upper):
        return value
    middle, half = (lower + upper) / 2, (upper - lower) / 2
    return middle + half * value


def verdict(rows: list[dict], final: dict, arguments: argparse.Namespace) -> tuple[bool, list]:
    lines = []
    ok = True
    sent, received, tf = final['sent'], final['node_received'], final['tf_received']
    loss = (sent - received) / sent if sent else 1.0
    good = loss <= arguments.max_loss
    ok &= good
    lines.append(f'{"ok  " if good else "FAIL"} JointStates received by the node: {received} of '
                 f'{sent} ({100 * loss:.3f} % lost on the best-effort link, at most '
                 f'{100 * arguments.max_loss:.3f} % tolerated)')
    good = tf == received
    ok &= good
    lines.append(f'{"ok  " if good else "FAIL"} /tf messages received here: {tf} (one per '
                 f'JointState received by the node: {received})')
    good = final['unsound'] == 0 and final['checked'] > 0
    ok &= good
    lines.append(f'{"ok  " if good else "FAIL"} /tf messages decoded and checked: '
                 f'{final["checked"]}, with a non-finite number or non-unit quaternion: '
                 f'{final["unsound"]}')
    warm = rows[len(rows) // 3:] if len(rows) >= 3 else rows
    growth = warm[-1]['rss_mb'] - warm[0]['rss_mb'] if warm else 0.0
    good = growth <= arguments.max_growth_mb
    ok &= good
    lines.append(f'{"ok  " if good else "FAIL"} node RSS after warm-up: {warm[0]["rss_mb"]:.1f} '
                 f'-> {warm[-1]["rss_mb"]:.1f} MB ({growth:+.1f} MB, at most '
                 f'{arguments.max_growth_mb:.1f} MB tolerated)')
    good = final['exit_status'] == 0 and final['alive_at_end']
    ok &= good
    lines.append(f'{"ok  " if good else "FAIL"} node alive to the end, exit status on SIGINT: '
                 f'{final["exit_status"]}')
    if final['dropped']:
        lines.append(f'     node drop counters: {final["dropped"]}')
    if final['late']:
        lines.append(f'     note: the publisher fell behind its schedule {final["late"]} times '
                     '(this machine, not the node)')
    return ok, lines


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    os.environ.setdefault('ROS_DOMAIN_ID', str(101 + os.getpid() % 100))
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    import psutil
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from urdf_state_publisher import RobotModel

    duration = arguments.minutes * 60.0
    interval = min(arguments.interval, max(duration / 6, 0.5))
    path = robot_path(arguments.robot)
    description = path.read_text()
    model = RobotModel.from_urdf(description)
    if arguments.container:
        sys.path.insert(0, str(HERE))
        from container_soak import container_soak  # bench/, beside this file

        return container_soak(arguments, description, model)
    directory = Path(tempfile.mkdtemp(prefix='urdf_state_publisher_soak_'))
    print(f'soak: {arguments.robot} ({len(model.independent_joints)} independent joints, '
          f'{len(model.scalar_joints)} with mimics), {arguments.rate:g} Hz for '
          f'{arguments.minutes:g} min, samples every {interval:g} s, '
          f'ROS_DOMAIN_ID={os.environ["ROS_DOMAIN_ID"]}, node log {directory / "soak_node.log"}')

    node_process = Node(directory, description, arguments.rate, arguments.depth)
    # Ctrl-C as KeyboardInterrupt in this thread, so the publishing thread stops before the
    # context does (rclpy's own handler would shut the context down under it).
    from rclpy.signals import SignalHandlerOptions
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    probe = rclpy.create_node('soak_probe')
    observer = Observer(probe)
    publisher = Publisher(probe, model, arguments.rate)
    executor = SingleThreadedExecutor()
    executor.add_node(probe)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    exit_status = None
    try:
        deadline = time.monotonic() + 30
        while not (observer.static_received and publisher.subscribers()):
            if time.monotonic() > deadline or node_process.process.poll() is not None:
                print('the node did not start; its log:\n' + node_process.log_path.read_text())
                return 2
            time.sleep(0.05)
        process = psutil.Process(node_process.process.pid)
        rows: list[dict] = []
        # node rx comes from the node's /diagnostics, published once a second: it lags.
        header = (f'{"t (s)":>7} {"sent":>9} {"node rx":>9} {"/tf rx":>9} {"in flight":>9} '
                  f'{"rate Hz":>8} {"RSS MB":>7} {"CPU %":>6}')
        print(header)
        print('-' * len(header))
        start = time.monotonic()
        publisher.start()
        last_time, last_cpu, last_tf = start, sum(process.cpu_times()[:2]), 0
        next_sample = start + interval
        while True:
            time.sleep(max(0.0, next_sample - time.monotonic()))
            now = time.monotonic()
            cpu = sum(process.cpu_times()[:2])
            row = {'t': now - start, 'sent': publisher.sent, 'node_received':
                   observer.node_received, 'tf_received': observer.tf_received,
                   'rss_mb': process.memory_info().rss / 1e6,
                   'cpu': 100 * (cpu - last_cpu) / (now - last_time),
                   'rate': (observer.tf_received - last_tf) / (now - last_time)}
            rows.append(row)
            print(f'{row["t"]:7.1f} {row["sent"]:9d} {row["node_received"]:9d} '
                  f'{row["tf_received"]:9d} {row["sent"] - row["tf_received"]:9d} '
                  f'{row["rate"]:8.1f} {row["rss_mb"]:7.1f} {row["cpu"]:6.1f}', flush=True)
            last_time, last_cpu, last_tf = now, cpu, observer.tf_received
            next_sample += interval
            if now - start >= duration - 1e-6:
                break
        publisher.stop()
        # Let everything in flight arrive and the node count it in its next /diagnostics.
        time.sleep(2.5)
        alive = node_process.process.poll() is None
        final = {'sent': publisher.sent, 'node_received': observer.node_received,
                 'tf_received': observer.tf_received, 'checked': observer.checked,
                 'unsound': observer.unsound, 'dropped': observer.node_dropped,
                 'late': publisher.late, 'alive_at_end': alive}
        print(f'after the stream stopped: sent {final["sent"]}, node received '
              f'{final["node_received"]}, /tf received {final["tf_received"]}, '
              f'node RSS {process.memory_info().rss / 1e6:.1f} MB')
    except KeyboardInterrupt:
        print('interrupted: no verdict')
        return 130
    finally:
        publisher.stop()  # before the context goes: it publishes on it
        exit_status = node_process.stop()
        executor.shutdown()
        probe.destroy_node()
        rclpy.try_shutdown()
    final['exit_status'] = exit_status
    ok, lines = verdict(rows, final, arguments)
    print('\n'.join(lines))
    print(f'VERDICT: {"PASS" if ok else "FAIL"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
