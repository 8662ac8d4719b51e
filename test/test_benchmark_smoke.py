"""The benchmark's CI-sized run measures what it says: every row, from /tf that really flowed.

`bench/benchmark.py --smoke --json FILE` drives the node and the relays of bench/relay.py over
DDS; the checks below read its machine-readable output, so a node that publishes nothing, a
row that goes missing or a latency not computed from the JointState stamps fails here.
"""

import json
import math
from pathlib import Path
import subprocess
import sys
import time

# What the benchmark runs on and measures with: missing, they fail this module at once, by
# name, instead of in the output of the benchmark's process.
import jvrc_description  # noqa: F401
import psutil  # noqa: F401
import pytest
import rosbags.rosbag2  # noqa: F401

REPO = Path(__file__).resolve().parent.parent
NODE = 'urdf_state_publisher'
RELAYS = ('relay single', 'relay events', 'floor events', 'floor waitset')


def finite_positive(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


@pytest.fixture(scope='module')
def smoke(tmp_path_factory) -> tuple[dict, str, float]:
    """The report, the printed output, and how long the run took in seconds."""
    path = tmp_path_factory.mktemp('bench') / 'smoke.json'
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, str(REPO / 'bench' / 'benchmark.py'), '--smoke', '--json', str(path)],
        capture_output=True, text=True, timeout=300, cwd=REPO)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(path.read_text()), result.stdout, took


def plausible_latencies(row: dict, run_s: float) -> bool:
    """Latencies ordered, and within the run: a stamp and its receipt both fall inside it.

    Not a limit on speed: a latency longer than the whole run, or not positive, was not
    computed from stamps the run sent.
    """
    return 0 < row['p50_ms'] <= row['p99_ms'] < 1000 * run_s


def test_every_robot_rate_and_process_has_one_row(smoke):
    report, _, _ = smoke
    assert report['processes'] == [NODE, *RELAYS]
    assert len(report['robots']) == 3 and report['rates']
    keys = [(r['robot'], r['rate'], r['process']) for r in report['end_to_end']]
    assert sorted(keys) == sorted((robot, rate, process) for robot in report['robots']
                                  for rate in report['rates'] for process in report['processes'])


def test_the_node_answers_each_joint_state_with_tf_carrying_its_stamp(smoke):
    report, _, run_s = smoke
    for row in report['end_to_end']:
        if row['process'] != NODE:
            continue
        assert row['sent'] > 0, row
        # Only /tf whose stamp is one a JointState of the run carried counts as received.
        assert row['out_per_in'] > 0.9, row
        assert row['all_stamps_carried'], row  # every transform of sampled /tf: that stamp
        assert row['transforms'] == row['joints'], row  # one transform per moving joint
        # Latencies are receipt time minus those stamps: plausible only if they were copied.
        assert plausible_latencies(row, run_s), (row, run_s)


def test_every_row_has_finite_cpu_and_ordered_latencies(smoke):
    report, _, run_s = smoke
    for row in report['end_to_end']:
        assert finite_positive(row['cpu_us_per_js']), row
        assert finite_positive(row['cpu_ratio']), row
        assert row['out_per_in'] > 0, row  # the relays published the stamps they were sent
        assert row['transforms'] == row['joints'], row  # same size of /tf as the node
        assert plausible_latencies(row, run_s), (row, run_s)
    baseline = [r for r in report['end_to_end'] if r['process'] == 'relay single']
    assert all(r['cpu_ratio'] == 1.0 for r in baseline)


def test_the_default_configuration_is_measured_against_the_decimating_floor(smoke):
    """Default parameters: about 20 /tf per second whatever the input rate, as the floor."""
    report, _, run_s = smoke
    rows = report['default_config']
    keys = sorted((r['robot'], r['rate'], r['process']) for r in rows)
    assert keys == sorted((robot, rate, process) for robot in report['robots']
                          for rate in report['rates']
                          for process in (NODE, 'floor decimating'))
    for row in rows:
        assert row['configuration'] == 'default' and row['sent'] > 0, row
        # 50 ms of stamps between publications: at most one /tf per 50 ms of the run, and
        # at least one per 50 ms minus the messages lost at the edges of the windows.
        published = row['received'] / (row['sent'] / row['rate'])
        assert 10 < published <= 21, row
        assert row['all_stamps_carried'] or row['process'] != NODE, row
        assert finite_positive(row['cpu_us_per_js']) and finite_positive(row['floor_ratio'])
        assert row['cpu_us_per_tf'] > row['cpu_us_per_js'], row
        assert finite_positive(sum(row['threads_us_per_js'].values())), row
    floors = [r for r in rows if r['process'] == 'floor decimating']
    assert all(r['floor_ratio'] == 1.0 for r in floors)


def test_in_process_start_up_and_memory_sections(smoke):
    report, out, run_s = smoke
    assert [r['robot'] for r in report['in_process']] == report['robots']
    for row in report['in_process']:
        assert finite_positive(row['p50_us']) and row['p50_us'] <= row['p99_us'], row
        assert finite_positive(row['floor_p50_us']), row
    # Measured within the run, in seconds (the benchmark times it; this only reads it).
    assert finite_positive(report['startup_s']) and report['startup_s'] < run_s
    assert report['memory'] and all(finite_positive(m['rss_mib']) for m in report['memory'])
    # The running node beside a bare rclpy node, and the steps from an interpreter to it.
    assert report['rss']['node_mib'] > report['rss']['bare_mib'] > 0
    steps = [step['rss_mib'] for step in report['memory_steps']]
    assert len(steps) >= 6 and all(finite_positive(rss) for rss in steps)
    for heading in ('1. In-process', '2. End to end', 'targets (not asserted)',
                    '3. End to end over DDS, default configuration', '4. Start-up',
                    '5. Memory', 'C++ robot_state_publisher 3.3.3'):
        assert heading in out, out


def test_the_fleet_section_runs_each_size_both_ways(smoke):
    """Section 6: N processes and one container with N robots, every size, real figures."""
    report, out, _ = smoke
    rows = report['fleet']
    assert sorted((r['robots'], r['way']) for r in rows) == sorted(
        (n, way) for n in {r['robots'] for r in rows} for way in ('processes', 'container'))
    assert len({r['robots'] for r in rows}) >= 2
    for row in rows:
        assert row['sent'] > 0, row
        assert finite_positive(row['cpu_us_per_js']) and finite_positive(row['cpu_ratio']), row
        assert row['rss_mib'] >= row['pss_mib'] > 0, row
        # Every robot published /tf from the JointStates it was sent, both ways.
        assert row['robots_publishing'] == row['robots'], row
        assert row['tf_per_robot_s'] > 0, row
    processes = {r['robots']: r for r in rows if r['way'] == 'processes'}
    container = {r['robots']: r for r in rows if r['way'] == 'container'}
    largest = max(processes)
    # N processes hold N interpreters; one container holds one.
    assert processes[largest]['rss_mib'] > container[largest]['rss_mib']
    assert '6. A fleet' in out and report['fleet_targets']
