"""Parameters the node does not know, given every way a bringup gives them, over real processes.

A near miss of a known parameter warns once, naming both; the others (another node's, from a
`/**` section the whole bringup shares) are listed in one INFO line. Parameters of rclpy and
joint_state_publisher's that the node reads are known: a healthy bringup logs no WARN.
"""

from __future__ import annotations

import re

from conftest import SAMPLE_URDF
from node_fixtures import LoggedProcess, NodeProcess, Probe, wait_for_log
from test_container import ContainerClient, ContainerProcess, launch_ros_request, OURS
import yaml

READY = "robot 'sample_arm'"  # the node's INFO line once its description is loaded


def lines(output: str, level: str) -> list[str]:
    """The text of each log line of `level` ('WARN', 'INFO'), after the logger's name."""
    return re.findall(rf'^\[{level}\] \[[\d.]+\] \[[\w.]+\]: (.*)$', output, re.MULTILINE)


def warned_at_start(process: LoggedProcess, probe: Probe, ready: str = READY) -> str:
    return wait_for_log(process, probe, ready, timeout=30.0)


def test_a_near_miss_warns_naming_both_from_the_command_line_a_params_file_and_a_launch_file(
        tmp_path, start_node, probe):
    # A launch file gives a Node's parameters in a params file of its own, under the node's
    # fully qualified name (launch_ros, Node._create_params_file_from_dict).
    launch_params = tmp_path / 'launch_params_x.yaml'
    launch_params.write_text(yaml.safe_dump(
        {'/robots/near_misses': {'ros__parameters': {'frame_prefx': 'left/'}}}))
    node = start_node(
        {'description_file': str(SAMPLE_URDF), 'ignore_timestmp': True,
         'zero.elbow_joint': 0.5},
        ('-p', 'publish_frequncy:=10.0', '--params-file', str(launch_params),
         '-r', '__ns:=/robots'), node_name='near_misses')
    output = warned_at_start(node, probe)
    assert lines(output, 'WARN') == [
        'frame_prefx: not a parameter of this node; did you mean frame_prefix?',
        'ignore_timestmp: not a parameter of this node; did you mean ignore_timestamp?',
        'publish_frequncy: not a parameter of this node; did you mean publish_frequency?',
        'zero.elbow_joint: not a parameter of this node; did you mean zeros.elbow_joint?',
    ]
    assert not any('does not read' in line for line in lines(output, 'INFO'))
    assert node.running()


def test_a_params_file_shared_by_a_bringup_lists_the_other_nodes_parameters_at_info(
        tmp_path, probe):
    params = tmp_path / 'bringup.yaml'
    params.write_text(yaml.safe_dump({
        # Shared by every node of the bringup: the controller manager's, a driver's, ours.
        '/**': {'ros__parameters': {
            'use_sim_time': False, 'update_rate': 100, 'wheel_separation': 0.4,
            'qos_overrides./joint_states.subscription.depth': 20,
            'qos_overrides./tf.publisher.depth': 100}},
        # joint_state_publisher's section, given to this node in its place.
        'state_publisher': {'ros__parameters': {
            'description_file': str(SAMPLE_URDF), 'rate': 20, 'delta': 0.0,
            'source_list': ['arm/joint_states'], 'publish_joint_states': True,
            'use_mimic_tags': True, 'publish_default_velocities': False,
            'zeros.elbow_joint': 0.5, 'dependent_joints.wrist_roll_joint.parent': 'elbow_joint',
            'dependent_joints.wrist_roll_joint.factor': 0.5}},
        'controller_manager': {'ros__parameters': {'update_rate': 1000}},
    }))
    node = NodeProcess(tmp_path, {}, ('--params-file', str(params)), node_name='state_publisher')
    try:
        output = warned_at_start(node, probe)
        assert lines(output, 'WARN') == []
        assert [line for line in lines(output, 'INFO') if 'does not read' in line] == [
            'parameters given that this node does not read (for other nodes, as a /** section '
            'shares them): update_rate, wheel_separation']
    finally:
        assert node.stop() == 0


def test_without_unknown_parameters_nothing_is_said_of_them(tmp_path, start_node, probe):
    node = start_node({'description_file': str(SAMPLE_URDF), 'use_sim_time': False,
                       'start_type_description_service': False},
                      node_name='known_only')
    output = warned_at_start(node, probe)
    assert lines(output, 'WARN') == []
    assert 'not a parameter' not in output and 'does not read' not in output


def test_a_loaded_node_warns_of_a_near_miss_under_its_own_name(tmp_path, probe):
    container = ContainerProcess(tmp_path)
    try:
        client = ContainerClient(probe)
        request = launch_ros_request(OURS, name='left', namespace='fleet', parameters=[{
            'robot_description': SAMPLE_URDF.read_text(), 'publish_frequncy': 10.0,
            'odom_frame': 'odom'}])
        response = client.load(request)
        assert response.success, response.error_message
        output = warned_at_start(container, probe, "loaded '/fleet/left'")
        assert re.findall(r'^\[WARN\] \[[\d.]+\] \[([\w.]+)\]: (.*)$', output, re.MULTILINE) == [
            ('fleet.left', 'publish_frequncy: not a parameter of this node; did you mean '
                           'publish_frequency?')]
        assert ('parameters given that this node does not read (for other nodes, as a /** '
                'section shares them): odom_frame') in output
    finally:
        assert container.stop() == 0
