"""What the environment's set-up says while it works (tools/bootstrap_progress.sh), in bash."""

from pathlib import Path
import re
import subprocess

import pytest

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

TOOLS = Path(__file__).resolve().parent.parent / 'tools'
# A pip run, then a make run, as they print: the telling lines among others.
OUTPUT = '\n'.join([
    'Looking in links: /wheels',
    'Collecting rclpy==7.1.1 (from -r requirements/ros2-jazzy.txt (line 3))',
    'WARNING: Location /wheels is ignored: it is either a non-existing path or lacks a '
    'specific scheme.',
    'Requirement already satisfied: numpy in ./lib/python3.11/site-packages',
    'Installing collected packages: rclpy',
    'Successfully installed rclpy-7.1.1',
    '-- Found PythonExtra',
    '[ 42%] Building C object CMakeFiles/tf2_msgs__rosidl_generator_c.dir/rosidl.c.o',
    'make[2]: Leaving directory',
])
TELLING = [line for line in OUTPUT.splitlines()
           if line.startswith(('Collecting', 'Installing', 'Successfully', '[ 42%]'))]


def show_progress(tmp_path: Path, period: str, stdin: str = OUTPUT
                  ) -> subprocess.CompletedProcess:
    script = (f'source {TOOLS / "bootstrap_progress.sh"}\n'
              f'show_progress ros {tmp_path / "output.log"}\n')
    return subprocess.run(['bash', '-c', script], input=stdin + '\n', capture_output=True,
                          text=True, timeout=60,
                          env={'BOOTSTRAP_PROGRESS_PERIOD': period, 'PATH': '/usr/bin:/bin'})


def test_a_log_gets_the_telling_lines_with_the_steps_seconds_and_keeps_all(tmp_path):
    result = show_progress(tmp_path, '0')  # every telling line: no period to wait
    assert result.returncode == 0, result.stderr
    shown = result.stderr.splitlines()
    assert [re.sub(r', \d+ s: ', ', N s: ', line) for line in shown] == [
        f'[bootstrap] ros, N s: {line}' for line in TELLING]
    assert '\r' not in result.stderr  # plain lines in a log
    # The whole output kept, for a failure's report.
    assert (tmp_path / 'output.log').read_text() == OUTPUT + '\n'


def test_a_log_gets_one_line_per_period_at_most(tmp_path):
    # All at once, within a period of an hour: the first telling line, at once, and no other.
    result = show_progress(tmp_path, '3600')
    assert [re.sub(r', \d+ s: ', ', N s: ', line) for line in result.stderr.splitlines()] == [
        f'[bootstrap] ros, N s: {TELLING[0]}']


def test_every_step_of_the_set_up_says_what_it_does_and_when_it_is_done():
    script = (TOOLS / 'bootstrap_env.sh').read_text()
    steps = re.findall(r'^\s*step (\w+) ', script, re.MULTILINE)
    assert set(steps) == {'venv', 'ros', 'package', 'tf2_msgs', 'composition_interfaces',
                          'bag', 'dev'}
    says = script[script.index('step_says() {'):]
    says = says[:says.index('\n}\n')]
    for name in steps:  # each step's start line has its own words
        assert re.search(rf'^\s*(\w+ \| )*{name}( \| \w+)*\) echo ', says, re.MULTILINE), name
