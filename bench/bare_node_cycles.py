"""The floor of a container's load and unload cycle: a bare rclpy node, made and destroyed.

Each cycle makes an rclpy node with the entities a loaded urdf_state_publisher node has (its
parameters declared, the joint-state and multi-DOF subscriptions, the /tf, /tf_static,
/diagnostics and robot_description publishers, the diagnostics timer), adds it to an
EventsExecutor (the container's), spins, takes it out, spins, and destroys it: what rclpy and
the middleware keep of a node that is made and destroyed, and nothing of the package. A node
stays in the executor all along, as the container's own node does: beside a node that stays,
Cyclone DDS keeps about 1 KiB of each service made and destroyed (a node's parameter services
make 7 KiB a cycle; alone, nothing), where Fast DDS keeps nothing either way
(bench/service_residue.py). Prints one JSON
line: the process's RSS in bytes after each cycle.

    python bench/bare_node_cycles.py CYCLES

`slope` is how a run of cycles is judged, the container's (test/ros/test_container.py, the soak's
container run) and this floor's alike; `leaks` compares the two.
"""

from __future__ import annotations

import json
import statistics
import sys

from diagnostic_msgs.msg import DiagnosticArray
import psutil
import rclpy
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState, MultiDOFJointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.engine.parameters import PARAMETERS
from urdf_state_publisher.ros.qos import DIAGNOSTICS_QOS, LATCHED_QOS, TF_QOS
from urdf_state_publisher.ros.rclpy_capabilities import make_executor

# Cycles left out of a slope: caches and the allocator's arenas settle in them.
WARM_UP = 50
# What a cycle may leave beyond what the floor leaves: the slope's noise (an allocator
# rounding, a Python dict growing), far below what a node not destroyed leaves (its entities,
# about 70 KiB a cycle and more) or a reference kept to a destroyed one (its model and
# templates, as much).
SLOPE_MARGIN = 8 * 1024


def slope(sizes: list[int]) -> float:
    """Bytes per cycle after WARM_UP: the growth from the first third of the rest to the last.

    By medians: RSS moves by pages and by the allocator's trims, which a least-squares fit over
    a few hundred cycles turns into tens of KiB per cycle either way.
    """
    sizes = sizes[WARM_UP:]
    third = len(sizes) // 3
    first, last = statistics.median(sizes[:third]), statistics.median(sizes[-third:])
    return (last - first) / (len(sizes) - third)


def leaks(ours: float, floor: float) -> bool:
    """Whether a slope of `ours` is a leak beside a floor of `floor` (bytes per cycle)."""
    return ours > max(floor, 0.0) + SLOPE_MARGIN


def cycle(context, executor, k: int) -> None:
    node = rclpy.create_node(
        'bare', namespace=f'/floor_{k % 2}', context=context,
        parameter_overrides=[Parameter('start_type_description_service', value=False)])
    for spec in PARAMETERS:
        node.declare_parameter(spec.name, list(spec.default) if isinstance(spec.default, tuple)
                               else spec.default)
    for message_type, topic in ((JointState, 'joint_states'),
                                (MultiDOFJointState, 'multi_dof_joint_states')):
        node.create_subscription(message_type, topic, lambda data: None,
                                 qos_profile_sensor_data, raw=True)
    for message_type, topic, qos in ((TFMessage, '/tf', TF_QOS),
                                     (TFMessage, '/tf_static', LATCHED_QOS),
                                     (DiagnosticArray, '/diagnostics', DIAGNOSTICS_QOS),
                                     (String, 'robot_description', LATCHED_QOS)):
        node.create_publisher(message_type, topic, qos)
    node.create_timer(1.0, lambda: None)
    executor.add_node(node)
    executor.spin_once(timeout_sec=0.0)
    executor.remove_node(node)
    executor.spin_once(timeout_sec=0.0)
    node.destroy_node()


def main(cycles: int) -> None:
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = make_executor(context)
    resident = rclpy.create_node('resident', namespace='/floor', context=context)
    executor.add_node(resident)
    process = psutil.Process()
    sizes = []
    try:
        for k in range(cycles):
            cycle(context, executor, k)
            sizes.append(process.memory_info().rss)
    finally:
        executor.remove_node(resident)
        resident.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown(context=context)
    print(json.dumps(sizes))


if __name__ == '__main__':
    main(int(sys.argv[1]))
