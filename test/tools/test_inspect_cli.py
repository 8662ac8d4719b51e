"""urdf_state_publisher_inspect: reports, exit statuses and Graphviz output; no ROS needed."""

import io
from pathlib import Path
import re
import shutil
import subprocess
import sys
from xml.etree import ElementTree

from conftest import REPO, SAMPLE_URDF, SAMPLE_XACRO
import pytest

from urdf_state_publisher import RobotModel
from urdf_state_publisher.tools.inspect import main, render_dot

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

# What the reports must show, read from the sample's XML by the standard library: not from the
# package's own loader, whose mistakes the reports would share.
SAMPLE_XML = ElementTree.parse(SAMPLE_URDF).getroot()
SAMPLE_LINKS = [link.get('name') for link in SAMPLE_XML.iter('link')]
SAMPLE_JOINTS = [(joint.get('name'), joint.get('type'), joint.find('parent').get('link'),
                  joint.find('child').get('link')) for joint in SAMPLE_XML.iter('joint')]
SAMPLE_SENSORS = [sensor.get('name') for sensor in SAMPLE_XML.iter('sensor')]
SAMPLE_MIMICS = [joint.get('name') for joint in SAMPLE_XML.iter('joint')
                 if joint.find('mimic') is not None]

WARNING_URDF = """<robot name="warned">
  <link name="a"/><link name="b"/>
  <jiont/>
  <joint name="j" type="revolute">
    <parent link="a"/><child link="b"/>
    <limit lower="0" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>
"""

INVALID = {
    'missing mimic leader': (
        '<robot name="r"><link name="a"/><link name="b"/>'
        '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
        '<limit lower="0" upper="1" effort="1" velocity="1"/><mimic joint="nobody"/></joint>'
        '</robot>', "mimics joint 'nobody', which does not exist"),
    'kinematic loop': (
        '<robot name="r"><link name="a"/><link name="b"/>'
        '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>'
        '<joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint></robot>',
        'root link'),
    'not XML': ('<robot name="r"><link name="a">', 'is not closed'),
    'two roots': ('<robot name="r"><link name="a"/><link name="b"/></robot>', '2 root links'),
}


def run(capsys, *arguments):
    status = main([*arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def section(output, title):
    """The lines of a report section, from its title to the next blank line."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start + 1:end]


def test_sample_robot_report(capsys):
    status, out, err = run(capsys, str(SAMPLE_URDF))
    assert status == 0 and err == ''
    assert len(SAMPLE_JOINTS) == 13 and len(SAMPLE_LINKS) == 14
    tree = '\n'.join(section(out, 'Kinematic tree'))
    for name, kind, _, _ in SAMPLE_JOINTS:
        assert name in tree, name
        assert re.search(rf'^  {name} +{kind}\b', out, re.MULTILINE), name
    for link in SAMPLE_LINKS:
        assert link in tree, link
        assert re.search(rf'^  {link}\b', out, re.MULTILINE), link
    mimics = '\n'.join(section(out, 'Mimic relations'))
    # The tip mimics right_finger_joint as written, which mimics left_finger_joint:
    # -10 × (1 × left + 0) + 0.1.
    assert 'right_finger_tip_joint = -10 × left_finger_joint + 0.1' in mimics
    assert 'right_finger_tip_joint -> right_finger_joint -> left_finger_joint' in mimics
    assert 'clamped to [-0.2, 0.1] rad' in mimics
    sensors = '\n'.join(section(out, 'Sensor frames'))
    assert re.search(r'wrist_camera +camera +camera_link', sensors)
    assert re.search(r'base_laser +ray +laser_link', sensors)
    joints = '\n'.join(section(out, 'Joints'))
    assert re.search(r'shoulder_lift_joint +revolute +0 1 0 +\[-1.6, 1.6\] rad +'
                     r'\[-1.4, 1.2\] rad +\[-1.6, 1.6\] rad', joints)
    assert section(out, 'Warnings') == ['  none']
    assert out.rstrip().splitlines()[-1] == (
        "summary: robot 'sample_arm': 14 links, 13 joints (8 moving: 6 independent + 2 mimic; "
        '5 fixed), 2 sensors, 0 warnings: OK')


def test_soft_limits_narrow_the_clamp_range(capsys):
    status, out, _ = run(capsys, str(SAMPLE_URDF), '--soft-limits')
    assert status == 0
    assert re.search(r'shoulder_lift_joint +revolute +0 1 0 +\[-1.6, 1.6\] rad +'
                     r'\[-1.4, 1.2\] rad +\[-1.4, 1.2\] rad', out)


def test_xacro_with_arguments(capsys):
    status, out, err = run(capsys, str(SAMPLE_XACRO), '--xacro-arg', 'prefix:=left_',
                           '--xacro-arg', 'with_sensors:=false')
    assert status == 0, err
    assert 'left_right_finger_tip_joint = -10 × left_left_finger_joint + 0.1' in out
    assert "root link 'left_base_footprint'" in out
    assert section(out, 'Sensor frames') == ['  none']
    assert ', 0 sensors, 0 warnings: OK' in out


def test_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, 'stdin', io.TextIOWrapper(io.BytesIO(SAMPLE_XACRO.read_bytes())))
    status, out, err = run(capsys, '-', '--xacro-arg', 'prefix:=s_')
    assert status == 0, err
    assert out.startswith("<stdin>: robot 'sample_arm', root link 's_base_footprint'")


@pytest.mark.parametrize('case', sorted(INVALID))
def test_invalid_description_exits_1_with_the_reason(capsys, tmp_path, case):
    text, reason = INVALID[case]
    path = tmp_path / 'robot.urdf'
    path.write_text(text)
    status, out, err = run(capsys, str(path))
    assert status == 1
    assert out == ''
    assert err.startswith(f'urdf_state_publisher_inspect: invalid robot description {path}: ')
    assert reason in err
    assert 'Traceback' not in err


def test_missing_file_and_bad_xacro_argument(capsys, tmp_path):
    status, _, err = run(capsys, str(tmp_path / 'absent.urdf'))
    assert status == 1 and 'No such file' in err
    status, _, err = run(capsys, str(SAMPLE_XACRO), '--xacro-arg', 'prefix')
    assert status == 1 and "'prefix' is not of the form name:=value" in err


def test_warnings_fail_only_with_strict(capsys, tmp_path):
    path = tmp_path / 'warned.urdf'
    path.write_text(WARNING_URDF)
    status, out, _ = run(capsys, str(path))
    assert status == 0
    assert section(out, 'Warnings (1)') == [
        '  1. unknown element <jiont> (line 3) in <robot> ignored: did you mean <joint>?']
    assert out.rstrip().endswith('1 warning: usable, with warnings')
    status, out, _ = run(capsys, str(path), '--strict')
    assert status == 3  # findings under --strict, as the bag command's
    assert out.rstrip().endswith('1 warning: FAILED (--strict: warnings are errors)')
    assert run(capsys, str(SAMPLE_URDF), '--strict')[0] == 0


DOT_EDGE = re.compile(r'^  "([^"]+)" -> "([^"]+)" \[(.*)\];$')


def parse_dot(text):
    """Nodes {id: attributes} and edges [(tail, head, attributes)] of our DOT output."""
    lines = text.strip().splitlines()
    assert lines[0].startswith('digraph ') and lines[0].endswith('{')
    assert lines[-1] == '}'
    nodes, edges = {}, []
    for line in lines[1:-1]:
        edge = DOT_EDGE.match(line)
        if edge:
            edges.append(edge.groups())
            continue
        node = re.match(r'^  "([^"]+)" \[(.*)\];$', line)
        if node:
            nodes[node.group(1)] = node.group(2)
        else:
            assert re.match(r'^  (rankdir|node|edge)\b.*;$', line), line
    return nodes, edges


def test_dot_output(capsys, tmp_path):
    out_file = tmp_path / 'tree.dot'
    status, out, _ = run(capsys, str(SAMPLE_URDF), '--dot', str(out_file))
    assert status == 0
    assert f'Graphviz written to {out_file}' in out
    text = out_file.read_text()
    assert text.startswith('digraph "sample_arm" {')
    nodes, edges = parse_dot(text)
    assert SAMPLE_SENSORS == ['wrist_camera', 'base_laser']
    assert set(SAMPLE_LINKS) | set(SAMPLE_SENSORS) == set(nodes)
    assert 'shape=ellipse' in nodes['wrist_camera'] and 'shape=ellipse' not in nodes['tool0']
    for name, kind, parent, child in SAMPLE_JOINTS:
        matching = [e for e in edges if e[:2] == (parent, child)
                    and f'label="{name}\\n{kind}"' in e[2]]
        assert len(matching) == 1, name
    dashed = [(tail, head) for tail, head, attributes in edges if 'style=dashed' in attributes]
    assert dashed == [('left_finger_link', 'right_finger_link'),
                      ('right_finger_link', 'right_finger_tip_link')]
    # a solid edge per joint and per sensor, a dashed one per mimic
    assert len(edges) == len(SAMPLE_JOINTS) + len(SAMPLE_SENSORS) + len(SAMPLE_MIMICS)


def test_dot_quotes_names():
    model = RobotModel.from_urdf('<robot name="a &quot;quoted&quot; bot"><link name="x"/></robot>')
    assert render_dot(model).startswith('digraph "a \\"quoted\\" bot" {')


def test_unwritable_dot_file(capsys, tmp_path):
    status, _, err = run(capsys, str(SAMPLE_URDF), '--dot', str(tmp_path / 'no' / 'x.dot'))
    assert status == 1 and 'cannot write' in err


def cli_command():
    """The installed console script if there is one, else `python -m`."""
    script = shutil.which('urdf_state_publisher_inspect', path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, '-m', 'urdf_state_publisher.tools.inspect']


def test_as_a_command(tmp_path):
    result = subprocess.run([*cli_command(), str(SAMPLE_URDF)], capture_output=True, text=True,
                            timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert '2 sensors, 0 warnings: OK' in result.stdout
    bad = tmp_path / 'bad.urdf'
    bad.write_text(INVALID['missing mimic leader'][0])
    result = subprocess.run([sys.executable, '-m', 'urdf_state_publisher.tools.inspect', str(bad)],
                            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 1
    assert "mimics joint 'nobody'" in result.stderr
    assert 'Traceback' not in result.stderr


def test_imports_no_ros():
    code = ('import sys, urdf_state_publisher.tools.inspect; '
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('rclpy', 'rcl_interfaces', 'sensor_msgs', 'tf2_msgs')))")
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=60, check=True)
    assert result.stdout.strip() == '[]'


URDF_1_1 = """<robot name="quat" version="1.1">
  <link name="a"/><link name="b"/>
  <joint name="tilt" type="fixed">
    <parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.5" quat_xyzw="0 0.7071 0 0.7071"/>
  </joint>
  <sensor name="cam"><parent link="b"/><origin xyz="0.1 0 0" quat_xyzw="0 0 2 2"/></sensor>
</robot>
"""


def test_report_shows_the_version_and_quaternion_origins_as_written(capsys, tmp_path):
    path = tmp_path / 'quat.urdf'
    path.write_text(URDF_1_1)
    status, out, err = run(capsys, str(path))
    assert status == 0 and err == ''
    assert out.startswith(f"{path}: robot 'quat', root link 'a', URDF 1.1")
    origins = section(out, 'Joint origins')
    assert re.fullmatch(r'  tilt +0 0 0\.5 +quat_xyzw 0 0\.7071 0 0\.7071', origins[1])
    sensors = section(out, 'Sensor frames')
    assert re.fullmatch(r'  cam +\? +b +0\.1 0 0 +quat_xyzw 0 0 2 2', sensors[1])


def test_report_of_a_1_0_description_shows_rpy(capsys):
    status, out, _ = run(capsys, str(SAMPLE_URDF))
    assert status == 0
    assert out.startswith(f"{SAMPLE_URDF}: robot 'sample_arm', root link ")
    assert out.splitlines()[0].endswith(', URDF 1.0')
    origins = section(out, 'Joint origins')
    assert sorted(row.split()[0] for row in origins[1:]) == sorted(n for n, *_ in SAMPLE_JOINTS)
    assert all(' rpy ' in row for row in origins[1:])


def test_a_chain_deeper_than_the_recursion_limit_is_listed_in_order(capsys, tmp_path):
    # A serial chain is a valid description however long; the tree is walked without
    # recursion (break: walk it recursively, and this raises RecursionError).
    depth = sys.getrecursionlimit() + 500
    links = ''.join(f'<link name="l{i}"/>' for i in range(depth + 1))
    joints = ''.join(f'<joint name="j{i}" type="fixed"><parent link="l{i}"/>'
                     f'<child link="l{i + 1}"/></joint>' for i in range(depth))
    path = tmp_path / 'chain.urdf'
    path.write_text(f'<robot name="chain">{links}{joints}</robot>')
    status, out, err = run(capsys, str(path))
    assert status == 0 and err == ''
    tree = section(out, 'Kinematic tree')
    listed = [int(m.group(1)) for line in tree for m in [re.search(r'\bj(\d+)\b', line)] if m]
    assert listed == list(range(depth))
