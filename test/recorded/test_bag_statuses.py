"""urdf_state_publisher_bag for scripts: its usage, exit statuses, findings and what it says.

The statuses are literals here (0 written, 1 failed, 2 does not fit, 3 findings under --strict,
64 a usage error): they are the promise of doc/recorded-data.md, which the page's own `case`
script is held to, one case per status.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import re
import subprocess
import sys

from conftest import SAMPLE_URDF, SAMPLE_XACRO
import pytest
from rosbags.rosbag2 import Reader
from test_bag_runs import JOINTS, run, write_states

from urdf_state_publisher.recorded import command as bag

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

PROG = 'urdf_state_publisher_bag'
DOC = Path(__file__).resolve().parents[2] / 'doc' / 'recorded-data.md'
CLAMPED = [0.02, 0.02, 0.02, 3.0, 0.02, 0.02]  # the elbow beyond its limit (2.3)


def one_line(result: subprocess.CompletedProcess) -> str:
    """The one line a failed command printed, without a traceback."""
    [line] = result.stderr.splitlines()
    assert line.startswith(f'{PROG}: ') and 'Traceback' not in line, result.stderr
    return line


def tf_count(output: Path) -> int:
    with Reader(output) as reader:
        return sum(c.msgcount for c in reader.connections if c.topic == '/tf')


# The usage line ---------------------------------------------------------------------------

def test_the_usage_is_inputs_then_one_output():
    helped = subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                             '--help'],
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0
    usage = ' '.join(helped.stdout.split('\n\n')[0].split())
    assert usage.endswith(' INPUT [INPUT ...] OUTPUT'), usage
    assert 'INPUT... OUTPUT' not in helped.stdout
    assert f'\n    {PROG} INPUT [INPUT ...] OUTPUT [--description FILE' in bag.__doc__


def test_the_last_path_is_the_output_and_every_other_an_input(tmp_path):
    # As the usage reads: `a b out` is two inputs into the folder out, not pairs.
    write_states(tmp_path / 'a')
    write_states(tmp_path / 'b')
    result = run(tmp_path / 'a', tmp_path / 'b', tmp_path / 'out', '--description', SAMPLE_URDF)
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(p.name for p in (tmp_path / 'out').iterdir()) == ['a', 'b', 'runs.csv']


# Usage errors: 64, one line, nothing done -------------------------------------------------

@pytest.mark.parametrize('words, named', [
    (['--bogus'], '--bogus'),
    (['--distro', 'foxy'], "'foxy'"),
    (['--jobs', '0'], 'give 1 or more processes, not 0'),
    (['--jobs', '-2'], 'give 1 or more processes, not -2'),
    (['--jobs', 'all'], "give a whole number of processes, not 'all'"),
    (['--storage'], '--storage'),
], ids=['unknown option', 'unknown distro', 'jobs 0', 'negative jobs', 'jobs not a number',
        'no value'])
def test_a_usage_error_exits_64_with_one_line_and_does_nothing(tmp_path, words, named):
    bag_path = write_states(tmp_path / 'run')
    result = run(bag_path, tmp_path / 'out', '--description', SAMPLE_URDF, *words)
    assert result.returncode == 64, result.stdout + result.stderr
    line = one_line(result)
    assert named in line and line.endswith(f'(usage: {PROG} --help)'), line
    assert result.stdout == '' and not (tmp_path / 'out').exists()


def test_a_missing_output_is_a_usage_error(tmp_path):
    result = run(write_states(tmp_path / 'run'), '--description', SAMPLE_URDF)
    assert result.returncode == 64, result.stdout + result.stderr
    assert 'OUTPUT' in one_line(result)


# Bad input: 1 --------------------------------------------------------------------------------

@pytest.mark.parametrize('description', [SAMPLE_URDF, SAMPLE_XACRO], ids=['urdf', 'xacro'])
def test_a_description_given_as_an_input_is_named_with_what_to_do(tmp_path, description):
    recording = write_states(tmp_path / 'run')
    for inputs in ([description], [recording, description]):  # alone, or in a batch
        result = run(*inputs, tmp_path / 'out')
        assert result.returncode == 1, result.stdout + result.stderr
        assert one_line(result) == (f'{PROG}: {description} is a robot description, not a '
                                    f'recording: give it with --description {description}')
        assert not (tmp_path / 'out').exists()
    # As it says: the description given so, the recording is processed.
    assert run(recording, tmp_path / 'out', '--description', description).returncode == 0


def test_a_findings_file_in_no_folder_is_refused_before_any_run(tmp_path):
    result = run(write_states(tmp_path / 'run'), tmp_path / 'out', '--description', SAMPLE_URDF,
                 '--findings', tmp_path / 'nowhere' / 'findings.json')
    assert result.returncode == 1, result.stdout + result.stderr
    assert f'no folder {tmp_path / "nowhere"}' in one_line(result)
    assert not (tmp_path / 'out').exists()


# --strict: every WARN the node would have logged -------------------------------------------

def test_a_misspelt_parameter_is_a_finding_that_strict_fails_on(tmp_path):
    recording = write_states(tmp_path / 'run')
    misspelt = ('--ros-args', '-p', 'publish_frequncy:=100')
    result = run(recording, tmp_path / 'a', '--description', SAMPLE_URDF, *misspelt)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ('  [WARN] first at 0.000 s: publish_frequncy: not a parameter of this node; did you '
            'mean publish_frequency?') in result.stdout.splitlines()
    assert 'findings: none' not in result.stdout
    result = run(recording, tmp_path / 'b', '--description', SAMPLE_URDF, '--strict',
                 '--findings', tmp_path / 'findings.json', *misspelt)
    assert result.returncode == 3, result.stdout + result.stderr
    [summary] = json.loads((tmp_path / 'findings.json').read_text())['runs']
    assert [(f['level'], f['kind']) for f in summary['findings']] == [
        ('WARN', 'unknown parameter')]
    # Spelt right, nothing to find.
    result = run(recording, tmp_path / 'c', '--description', SAMPLE_URDF, '--strict',
                 '--ros-args', '-p', 'publish_frequency:=100')
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_misspelt_xacro_argument_is_a_finding_as_a_misspelt_parameter_is(tmp_path):
    result = run(write_states(tmp_path / 'run'), tmp_path / 'out', '--description',
                 SAMPLE_XACRO, 'prefx:=left_', '--strict')
    assert result.returncode == 3, result.stdout + result.stderr
    assert 'did you mean prefix?' in result.stdout


# Findings condensed; the whole of them in the findings file ------------------------------

def test_findings_show_a_few_names_and_the_file_holds_every_one(tmp_path):
    # A description prefixed left_ against a recording of the plain names: none is a joint.
    recording = write_states(tmp_path / 'run')
    result = run(recording, tmp_path / 'out', '--description', SAMPLE_XACRO, 'prefix:=left_')
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    named = [line for line in lines if re.fullmatch(r'      \w+: 100 messages, .*', line)]
    assert named == [f'      {name}: 100 messages, first at 0.000 s, last at 0.990 s'
                     for name in JOINTS[:3]]
    assert f'      ... and {len(JOINTS) - 3} more names (--findings FILE lists each)' in lines
    findings = tmp_path / 'findings.json'
    result = run(recording, tmp_path / 'out2', '--description', SAMPLE_XACRO, 'prefix:=left_',
                 '--findings', findings)
    assert f'      ... and {len(JOINTS) - 3} more names (each in {findings})' in (
        result.stdout.splitlines())
    document = json.loads(findings.read_text())
    assert document['status'] == result.returncode == 2
    [summary] = document['runs']
    assert (summary['input'], summary['output'], summary['status']) == (
        str(recording), str(tmp_path / 'out2'), 2)
    assert summary['unfit'] and summary['error'] is None
    # Every moving joint of the description, none of which the recording names.
    assert sorted(summary['never_named']) == sorted(f'left_{name}' for name in JOINTS)
    [finding] = [f for f in summary['findings'] if f['level'] == 'ERROR']
    assert finding['names'] == [{'name': name, 'first': 0.0, 'last': 0.99, 'count': 100}
                                for name in JOINTS]
    # Every field is one the page describes.
    page = DOC.read_text(encoding='utf-8')
    described = set(re.findall(r'`(\w+)`', page[page.index('### The findings file'):].split(
        '\n\n')[1]))
    assert {*document, *summary, *finding} - described == set()


def test_a_batchs_findings_file_has_a_run_each_in_the_order_given(tmp_path):
    write_states(tmp_path / 'runs' / 'b_clamped', value=lambda k, t: CLAMPED)
    write_states(tmp_path / 'runs' / 'a_clean')
    (tmp_path / 'runs' / 'c_broken').mkdir()
    (tmp_path / 'runs' / 'c_broken' / 'metadata.yaml').write_text('rosbag2: [1, 2\n')
    findings = tmp_path / 'findings.json'
    result = run(tmp_path / 'runs', tmp_path / 'out', '--description', SAMPLE_URDF, '--strict',
                 '--jobs', '2', '--findings', findings)
    assert result.returncode == 1, result.stdout + result.stderr
    document = json.loads(findings.read_text())
    assert document['status'] == 1
    assert [(Path(r['input']).name, r['status']) for r in document['runs']] == [
        ('a_clean', 0), ('b_clamped', 3), ('c_broken', 1)]
    clean, clamped, broken = document['runs']
    assert clean['findings'] == [] and clean['written']['/tf'] == 20
    [finding] = clamped['findings']
    assert finding['kind'] == 'joints clamped'
    assert [n['name'] for n in finding['names']] == ['elbow_joint']
    assert broken['output'] is None and 'c_broken' in broken['error']


# /tf thinned by publish_frequency ---------------------------------------------------------

def test_a_tf_thinned_by_publish_frequency_is_said_with_how_to_have_one_per_joint_state(
        tmp_path):
    # 100 JointStates 10 ms apart: at the default 20 Hz, one in five goes out on /tf.
    recording = write_states(tmp_path / 'run')
    result = run(recording, tmp_path / 'out', '--description', SAMPLE_URDF)
    assert result.returncode == 0, result.stdout + result.stderr
    assert tf_count(tmp_path / 'out') == 100 // 5
    hint = ('/tf 20 from 100 JointStates: publish_frequency (20 Hz) publishes each joint at most '
            '20 times a second of their stamps; for one /tf per JointState: --ros-args -p '
            'ignore_timestamp:=true')
    assert hint in result.stdout.splitlines()
    result = run(recording, tmp_path / 'out50', '--description', SAMPLE_URDF, '--ros-args', '-p',
                 'publish_frequency:=50')
    assert tf_count(tmp_path / 'out50') == 100 // 2
    assert '/tf 50 from 100 JointStates: publish_frequency (50 Hz)' in result.stdout
    # As it says: every JointState on /tf, and nothing more to say.
    result = run(recording, tmp_path / 'every', '--description', SAMPLE_URDF,
                 *hint.split(': ')[-1].split())
    assert result.returncode == 0, result.stdout + result.stderr
    assert tf_count(tmp_path / 'every') == 100
    assert 'JointStates: publish_frequency' not in result.stdout


# The page's `case` script: one case per status ---------------------------------------------

def page_script() -> str:
    blocks = DOC.read_text(encoding='utf-8').split('```')[1::2]
    [code] = [b.split('\n', 1)[1] for b in blocks
              if b.split('\n', 1)[1].startswith(f'{PROG} /data/2026-11-27/')]
    return code


def the_day(day: Path, status: int) -> None:
    """A day of recordings that makes the page's command exit `status`."""
    write_states(day / 'run_1')
    if status == 1:  # a recording that cannot be read
        (day / 'run_2').mkdir()
        (day / 'run_2' / 'metadata.yaml').write_text('rosbag2_bagfile_information: [1, 2\n')
    elif status == 2:  # another robot's names: no joint in common with the description
        write_states(day / 'run_2', names=[f'other_{name}' for name in JOINTS])
    elif status == 3:  # the elbow beyond its limit: a warning, which --strict fails on
        write_states(day / 'run_2', value=lambda k, t: CLAMPED)
    else:
        write_states(day / 'run_2')


@pytest.mark.parametrize('status', [0, 1, 2, 3, 64])
def test_the_script_of_the_recorded_data_page_says_each_status(tmp_path, status):
    script = page_script()
    said = dict(re.findall(r"^ +(\d+)\) echo '([^']*)'", script, re.MULTILINE))
    assert sorted(said, key=int) == ['0', '1', '2', '3', '64']
    the_day(tmp_path / 'data' / '2026-11-27', status)
    (tmp_path / 'robot.urdf.xacro').write_text(SAMPLE_XACRO.read_text())
    # The command as the script finds it on PATH; for 64, given an option out of range too.
    commands = tmp_path / 'bin'
    commands.mkdir()
    command = commands / PROG
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m '
                       f'urdf_state_publisher.recorded.command "$@"'
                       f'{" --jobs 0" if status == 64 else ""}\n')
    command.chmod(0o755)
    result = subprocess.run(['bash', '-c', script.replace('/data/', f'{tmp_path}/data/')],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env={**os.environ, 'PATH': f'{commands}:{os.environ["PATH"]}'})
    assert result.stdout.splitlines()[-1] == said[str(status)], result.stdout + result.stderr
    assert (tmp_path / 'data' / '2026-11-27_tf' / 'run_1' / 'metadata.yaml').exists() == (
        status != 64)
