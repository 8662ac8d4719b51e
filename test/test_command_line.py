"""Every installed command at the shell's edge: --help, a closed pipe, a stop while it imports.

Each test runs the console scripts as installed (pip puts them next to the interpreter, colcon
under the package's prefix in lib/urdf_state_publisher/), as processes. None of these starts
ROS: the node's and the container's --help import no rclpy, and the commands stopped here are
stopped before they could.
"""

from __future__ import annotations

import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import time

from conftest import REPO, SAMPLE_URDF
import pytest

from urdf_state_publisher.cli import wants_help

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

# The demo is in test_command_line_ros.py: it imports rclpy to show its usage.
COMMANDS = ('urdf_state_publisher', 'urdf_state_publisher_container',
            'urdf_state_publisher_inspect', 'urdf_state_publisher_bag',
            'urdf_state_publisher_view')
WAIT_S = 60.0  # bounds a wait only: generous, for a loaded machine


def installed(command: str) -> str:
    """The console script `command`, where pip or colcon installs it."""
    places = [Path(sys.executable).parent] + [
        Path(prefix) / 'lib' / 'urdf_state_publisher'
        for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if prefix]
    script = shutil.which(command, path=os.pathsep.join(map(str, places)))
    assert script is not None, f'the console script {command} is in none of {places}'
    return script


def imported_modules(result: subprocess.CompletedProcess) -> set[str]:
    """The modules a `python -X importtime` run imported (its stderr)."""
    return {line.rsplit('|', 1)[1].strip() for line in result.stderr.splitlines()
            if line.startswith('import time:') and '|' in line} - {'imported package'}


# --help ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('flag', ['--help', '-h'])
@pytest.mark.parametrize('command', COMMANDS)
def test_every_command_answers_help_with_its_usage_and_status_0(command, flag, tmp_path):
    # Run as its shebang runs it, importing what it imports: the node and the container must
    # not even load rclpy (today's node waited for a description; the container started).
    result = subprocess.run([sys.executable, '-X', 'importtime', installed(command), flag],
                            capture_output=True, text=True, timeout=WAIT_S, cwd=tmp_path)

    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith(f'usage: {command} '), result.stdout
    errors = [line for line in result.stderr.splitlines() if not line.startswith('import time:')]
    assert errors == []
    if command in ('urdf_state_publisher', 'urdf_state_publisher_container'):
        assert not {m for m in imported_modules(result) if m.split('.')[0] == 'rclpy'}


def test_the_node_usage_lists_the_ros_arguments_and_every_parameter():
    result = subprocess.run([installed('urdf_state_publisher'), '--help'], capture_output=True,
                            text=True, timeout=WAIT_S)

    for words in ('--ros-args', '-p NAME:=VALUE', '--params-file FILE', '-r FROM:=TO',
                  '--log-level', 'parameters.md'):
        assert words in result.stdout
    # The parameters robot_state_publisher and joint_state_publisher users look for, by name
    # (an independent list: doc/parameters.md's table).
    table = (REPO / 'doc' / 'parameters.md').read_text()
    documented = {line.split('`')[1] for line in table.splitlines()
                  if line.startswith('| `')}
    assert {'robot_description', 'publish_frequency', 'frame_prefix'} <= documented
    for name in documented:
        assert f'\n  {name} (' in result.stdout, name


def test_help_is_ours_before_ros_args_only():
    assert wants_help(['--help']) and wants_help(['-h', '--ros-args', '-p', 'a:=1'])
    # After --ros-args it is rcl's (ros2 run passes the command line on as it is).
    assert not wants_help(['--ros-args', '--help'])
    assert not wants_help(['--ros-args', '-p', 'a:=1', '-h'])
    assert not wants_help(['--ros-args', '-r', '__node:=x'])


# A closed pipe -------------------------------------------------------------------------------

def run_with_stdout_closed(arguments: list[str], cwd: Path) -> tuple[int, str]:
    """Run a command whose stdout is a pipe that its reader closed before it wrote anything."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(arguments, stdout=write_end, stderr=subprocess.PIPE, text=True,
                                timeout=WAIT_S, cwd=cwd)
    finally:
        os.close(write_end)
    return result.returncode, result.stderr


@pytest.mark.parametrize('command, arguments, expected', [
    # As `cat` ends: by SIGPIPE, 141 in a shell.
    ('urdf_state_publisher', ['--help'], -signal.SIGPIPE),
    ('urdf_state_publisher_container', ['--help'], -signal.SIGPIPE),
    ('urdf_state_publisher_inspect', [str(SAMPLE_URDF)], -signal.SIGPIPE),
    # argparse's --help too, on every Python (argparse itself drops the error from 3.11 on).
    ('urdf_state_publisher_bag', ['--help'], -signal.SIGPIPE),
])
def test_a_closed_pipe_ends_a_command_quietly(command, arguments, expected, tmp_path):
    status, stderr = run_with_stdout_closed([installed(command), *arguments], tmp_path)

    assert stderr == ''
    assert status == expected


def test_inspect_piped_to_head_ends_quietly(tmp_path):
    # A report far longer than a pipe holds: the command is still writing when `head` goes.
    links = 1500
    robot = tmp_path / 'wide.urdf'
    robot.write_text('<robot name="wide"><link name="base"/>' + ''.join(
        f'<link name="l{i}"/><joint name="j{i}" type="revolute"><parent link="base"/>'
        f'<child link="l{i}"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        for i in range(links)) + '</robot>')
    process = subprocess.Popen([installed('urdf_state_publisher_inspect'), str(robot)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    status = process.wait(WAIT_S)

    assert first.startswith(f"{robot}: robot 'wide'".encode())
    assert stderr == ''
    assert status == -signal.SIGPIPE


# A stop while the command imports -------------------------------------------------------------

def catches(pid: int, number: int) -> bool:
    """Whether process `pid` has a handler for signal `number` (its SigCgt mask in /proc)."""
    try:
        with open(f'/proc/{pid}/status') as status:
            for line in status:
                if line.startswith('SigCgt:'):
                    return bool(int(line.split()[1], 16) >> (number - 1) & 1)
    except FileNotFoundError:  # it has ended
        pass
    return False


def stop_after_handlers(arguments: list[str], sig: int, delay: float, cwd: Path
                        ) -> tuple[int, str]:
    """Start a command; send `sig` `delay` s after its entry point's handlers are in place.

    Before they are, the interpreter is starting, and no program of ours runs (cli.py). The
    entry points catch SIGTERM; Python itself never does, so its SigCgt bit marks them.
    """
    process = subprocess.Popen(arguments, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, cwd=cwd)
    try:
        deadline = time.monotonic() + WAIT_S
        while not catches(process.pid, signal.SIGTERM):
            assert process.poll() is None, process.stderr.read()
            assert time.monotonic() < deadline, 'no handlers in place'
            time.sleep(0.0005)
        time.sleep(delay)
        assert process.poll() is None, 'it ended before the signal'
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=WAIT_S)
    finally:
        process.kill()
        process.wait()
    return process.returncode, stderr


# Early moments: the commands take at least 100 ms to import what they need (numpy; rclpy).
EARLY_S = (0.0, 0.002, 0.01, 0.04)


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
@pytest.mark.parametrize('command, arguments', [
    # Inputs that never end, so that a command waits once it has imported: a description on
    # stdin, a recording that is a FIFO with no writer.
    ('urdf_state_publisher_inspect', ['-']),
    ('urdf_state_publisher_bag', ['in.mcap', 'out']),
])
def test_a_stop_while_a_command_of_work_starts_ends_it_by_the_signal(
        command, arguments, sig, tmp_path):
    os.mkfifo(tmp_path / 'in.mcap')
    for _repetition in range(3):
        for delay in EARLY_S:
            status, stderr = stop_after_handlers([installed(command), *arguments], sig, delay,
                                                 tmp_path)

            assert status == -sig, f'{delay * 1000:g} ms: {stderr}'
            # Before the bag command's own handlers, nothing; after, its line: what it wrote.
            assert stderr in ('', f'{command}: {STOPPED[sig]}; no output written\n'), \
                f'{delay * 1000:g} ms'
            assert not (tmp_path / 'out').exists()


STOPPED = {signal.SIGINT: 'interrupted', signal.SIGTERM: 'stopped by SIGTERM'}


HEAVY = ('numpy', 'rclpy', 'yaml', 'rosbags', 'xacro')
# Runs a console script as its shebang would, and says which modules it imported while SIGTERM
# still had its default action.
AUDIT = """
import runpy, signal, sys
unguarded = set()

def audit(event, args):
    if event == 'import' and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        unguarded.add(args[0])

sys.addaudithook(audit)
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name='__main__')
except BaseException:
    pass
sys.__stderr__.write('UNGUARDED ' + ' '.join(sorted(unguarded)) + '\\n')
"""


@pytest.mark.parametrize('command, arguments', [
    ('urdf_state_publisher_inspect', [str(SAMPLE_URDF)]),
    ('urdf_state_publisher_bag', ['no_such.bag', 'out']),
    ('urdf_state_publisher_view', ['--description', 'no_such.urdf']),
])
def test_each_command_has_its_handlers_before_it_imports_anything_heavy(
        command, arguments, tmp_path):
    assert_handlers_come_first(command, arguments, tmp_path)


def assert_handlers_come_first(command: str, arguments: list[str], cwd: Path) -> None:
    """The entry point of `command` has its stop handlers before it imports anything heavy."""
    # Whatever the load: which modules were imported while SIGTERM still had its default (a
    # stop then kills the process, or a Ctrl-C interrupts the import with a traceback).
    result = subprocess.run([sys.executable, '-c', AUDIT, installed(command), *arguments],
                            capture_output=True, text=True, timeout=WAIT_S, cwd=cwd)
    report = [line for line in result.stderr.splitlines() if line.startswith('UNGUARDED ')]
    assert len(report) == 1, result.stderr[-2000:]
    unguarded = set(report[0].split()[1:])

    assert 'urdf_state_publisher' in unguarded  # the audit saw the entry point's imports
    assert not {m for m in unguarded if m.split('.')[0] in HEAVY}, sorted(unguarded)
    # The entry points' own modules (and their folders' __init__, a docstring each), of the
    # standard library's built-ins only.
    assert not {m for m in unguarded if m.startswith('urdf_state_publisher.')} - {
        'urdf_state_publisher.cli', 'urdf_state_publisher.stop_signals',
        'urdf_state_publisher.ros', 'urdf_state_publisher.ros.process',
        'urdf_state_publisher.recorded', 'urdf_state_publisher.recorded.entry',
        'urdf_state_publisher.tools', 'urdf_state_publisher.tools.entry',
        'urdf_state_publisher.view', 'urdf_state_publisher.view.entry'}
