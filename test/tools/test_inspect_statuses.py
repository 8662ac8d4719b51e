"""urdf_state_publisher_inspect's exit statuses as a script sees them: the bag command's meanings.

0 usable, 1 invalid, 3 warnings under --strict (the bag command's "findings under --strict"),
64 a usage error (EX_USAGE), never 2, which the bag command gives a description that does not
fit a recording. Each is asserted as a literal: the numbers are the promise to scripts
(doc/urdf.md, doc/recorded-data.md), not whatever the code defines.
"""

from __future__ import annotations

import subprocess
import sys

from conftest import SAMPLE_URDF
import pytest

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

PROG = 'urdf_state_publisher_inspect'
# A description that loads, with one warning: an element misspelt.
WARNED = ('<robot name="warned"><link name="a"/><link name="b"/><jiont/>'
          '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
          '<limit lower="0" upper="1" effort="1" velocity="1"/></joint></robot>')


def inspect(*arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'urdf_state_publisher.tools.inspect',
                           *map(str, arguments)], capture_output=True, text=True, timeout=120)


def test_a_usable_description_exits_0_and_an_invalid_one_1(tmp_path):
    assert inspect(SAMPLE_URDF, '--strict').returncode == 0
    invalid = tmp_path / 'invalid.urdf'
    invalid.write_text('<robot name="r"><link name="a"/><link name="b"/></robot>')  # 2 roots
    result = inspect(invalid)
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'Traceback' not in result.stderr


def test_warnings_under_strict_exit_3_as_the_bag_commands_findings(tmp_path):
    warned = tmp_path / 'warned.urdf'
    warned.write_text(WARNED)
    assert inspect(warned).returncode == 0
    result = inspect(warned, '--strict')
    assert result.returncode == 3, result.stdout + result.stderr


def test_a_misspelt_xacro_argument_under_strict_exits_3(tmp_path):
    # A finding, as a misspelt parameter is for the bag command under --strict.
    result = inspect(SAMPLE_URDF.with_suffix('.urdf.xacro'), '--xacro-arg', 'prefx:=left_',
                     '--strict')
    assert result.returncode == 3, result.stdout + result.stderr
    assert 'did you mean prefix?' in result.stdout


@pytest.mark.parametrize('arguments', [
    ['--bogus', SAMPLE_URDF],  # an unknown option
    [],  # no FILE
    [SAMPLE_URDF, SAMPLE_URDF],  # two FILEs
    [SAMPLE_URDF, '--dot'],  # an option without its value
], ids=['unknown option', 'no file', 'two files', 'no value'])
def test_a_usage_error_exits_64_with_one_line(arguments):
    result = inspect(*arguments)
    assert result.returncode == 64, result.stdout + result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f'{PROG}: ') and line.endswith(f'(usage: {PROG} --help)'), line
    assert result.stdout == ''


def test_the_help_states_the_statuses_a_script_reads():
    result = inspect('--help')
    assert result.returncode == 0
    text = ' '.join(result.stdout.split())
    assert ('Exit status: 0 usable, 1 invalid (error on stderr), 3 warnings with --strict, '
            '64 a usage error.') in text
