"""The soak's container run: robots loaded and unloaded for a while under a stream of joint states.

`python bench/soak.py --container --minutes 5` runs it. One urdf_state_publisher_container in
its own process; one robot stays loaded, another is loaded and unloaded again and again (the
fleet simulation that spawns and despawns robots), each sent JointStates at --rate Hz while it
is loaded. The container's RSS is read after every cycle; then a bare rclpy node with the same
entities is made and destroyed as often in a process of its own, beside a node that stays
(bench/bare_node_cycles.py), and the two slopes per cycle after warm-up are printed side by
side, with a verdict by the same rule as test/ros/test_container.py.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = Path(__file__).resolve().parent
CALL_TIMEOUT_S = 30.0


class Container:
    """urdf_state_publisher_container in its own process, and a client of its services."""

    def __init__(self, probe, log_path: Path):
        from composition_interfaces.srv import LoadNode, UnloadNode

        self._log = open(log_path, 'w')
        self.process = subprocess.Popen(
            [sys.executable, '-c', 'import sys; from urdf_state_publisher.ros.process import '
             'container_main; sys.exit(container_main())', '--ros-args', '-r',
             '__node:=soak_container'], stdout=self._log, stderr=subprocess.STDOUT)
        self._load = probe.create_client(LoadNode, '/soak_container/_container/load_node')
        self._unload = probe.create_client(UnloadNode, '/soak_container/_container/unload_node')
        self._load_type, self._unload_type = LoadNode, UnloadNode
        if not self._load.wait_for_service(timeout_sec=CALL_TIMEOUT_S):
            raise RuntimeError('the container did not offer load_node:\n'
                               + log_path.read_text()[-2000:])

    @staticmethod
    def _call(client, request):
        future = client.call_async(request)
        deadline = time.monotonic() + CALL_TIMEOUT_S
        while not future.done():
            if time.monotonic() > deadline:
                raise RuntimeError('the container did not answer')
            time.sleep(0.001)
        return future.result()

    def load(self, name: str, description: str) -> int:
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue

        request = self._load_type.Request(
            package_name='urdf_state_publisher',
            plugin_name='urdf_state_publisher::UrdfStatePublisher', node_name=name,
            node_namespace=f'/{name}')
        request.parameters = [Parameter(name='robot_description', value=ParameterValue(
            type=ParameterType.PARAMETER_STRING, string_value=description))]
        response = self._call(self._load, request)
        if not response.success:
            raise RuntimeError(f'load of {name} failed: {response.error_message}')
        return response.unique_id

    def unload(self, unique_id: int) -> None:
        response = self._call(self._unload, self._unload_type.Request(unique_id=unique_id))
        if not response.success:
            raise RuntimeError(f'unload of {unique_id} failed: {response.error_message}')

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(20)
        finally:
            self._log.close()


class Stream(threading.Thread):
    """JointStates of the robot's joints to each namespace in `namespaces`, at `rate` Hz."""

    def __init__(self, probe, model, namespaces: tuple[str, ...], rate: float):
        super().__init__(daemon=True)
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import JointState

        names = [n for n in model.independent_joints if n in model.scalar_joints]
        self._message = JointState(name=names, position=[0.0] * len(names))
        self._publishers = [probe.create_publisher(JointState, f'/{ns}/joint_states',
                                                   qos_profile_sensor_data)
                            for ns in namespaces]
        self._period = 1.0 / rate
        self._halt = threading.Event()
        self.sent = 0

    def run(self) -> None:
        start = time.monotonic()
        while not self._halt.is_set():
            stamp = time.time_ns()
            self._message.header.stamp.sec, self._message.header.stamp.nanosec = divmod(
                stamp, 1_000_000_000)
            for publisher in self._publishers:
                publisher.publish(self._message)
            self.sent += 1
            time.sleep(max(0.0, start + self.sent * self._period - time.monotonic()))

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join()


def container_soak(arguments: argparse.Namespace, description: str, model) -> int:
    """Run the container soak; exit status 0 when its slope is no leak beside the floor's."""
    import psutil
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    sys.path.insert(0, str(HERE))
    from bare_node_cycles import leaks, slope, WARM_UP  # bench/, beside this file

    os.environ.setdefault('ROS_DOMAIN_ID', str(101 + os.getpid() % 100))
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    directory = Path(tempfile.mkdtemp(prefix='urdf_state_publisher_soak_'))
    duration = arguments.minutes * 60.0
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    probe = rclpy.create_node('soak_probe')
    executor = SingleThreadedExecutor()
    executor.add_node(probe)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    container = Container(probe, directory / 'container.log')
    stream = Stream(probe, model, ('resident', 'visitor'), arguments.rate)
    sizes: list[int] = []
    print(f'container soak: {arguments.robot}, one robot resident and one loaded and unloaded '
          f'again and again, both sent JointStates at {arguments.rate:g} Hz, for '
          f'{arguments.minutes:g} min; container log {directory / "container.log"}')
    try:
        container.load('resident', description)
        process = psutil.Process(container.process.pid)
        stream.start()
        start = time.monotonic()
        while time.monotonic() - start < duration or len(sizes) < 3 * WARM_UP:
            unique_id = container.load('visitor', description)
            time.sleep(0.05)  # it receives joint states and publishes /tf meanwhile
            container.unload(unique_id)
            sizes.append(process.memory_info().rss)
            if len(sizes) % 100 == 0:
                print(f'{time.monotonic() - start:7.1f} s  {len(sizes):6d} cycles  '
                      f'RSS {sizes[-1] / 2**20:7.1f} MiB', flush=True)
    finally:
        stream.stop()
        status = container.stop()
        executor.shutdown()
        probe.destroy_node()
        rclpy.try_shutdown()
    floor = subprocess.run([sys.executable, str(HERE / 'bare_node_cycles.py'),
                            str(len(sizes))], capture_output=True, text=True, check=True)
    ours, bare = slope(sizes), slope(json.loads(floor.stdout.splitlines()[-1]))
    leak = leaks(ours, bare)
    print(f'{len(sizes)} cycles, {stream.sent} JointStates to each robot; RSS per cycle after '
          f'the first {WARM_UP}: the container {ours / 1024:.2f} KiB, a bare rclpy node made and '
          f'destroyed as often {bare / 1024:.2f} KiB; container exit status {status}')
    ok = not leak and status == 0
    print(f'VERDICT: {"PASS" if ok else "FAIL"}')
    return 0 if ok else 1
