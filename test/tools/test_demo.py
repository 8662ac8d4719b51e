"""The demo and its motion source: pure helpers, then the whole demo as a subprocess."""

import math
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import time

from conftest import REPO, SAMPLE_URDF, SAMPLE_XACRO
from node_fixtures import SAMPLE_CHILD, SAMPLE_STATIC
import pytest

from urdf_state_publisher import RobotModel
from urdf_state_publisher.tools.demo import (
    bundled_description,
    joint_value,
    RateMeter,
    render_summary,
    render_view,
    TransformCache,
)
from urdf_state_publisher.tools.motion_source import MotionPlan, split_ros_args

DEMO_TIMEOUT = 90
WAIT_S = 30  # how long a test waits for processes to end, also on a loaded machine
# Every frame of the sample robot: the root, the children of its moving joints, and of its
# fixed joints and sensors.
SAMPLE_FRAMES = {'base_footprint', *SAMPLE_CHILD.values(), *SAMPLE_STATIC}


@pytest.fixture(scope='module')
def model():
    return RobotModel.from_file(SAMPLE_URDF)


# Pure helpers ---------------------------------------------------------------------------------

def test_bundled_description_is_the_sample_robot():
    assert bundled_description() == SAMPLE_URDF
    assert bundled_description('sample_arm.urdf.xacro') == SAMPLE_XACRO


def test_joint_value_inverts_the_joint_transform(model):
    assert set(model.scalar_joints) == set(SAMPLE_CHILD)
    for name in model.scalar_joints:
        lower, upper = model.limits(name)
        value = 0.5 if math.isinf(lower) else lower + 0.3 * (upper - lower)
        decoded = joint_value(model.joint(name), model.joint_pose(name, value))
        assert decoded == pytest.approx(value, abs=1e-9), name
    assert joint_value(model.joint('base_joint'), model.joint_pose('base_joint')) is None


def stamped_message(model, values):
    """A TFMessage-like object holding every joint and sensor transform for `values`."""
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    transforms = [*model.static_transforms(), *model.joint_transforms(values)]
    message = TFMessage()
    for transform in transforms:
        stamped = TransformStamped()
        stamped.header.frame_id = transform.parent
        stamped.child_frame_id = transform.child
        t, r = stamped.transform.translation, stamped.transform.rotation
        t.x, t.y, t.z = transform.pose.translation
        r.x, r.y, r.z, r.w = transform.pose.rotation
        message.transforms.append(stamped)
    return message


def test_transform_cache_chains_to_the_model_poses(model):
    values = {'torso_lift_joint': 0.2, 'shoulder_pan_joint': 2.0, 'shoulder_lift_joint': -0.7,
              'elbow_joint': 1.1, 'wrist_roll_joint': -2.5, 'left_finger_joint': 0.035}
    cache = TransformCache()
    assert cache.pose_in('tool0', model.root) is None
    cache.add(stamped_message(model, values))
    # Every joint's value given explicitly, mimic followers resolved as the node resolves them.
    update = model.update(tuple(values), list(values.values()))
    expected = model.frame_poses(dict(zip(update.plan.joints, update.values.tolist())))
    assert set(expected) == SAMPLE_FRAMES
    for frame, pose in expected.items():
        chained = cache.pose_in(frame, model.root)
        assert chained.translation == pytest.approx(pose.translation, abs=1e-9), frame
        assert chained.matrix() == pytest.approx(pose.matrix(), abs=1e-9), frame
    assert cache.pose_in('no_such_frame', model.root) is None


def test_rate_meter():
    meter = RateMeter(window=2.0)
    assert meter.rate(0.0) is None and meter.average() == 0.0  # nothing to measure yet
    for k in range(101):
        meter.tick(10.0 + k * 0.02)
    assert meter.count == 101
    assert meter.average() == pytest.approx(50.0)  # 100 intervals in 2 s
    # The messages of the last 2 s, ends included, per second: all 101, then the 51 of
    # 10.99-12.99 s; the exact counts over the window, so no tolerance beyond rounding.
    assert meter.rate(12.0) == pytest.approx(101 / 2.0, abs=1e-12)
    assert meter.rate(12.99) == pytest.approx(51 / 2.0, abs=1e-12)
    assert meter.rate(20.0) == 0.0  # nothing in the last window
    # Within the first window: over the time since the first message, once that is 0.5 s;
    # before, no rate at all.
    early = RateMeter(window=2.0)
    for now in (100.0, 100.1, 100.2):
        early.tick(now)
    assert early.rate(100.2) is None and early.rate(100.49) is None
    assert early.rate(100.5) == pytest.approx(3 / 0.5, abs=1e-12)
    early.tick(101.0)
    assert early.rate(101.0) == pytest.approx(4 / 1.0, abs=1e-12)


def test_a_rate_not_yet_measured_is_shown_as_such_never_as_0_hz(model):
    from urdf_state_publisher.tools.demo import NOT_MEASURED, Rates

    tf, tf_static, joint_states = RateMeter(), RateMeter(), RateMeter()
    # The first screens: nothing received yet; then one message of each, just now.
    screens = [render_view(model, TransformCache(),
                           Rates.at(1.0, tf, tf_static, joint_states), 1.0)]
    for meter in (tf, tf_static, joint_states):
        meter.tick(2.0)
    screens.append(render_view(model, TransformCache(),
                               Rates.at(2.1, tf, tf_static, joint_states), 2.1))
    for view in screens:
        header, rates = view.splitlines()[:2]
        assert 'Hz' not in header and 'Hz' not in rates, view
        assert header.count(NOT_MEASURED) == 2 and rates.count(NOT_MEASURED) == 3, view
    # Measured, a rate is in Hz: 1 message in the 1 s since it came, and a true 0.0 Hz once
    # nothing came for a whole window.
    measured = render_view(model, TransformCache(),
                           Rates.at(3.0, tf, tf_static, joint_states), 3.0)
    assert '(8 moving joints, 1.0 Hz)' in measured and NOT_MEASURED not in measured
    stopped = render_view(model, TransformCache(),
                          Rates.at(10.0, tf, tf_static, joint_states), 10.0)
    assert '/tf 0.0 Hz (1 message)' in stopped


def test_view_and_summary_show_what_was_received(model):
    from urdf_state_publisher.tools.demo import Rates

    cache = TransformCache()
    empty = render_view(model, cache, Rates(), 0.0)
    assert 'frames seen 0/16' in empty and '(not received yet)' in empty
    cache.add(stamped_message(model, {'elbow_joint': 0.5, 'left_finger_joint': 0.04}))
    # only frames whose chain of transforms reaches the root count as seen
    assert 'frames seen 4/16' in render_view(model, cache, Rates(), 1.0)
    cache.add(stamped_message(model, {'torso_lift_joint': 0.1, 'shoulder_pan_joint': 0.0,
                                      'shoulder_lift_joint': 0.0, 'wrist_roll_joint': 0.0}))
    view = render_view(model, cache, Rates(tf=50.0, tf_count=10), 1.0)
    header = view.splitlines()[0]
    assert header.startswith('urdf_state_publisher demo: node publishing sample_arm on /tf '
                             '(8 moving joints, 50.0 Hz) and /tf_static (5 fixed frames + 2 '
                             'sensors)')
    assert 'frames seen 16/16' in view
    assert '28.6°' in view                  # elbow_joint at 0.5 rad
    assert '-11.5° (limit)' in view         # the clamped tip of the mimic chain
    for frame in [*model.links, 'wrist_camera', 'base_laser']:
        assert frame in view
    # At 80x24: the frames and their values, never a number cut, and a word of what is not shown.
    small = render_view(model, cache, Rates(), 1.0, (80, 23)).splitlines()
    assert len(small) <= 23 and max(map(len, small)) <= 80
    assert 'elbow_joint' not in '\n'.join(small) and any('forearm_link' in line for line in small)
    assert any('28.6°' in line for line in small)  # elbow_joint's value, whole
    assert any(line.startswith('not shown: ') for line in small), small
    summary = render_summary(model, cache, RateMeter(), RateMeter(), RateMeter(), 1.0)
    assert 'all 16 expected frames seen' in summary


def test_motion_plan_stays_within_limits(model):
    plan = MotionPlan.for_model(model)
    assert plan.names == ('torso_lift_joint', 'shoulder_pan_joint', 'shoulder_lift_joint',
                          'elbow_joint', 'wrist_roll_joint', 'left_finger_joint')
    narrowed = RobotModel(model.description, use_smallest_joint_limits=True)
    samples = [plan.positions(k * 0.037) for k in range(2000)]
    for index, name in enumerate(plan.names):
        values = [s[index] for s in samples]
        lower, upper = narrowed.limits(name)
        if model.joint(name).type.value == 'continuous':
            lower, upper = -math.pi, math.pi
            assert max(values) - min(values) > 6.0, name  # full turns
        assert lower <= min(values) and max(values) <= upper, name
        assert max(values) - min(values) > 0.5 * (upper - lower), name
    # phases differ: not all joints at their center at t = 0
    assert len({round(v, 6) for v in plan.positions(0.0)}) > 2


def test_split_ros_args_keeps_xacro_arguments():
    ours, ros = split_ros_args(['--xacro-arg', 'prefix:=a_', '--ros-args', '-r',
                                'joint_states:=js', '--', '--rate', '5'])
    assert ours == ['--xacro-arg', 'prefix:=a_', '--rate', '5']
    assert ros == ['--ros-args', '-r', 'joint_states:=js']


# The demo as a user runs it -------------------------------------------------------------------

def run_demo(*arguments, timeout=DEMO_TIMEOUT):
    return subprocess.run([sys.executable, '-m', 'urdf_state_publisher.tools.demo', *arguments],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env=dict(os.environ))


def test_demo_runs_for_a_duration_and_reports(model):
    result = run_demo('--duration', '5')
    output = result.stdout
    assert result.returncode == 0, output + result.stderr
    assert 'Traceback' not in output + result.stderr
    assert output.startswith('urdf_state_publisher demo: node publishing sample_arm on /tf')
    for frame in [*model.links, 'wrist_camera', 'base_laser']:
        assert frame in output, frame
    tf = re.search(r'^  /tf: ([\d,]+) messages, ([\d.]+) Hz$', output, re.MULTILINE)
    assert tf is not None, output
    assert int(tf.group(1).replace(',', '')) > 0 and float(tf.group(2)) > 0.0
    # The 5 s asked for, counted from the first /tf; the processes' start said apart.
    watched = re.search(r'^summary of ([\d.]+) s of /tf, from its first message \(([\d.]+) s '
                        r'after the demo started: the node and the motion source took ([\d.]+) '
                        r's to start and publish\):$', output, re.MULTILINE)
    assert watched is not None, output
    assert 5.0 <= float(watched[1]) < float(watched[2])
    assert 'all 16 expected frames seen' in output
    assert 'MISSING' not in output


def test_demo_refuses_an_invalid_model(tmp_path):
    bad = tmp_path / 'bad.urdf'
    bad.write_text('<robot name="bad"><link name="a"/><link name="b"/></robot>')
    result = run_demo('--model', str(bad), '--duration', '1', timeout=30)
    assert result.returncode == 1
    assert '2 root links' in result.stderr
    assert 'Traceback' not in result.stderr


def children_of(pid):
    """Process ids whose parent is `pid` (Linux /proc)."""
    found = []
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / 'stat').read_text()
            except OSError:
                continue
            if int(stat.rsplit(')', 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid):
    """Whether `pid` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        stat = Path(f'/proc/{pid}/stat').read_text()
    except OSError:
        return False
    return stat.rsplit(')', 1)[1].split()[0] != 'Z'


def wait_until_ended(pids, timeout=WAIT_S):
    """The pids still running after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while [pid for pid in pids if alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


def start_demo_until_live(tmp_path):
    """The demo without --duration, once its view shows every frame; and its two children."""
    log = open(tmp_path / 'demo.out', 'w+')
    process = subprocess.Popen([sys.executable, '-m', 'urdf_state_publisher.tools.demo'],
                               stdout=log, stderr=subprocess.STDOUT, text=True, cwd=REPO)
    deadline = time.monotonic() + 60
    while 'frames seen 16/16' not in (tmp_path / 'demo.out').read_text():
        assert process.poll() is None, (tmp_path / 'demo.out').read_text()
        assert time.monotonic() < deadline, 'the demo never showed all frames'
        time.sleep(0.1)
    children = children_of(process.pid)
    # The node and the motion source; and the view where its extra is installed.
    from urdf_state_publisher.ros.launch_support import view_installed

    assert len(children) == (3 if view_installed() else 2)
    return process, children, log


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=['Ctrl-C', 'SIGTERM'])
def test_a_stop_signal_stops_both_children_and_exits_0(tmp_path, sig):
    process, children, log = start_demo_until_live(tmp_path)
    process.send_signal(sig)
    assert process.wait(30) == 0
    log.close()
    output = (tmp_path / 'demo.out').read_text()
    assert 'all 16 expected frames seen' in output
    assert 'Traceback' not in output
    assert not [pid for pid in children if alive(pid)]


def test_a_closed_terminal_stops_both_children(tmp_path):
    process, children, log = start_demo_until_live(tmp_path)
    process.send_signal(signal.SIGHUP)
    assert process.wait(30) == 0
    log.close()
    assert 'Traceback' not in (tmp_path / 'demo.out').read_text()
    assert not [pid for pid in children if alive(pid)]


def test_the_children_end_when_the_demo_crashes(tmp_path):
    process, children, log = start_demo_until_live(tmp_path)
    process.kill()  # no Python code of the demo runs after this
    process.wait(30)
    log.close()
    assert not wait_until_ended(children), 'children outlived the demo'


def test_demo_fails_when_the_node_dies(tmp_path):
    process, children, log = start_demo_until_live(tmp_path)
    node = next(pid for pid in children
                if b'--ros-args' in Path(f'/proc/{pid}/cmdline').read_bytes())
    os.kill(node, signal.SIGKILL)
    assert process.wait(30) == 1
    log.close()
    output = (tmp_path / 'demo.out').read_text()
    assert 'urdf_state_publisher exited with status -9' in output
    assert "robot 'sample_arm'" in output  # the node's own log, printed by the demo
    assert not [pid for pid in children if alive(pid)]


def test_the_view_s_address_is_shown_beside_the_table_when_the_view_runs(model):
    from urdf_state_publisher.tools.demo import Rates

    meters = (RateMeter(), RateMeter(), RateMeter())
    with_view = render_view(model, TransformCache(), Rates.at(1.0, *meters), 1.0, (100, 40),
                            'http://127.0.0.1:8080')
    without = render_view(model, TransformCache(), Rates.at(1.0, *meters), 1.0, (100, 40))

    assert 'in a browser: http://127.0.0.1:8080' in with_view.splitlines()[:8]
    assert 'browser' not in without
