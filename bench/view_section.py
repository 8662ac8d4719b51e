"""Section 10 of bench/benchmark.py: urdf_state_publisher_view under a robot at 100 Hz.

The node (every message: /tf at the JointStates' rate) and the view run as users start them;
Debian's headless Chromium shows the page (driven by playwright). Measured over the window:
the view's updates reaching the browser (bursts of websocket frames received by the page: one
per tick that moved a link), and the view process's CPU (its per-process CPU clock). Targets:
at least 30 updates a second (the view redraws at most 40 times a second: it should keep up),
and under a quarter of a core.
"""

from __future__ import annotations

from pathlib import Path
import socket
import subprocess
import sys
import threading
import time

from harness import (  # bench/, beside this file
    EVERY_MESSAGE,
    joint_states,
    process_cpu_seconds,
    verdict,
)
from rclpy.serialization import serialize_message

from urdf_state_publisher.kinematics.model import RobotModel

CHROMIUM = '/usr/bin/chromium'
CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
                 '--no-first-run', '--disable-background-networking',
                 '--disable-component-update', '--disable-sync']
RATE_HZ = 100.0
SECONDS = 10.0  # measured per robot
UPDATES_TARGET = 30.0
CPU_TARGET = 0.25  # of one core
# Frames closer than this are one update's (the view ticks every 25 ms at most).
BURST_GAP_S = 0.008
VIEW = ('import sys; from urdf_state_publisher.view.entry import main; sys.exit(main())')


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def view_section(robots, driver, workdir: Path, report: dict, seconds: float = SECONDS) -> None:
    """Updates per second and CPU of the view for each of `robots` at 100 Hz JointStates."""
    from playwright.sync_api import sync_playwright

    print(f'\n10. the view (urdf_state_publisher_view) at {RATE_HZ:g} Hz JointStates, every '
          f'message, a headless Chromium watching, {seconds:g} s per robot')
    report['view'] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for robot in robots:
                report['view'].append(_one_robot(robot, seconds, driver, workdir, browser))
        finally:
            browser.close()


def _one_robot(robot, seconds: float, driver, workdir: Path, browser) -> dict:
    model = RobotModel.from_file(robot.path)
    states = [(serialize_message(state),) for state in joint_states(model, 500)]
    port = _free_port()
    logs = [open(workdir / f'view_bench_{name}.log', 'w') for name in ('node', 'view')]
    node = subprocess.Popen([sys.executable, '-m', 'urdf_state_publisher', '--ros-args',
                             '-p', f'description_file:={robot.path}', *EVERY_MESSAGE.node_args],
                            stdout=logs[0], stderr=subprocess.STDOUT)
    view = subprocess.Popen([sys.executable, '-c', VIEW, '--port', str(port), '--no-sliders'],
                            stdout=logs[1], stderr=subprocess.STDOUT)
    try:
        page = browser.new_page(viewport={'width': 800, 'height': 600})
        arrivals: list[float] = []  # when each websocket frame reached the page
        page.on('websocket', lambda ws: ws.on('framereceived',
                                              lambda _: arrivals.append(time.monotonic())))
        deadline = time.monotonic() + 120
        while True:  # the view listens once it has imported viser and rclpy
            try:
                page.goto(f'http://127.0.0.1:{port}', timeout=10_000)
                break
            except Exception:  # noqa: BLE001 - not listening yet
                if time.monotonic() > deadline or view.poll() is not None:
                    raise
                time.sleep(0.5)
        page.get_by_text('Connected').wait_for(timeout=60_000)
        driver.connect('view', '')
        driver.drive('view', states, RATE_HZ, 2.0)  # warm-up: the description, every mesh
        page.wait_for_timeout(500)
        # The driver publishes from a thread of its own while playwright, waiting here, hands
        # over each frame as it comes (its events are dispatched only inside its calls).
        before_cpu, start = process_cpu_seconds(view.pid), time.monotonic()
        driving = threading.Thread(target=driver.drive,
                                   args=('view', states, RATE_HZ, seconds, 0.0))
        driving.start()
        while driving.is_alive():
            page.wait_for_timeout(50)
        driving.join()
        cpu = process_cpu_seconds(view.pid) - before_cpu
        end = time.monotonic()
        window = [t for t in arrivals if start <= t <= end]
        # An update comes as a burst of frames (viser sends 128 messages a frame at most);
        # bursts are a tick apart.
        bursts = sum(1 for a, b in zip([-1e9, *window], window) if b - a > BURST_GAP_S)
        updates = bursts / (end - start)
        share = cpu / (end - start)
        page.close()
    finally:
        driver.disconnect()
        for process in (view, node):
            process.terminate()
            process.wait(30)
        for log in logs:
            log.close()
    print(f'   {robot.label}: {updates:5.1f} updates/s (target ≥ {UPDATES_TARGET:g}: '
          f'{verdict(updates >= UPDATES_TARGET)}), view CPU {100 * share:4.1f} % of a core '
          f'(target < {100 * CPU_TARGET:g} %: {verdict(share < CPU_TARGET)})')
    return {'robot': robot.label, 'updates_per_s': updates, 'cpu_share': share}
