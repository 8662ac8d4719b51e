"""The commands that run ROS, at the shell's edge: --help, a closed pipe, an early stop.

The helpers and the ROS-free commands' tests are in test_command_line.py.
"""

from __future__ import annotations

import signal
import subprocess

import pytest
from test_command_line import (
    assert_handlers_come_first,
    EARLY_S,
    installed,
    stop_after_handlers,
    WAIT_S,
)


def test_the_demo_answers_help_with_its_usage_and_status_0(tmp_path):
    result = subprocess.run([installed('urdf_state_publisher_demo'), '--help'],
                            capture_output=True, text=True, timeout=WAIT_S, cwd=tmp_path)

    assert (result.returncode, result.stderr) == (0, '')
    assert result.stdout.startswith('usage: urdf_state_publisher_demo ')



def test_a_usage_error_of_the_demo_exits_64_with_one_line(tmp_path):
    # The exit statuses are the bag command's and inspect's (exit_status.py); argparse's own
    # parser would exit 2, which reads as "does not fit".
    result = subprocess.run([installed('urdf_state_publisher_demo'), '--rate', 'fast'],
                            capture_output=True, text=True, timeout=WAIT_S, cwd=tmp_path)

    assert result.returncode == 64
    assert result.stdout == ''
    assert result.stderr.splitlines() == [
        "urdf_state_publisher_demo: argument --rate: not a number: 'fast' "
        '(usage: urdf_state_publisher_demo --help)']


def test_the_demo_piped_to_head_ends_quietly(tmp_path):
    # Piped, the demo prints a snapshot a second; its reader goes after the first line.
    process = subprocess.Popen([installed('urdf_state_publisher_demo')], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        first = process.stdout.readline()
        process.stdout.close()
        status = process.wait(WAIT_S)
        stderr = process.stderr.read().decode()
    finally:
        process.kill()
        process.wait()

    assert first.strip(), stderr
    assert (status, stderr) == (-signal.SIGPIPE, '')


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
@pytest.mark.parametrize('command', ['urdf_state_publisher', 'urdf_state_publisher_container',
                                     'urdf_state_publisher_demo'])
def test_a_stop_while_a_command_that_runs_until_stopped_imports_ends_it_with_0(
        command, sig, tmp_path):
    # No description: the node would end with status 1 once started; the stop comes first.
    for _repetition in range(3):
        for delay in EARLY_S:
            status, stderr = stop_after_handlers([installed(command)], sig, delay, tmp_path)

            assert (status, stderr) == (0, ''), f'{delay * 1000:g} ms'


@pytest.mark.parametrize('command, arguments', [
    ('urdf_state_publisher', ['--ros-args', '-p', 'description_file:=no_such.urdf']),
    ('urdf_state_publisher_container', ['--ros-args', '-p', 'not a rule']),
    ('urdf_state_publisher_demo', ['--model', 'no_such.urdf']),
])
def test_each_command_has_its_handlers_before_it_imports_anything_heavy(
        command, arguments, tmp_path):
    assert_handlers_come_first(command, arguments, tmp_path)
