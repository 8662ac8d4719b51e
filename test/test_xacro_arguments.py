"""An xacro argument given that the file does not take: one warning, in every shell.

xacro itself ignores such an argument. The files are expanded by the real xacro; what it
declares and reads is written out in each file here, and the expected warnings are written out
literally.
"""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

from urdf_state_publisher.engine.health import Level
from urdf_state_publisher.engine.joint_settings import JointSettings
from urdf_state_publisher.engine.parameters import NodeConfig, PARAMETERS
from urdf_state_publisher.engine.state_engine import configured_description, Outputs, StateEngine
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.ros.launch_support import node_setup
from urdf_state_publisher.tools.inspect import main as inspect_main

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

# Declares `prefix` and reads it; `$(arg reach)` is read without a declaration, as xacro allows
# for an argument that is given; parts.xacro declares `with_tool` and `tool`, and reads `tool`
# only with_tool.
ROBOT = """<?xml version="1.0"?>
<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="prefix" default=""/>
  <xacro:include filename="parts.xacro"/>
  <link name="$(arg prefix)base"/>
  <link name="$(arg prefix)tip"/>
  <joint name="$(arg prefix)slide" type="prismatic">
    <parent link="$(arg prefix)base"/>
    <child link="$(arg prefix)tip"/>
    <axis xyz="1 0 0"/>
    <limit lower="0" upper="$(arg reach)" effort="1" velocity="1"/>
  </joint>
</robot>
"""
PARTS = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="with_tool" default="true"/>
  <xacro:arg name="tool" default="none"/>
  <xacro:if value="$(arg with_tool)">
    <link name="$(arg tool)"/>
    <joint name="tool_mount" type="fixed">
      <parent link="$(arg prefix)tip"/>
      <child link="$(arg tool)"/>
    </joint>
  </xacro:if>
</robot>
"""
# The arguments the files take: reach is read but not declared (no default), so every run gives it.
TAKEN = ['reach:=2', 'tool:=gripper', 'prefix:=left_']
MISSPELT = 'prefx:=left_: not an argument of robot.urdf.xacro; did you mean prefix?'


@pytest.fixture
def robot(tmp_path: Path) -> Path:
    (tmp_path / 'parts.xacro').write_text(PARTS)
    path = tmp_path / 'robot.urdf.xacro'
    path.write_text(ROBOT)
    return path


# The Python API -------------------------------------------------------------------------------

def test_arguments_the_files_declare_or_read_do_not_warn(robot):
    model = RobotModel.from_file(robot, xacro_args=TAKEN)
    assert model.warnings == ()
    # Each argument reached the expansion: the prefix, the undeclared reach, the included tool.
    assert model.fixed_joints == ('tool_mount',)
    assert model.joint('tool_mount').parent == 'left_tip'
    assert model.joint('tool_mount').child == 'gripper'
    assert model.limits('left_slide') == (0.0, 2.0)


def test_an_argument_declared_in_an_included_file_does_not_warn_even_if_never_read(robot):
    model = RobotModel.from_file(robot, xacro_args=['reach:=1', 'with_tool:=false',
                                                    'tool:=gripper'])
    assert model.warnings == ()
    assert model.fixed_joints == ()  # no tool: `tool` was declared, never read


def test_an_argument_read_by_arg_without_a_declaration_does_not_warn(tmp_path):
    path = tmp_path / 'reader.urdf.xacro'
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                    '<link name="$(arg base)"/></robot>')
    model = RobotModel.from_file(path, xacro_args=['base:=chassis'])
    assert model.warnings == ()
    assert model.root == 'chassis'


def test_a_misspelt_argument_warns_with_its_near_miss_and_the_expansion_goes_on(robot):
    model = RobotModel.from_file(robot, xacro_args=['reach:=1', 'prefx:=left_'])
    assert model.warnings == (MISSPELT,)
    assert model.movable_joints == ('slide',)  # prefix at its default


def test_the_arguments_warnings_come_before_the_descriptions_own(robot):
    robot.write_text(ROBOT.replace('<link name="$(arg prefix)tip"/>',
                                   '<link name="$(arg prefix)tip"/><jiont/>'))
    warnings = RobotModel.from_file(robot, xacro_args=['reach:=1', 'prefx:=left_']).warnings
    assert len(warnings) == 2
    assert warnings[0] == MISSPELT
    assert '<jiont>' in warnings[1]


def test_an_argument_like_none_of_the_files_lists_what_they_take(robot):
    model = RobotModel.from_file(robot, xacro_args={'reach': '1', 'colour': 'red'})
    assert model.warnings == (
        'colour:=red: not an argument of robot.urdf.xacro (its arguments: prefix, with_tool, '
        'tool, reach)',)


def test_a_file_without_arguments_says_so(tmp_path):
    path = tmp_path / 'plain.xacro'
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                    '<link name="a"/></robot>')
    model = RobotModel.from_file(path, xacro_args=['prefix:=left_'])
    assert model.warnings == ('prefix:=left_: not an argument of plain.xacro (it has no '
                              'arguments)',)


# The node and the container (the engine both run) --------------------------------------------

def test_the_node_logs_the_warning_once_as_a_warn(robot):
    lines: list[tuple[Level, str]] = []

    def drop(data: bytes) -> None:
        pass

    config = NodeConfig.from_values({'description_file': str(robot),
                                     'xacro_args': ['reach:=1', 'prefx:=left_']})
    engine = StateEngine(config, JointSettings(), node_name='n', topics=('/joint_states',),
                         outputs=Outputs(tf=drop, tf_static=drop, joint_states=None,
                                         robot_description=drop, diagnostics=drop,
                                         log=lambda level, text, kind='': lines.append(
                                             (level, text))),
                         clock=lambda: (0, 0), monotonic=lambda: 0.0)
    engine.load_at_start(*configured_description(config))
    warned = [f'robot description: {MISSPELT}']
    assert [text for level, text in lines if level is Level.WARN] == warned
    # Rebuilt from the same file's text (use_smallest_joint_limits changed): the same warnings.
    lines.clear()
    values = {spec.name: getattr(config, spec.name) for spec in PARAMETERS}
    assert engine.reconfigure({**values, 'use_smallest_joint_limits': True},
                              {'use_smallest_joint_limits'}) is None
    assert [text for level, text in lines if level is Level.WARN] == warned


# The launch files -----------------------------------------------------------------------------

def test_the_launch_files_get_the_warning_of_the_model_they_expand(robot, tmp_path):
    setup = node_setup({'model': str(robot), 'xacro_args': 'reach:=1 prefx:=left_'}, '/',
                       str(tmp_path))
    assert setup.warnings == (f'launch argument model: {MISSPELT}',)
    assert '"slide"' in setup.parameters['robot_description']


# The inspect command --------------------------------------------------------------------------

def test_inspect_lists_the_warning_and_strict_fails_on_it(robot, capsys):
    status = inspect_main([str(robot), '--xacro-arg', 'reach:=1', '--xacro-arg', 'prefx:=left_'])
    out = capsys.readouterr().out
    assert status == 0
    assert f'\nWarnings (1)\n  1. {MISSPELT}\n' in out
    assert inspect_main([str(robot), '--strict', '--xacro-arg', 'reach:=1', '--xacro-arg',
                         'prefx:=left_']) == 3
    assert 'FAILED (--strict: warnings are errors)' in capsys.readouterr().out


# The bag command ------------------------------------------------------------------------------

def test_the_bag_command_reports_the_warning_as_a_finding(robot, tmp_path):
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import get_typestore, Stores

    store = get_typestore(Stores.ROS2_JAZZY)
    types = store.types
    message = types['sensor_msgs/msg/JointState'](
        header=types['std_msgs/msg/Header'](
            stamp=types['builtin_interfaces/msg/Time'](sec=1, nanosec=0), frame_id=''),
        name=['slide'], position=np.array([0.5]), velocity=np.array([]),
        effort=np.array([]))
    writer = Writer(tmp_path / 'input', version=9)
    writer.open()
    connection = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                       typestore=store)
    writer.write(connection, 10**9, bytes(store.serialize_cdr(
        message, 'sensor_msgs/msg/JointState')))
    writer.close()
    result = subprocess.run(
        [sys.executable, '-m', 'urdf_state_publisher.recorded.command', str(tmp_path / 'input'),
         str(tmp_path / 'output'), '--description', str(robot), 'reach:=1', 'prefx:=left_'],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f'  [WARN] first at 0.000 s: robot description: {MISSPELT}\n' in result.stdout
