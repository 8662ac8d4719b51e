"""What the middleware keeps of a service made and destroyed: rclpy alone, nothing of the package.

A node with SERVICES services is made and destroyed CYCLES times in one process, with or
without a node that stays in the same context all along (as a container's own node stays).
Prints the RSS growth per cycle after the first 100 (medians of the first and the last third).

    python bench/service_residue.py CYCLES SERVICES [--resident]

Measured here (Jazzy wheels, 600 cycles), KiB a cycle:

| services | Fast DDS, alone | Fast DDS, beside a node | Cyclone, alone | Cyclone, beside a node |
|---|---|---|---|---|
| 0 | 0.14 | 0.11 | 1.38 | 1.05 |
| 1 | 0.22 | 0.13 | 1.31 | 2.06 |
| 6 (a node's parameter services) | 0.21 | 0.12 | 1.13 | 7.66 |

On Cyclone DDS (0.10.5 under rmw_cyclonedds) each node leaves about 1 KiB whatever it has
(ros2/rclpy#1034 is that growth), and beside a node that stays each service another 1 KiB,
without end (6 services, 3 000 cycles: 65 -> 87 MiB). The floor of the container's unloading
test (bench/bare_node_cycles.py) keeps a node for that reason.
"""

from __future__ import annotations

import argparse
import statistics

import psutil
from rcl_interfaces.srv import ListParameters
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter

WARM_UP = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('cycles', type=int)
    parser.add_argument('services', type=int)
    parser.add_argument('--resident', action='store_true',
                        help='keep a node in the context while the others come and go')
    arguments = parser.parse_args()
    rclpy.init()
    executor = SingleThreadedExecutor()
    if arguments.resident:
        executor.add_node(rclpy.create_node('resident'))
    process = psutil.Process()
    sizes = []
    for _ in range(arguments.cycles):
        # Only the services asked for: no parameter or type description services.
        node = rclpy.create_node('visitor', start_parameter_services=False, parameter_overrides=[
            Parameter('start_type_description_service', value=False)])
        for k in range(arguments.services):
            node.create_service(ListParameters, f'service_{k}', lambda request, response: response)
        node.destroy_node()
        for _ in range(3):
            executor.spin_once(timeout_sec=0.0)
        sizes.append(process.memory_info().rss)
    sizes = sizes[WARM_UP:]
    third = len(sizes) // 3
    growth = statistics.median(sizes[-third:]) - statistics.median(sizes[:third])
    print(f'services: {arguments.services}, {"with" if arguments.resident else "without"} a node '
          f'that stays: {growth / (len(sizes) - third) / 1024:.2f} KiB a cycle')
    rclpy.shutdown()


if __name__ == '__main__':
    main()
