"""The signals that ask any of the package's processes to stop.

The node, the container, the bag command and its writer process stop on each of them: `ros2
launch` stops its children with SIGINT, systemd and container runtimes with SIGTERM, a closed
terminal sends SIGHUP. Each process records the request in its handler and stops where it can
(ros/process.py, recorded/command.py). Imports only the standard library.
"""

import signal

__all__ = ['STOP_SIGNALS']

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
