"""Every code block in doc/ is run by a test, and what it states it prints is compared.

`EXAMPLES` names, for each block (its page and first line), the test that runs it: the tests
of this file for the blocks nothing else runs, and the tests elsewhere that already do (the
Python API example, the docs build, the display tools' install command). A block not listed
fails `test_every_code_block_in_doc_is_run_by_a_test` until it is given a test; a block that
needs what no test run here has (a ROS 2 install with `ros2` on the path, root) says so, with
the tests that run what can be run of it.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from xml.etree import ElementTree

from conftest import REPO, SAMPLE_URDF, SAMPLE_XACRO
from node_fixtures import call_service, joint_state, ns, RELIABLE, wait_for_log, wait_until
import pytest
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters
from sensor_msgs.msg import JointState
import xacro
import yaml

from urdf_state_publisher.description import DescriptionError, parse_description
from urdf_state_publisher.engine.parameters import DOCUMENTED, NodeConfig
from urdf_state_publisher.ros.launch_support import LaunchArgumentError, node_setup

DOC = REPO / 'doc'
FENCE = re.compile(r'^(`{3,})\s*(\S*)')
THIS = 'test_doc_examples.py::'
EXAMPLES = {
    ('api.md', 'from urdf_state_publisher import DescriptionError, RobotModel, tree_text'):
        'test_api_example.py::test_the_python_api_example_prints_what_the_page_states',
    ('api.md', '.. automodule:: urdf_state_publisher'):
        'test_docs.py::test_the_api_page_documents_every_public_name',
    ('diagnostics.md', '[INFO] [...] [urdf_state_publisher]: robot description:'):
        THIS + 'test_the_log_of_a_description_with_extensions_is_as_shown',
    ('launch.md', '[ERROR] [launch]: Caught exception in launch (see debug for traceback): '
                  'launch argument publish_frequency'):
        THIS + 'test_the_launch_argument_errors_are_as_shown',
    ('launch.md', 'sudo apt install ros-$ROS_DISTRO-rviz2'):
        'test_launch_files.py::test_the_docs_say_how_to_install_the_display_tools (the '
        'command display.launch.py prints; running it needs root and a ROS 2 apt source)',
    ('view.md', "pip install 'urdf_state_publisher[view]'"):
        'test_view_browser.py::test_the_pages_commands_show_the_robot_in_the_browser',
    ('view.md', 'ros2 run urdf_state_publisher urdf_state_publisher_view --frame-prefix '
                'robot1/ \\'):
        'test_view_browser.py::test_one_robot_of_several_is_drawn_from_its_prefixed_frames '
        '(the view with its words, ros2 run needs a ROS 2 install)',
    ('view.md', 'ros2 launch urdf_state_publisher display.launch.py gui:=true'):
        'test_launch_files.py::test_display_starts_rviz_and_the_view_only_with_gui (the launch '
        "file with stand-ins for launch; ros2 needs a ROS 2 install; the view's command is "
        "test_view_browser.py's)",
    ('launch.md', 'cd ~/ros2_ws/src && git clone <this repository> urdf_state_publisher'):
        'needs a ROS 2 install (rosdep, ros2): test_colcon_workspace.py builds the package '
        'with colcon and runs the installed executable, test/ros_install/test_launch_smoke.py '
        'launches urdf_state_publisher.launch.py under colcon test',
    ('composition.md', "# before: robot_state_publisher in rclcpp's container"):
        'needs launch_ros (not on PyPI): test_container.py sends the load requests launch_ros '
        "builds from such descriptions (its load_composable_nodes.py's fields, a params file "
        'expanded) and checks each robot as a process would be',
    ('merging.md', '# before: two nodes'):
        THIS + 'test_the_merging_example_gives_one_node_the_two_nodes_parameters',
    ('merging.md', 'joint_state_publisher:'):
        THIS + 'test_the_replacement_file_holds_the_pairs_parameters',
    ('merging.md', 'urdf_state_publisher:'):
        THIS + 'test_the_replacement_file_runs_as_the_pair_would',
    ('topics.md', '/**:'):
        THIS + 'test_the_queue_depth_override_sets_the_subscription_depth',
    ('urdf.md', "robot description: line 1367, column 105: '--' inside a comment"):
        THIS + 'test_the_warning_of_a_description_that_is_not_xml_is_as_shown',
    ('urdf.md', 'robot description line 12, column 3: the end tag </jiont>'):
        THIS + 'test_the_refusal_of_a_mismatched_end_tag_is_as_shown',
    ('development.md', 'python tools/differential_corpus.py write /tmp/corpus pr2=pr2.urdf'):
        'test_lenient_xml.py::test_the_corpus_tool_writes_and_compares (on the bundled '
        "robots, with urdfdom's recorded results: urdfdom is built beside the project, from "
        'its sources, not here)',
    ('urdf.md', 'urdf_state_publisher_inspect robot.urdf.xacro'):
        THIS + 'test_the_inspect_command_runs_on_the_sample_robot',
    ('recorded-data.md', '# The replay way: three terminals, in real time.'):
        'test_bag.py::test_the_one_command_of_the_recorded_data_page_runs (the replay way '
        'needs a ROS 2 install: ros2 bag is not on PyPI)',
    ('recorded-data.md', 'urdf_state_publisher_bag INPUT [INPUT ...] OUTPUT'):
        'test_bag.py::test_the_usage_on_the_recorded_data_page_is_the_commands',
    ('recorded-data.md', 'run       messages        /tf  findings  status'):
        'test_bag.py::test_a_batch_runs_every_input_and_its_table_is_the_pages',
    ('recorded-data.md', 'batch: 2 of 5 runs done'):
        'test_batch_progress.py::test_the_progress_line_of_the_recorded_data_page_is_a_batchs',
    ('recorded-data.md', 'urdf_state_publisher_bag /data/2026-11-27/ /data/2026-11-27_tf/'):
        'test_bag_statuses.py::test_the_script_of_the_recorded_data_page_says_each_status',
    ('recorded-data.md', 'urdf_state_publisher_bag /fleet/2026-11-27/ /fleet/2026-11-27_tf/'):
        'test_bag_cluster.py::test_the_cluster_command_of_the_recorded_data_page_runs',
    ('recorded-data.md', 'from dask_jobqueue import SLURMCluster'):
        'needs a Slurm cluster (sbatch), which no test run here has; '
        'test_bag_cluster.py runs the command on a scheduler and workers started by hand',
    ('recorded-data.md', 'from dask_kubernetes.operator import KubeCluster'):
        'needs a Kubernetes cluster with the Dask operator, which no test run here has; '
        'test_bag_cluster.py runs the command on a scheduler and workers started by hand',
    ('recorded-data.md', 'read 30,000 messages'):
        'test_bag.py::test_the_summary_on_the_recorded_data_page_is_what_the_command_prints',
    ('development.md', 'rosdep install --from-paths src --ignore-src -y --dependency-types test'):
        "needs a ROS 2 install (rosdep, apt, colcon test with launch_testing): "
        'test_colcon_workspace.py builds the package with colcon and runs colcon test, and '
        "test_launch_files.py reads the launch file's warnings as they reach launch's loggers",
    ('recorded-data.md', 'ros2 bag play --clock run_42_tf/'):
        'test_bag.py::test_tf_static_is_stored_transient_local_so_that_playback_latches_it '
        '(the QoS the player adopts; ros2 bag and rviz2 need a ROS 2 install)',
    ('recorded-data.md', '/robot_description:'):
        THIS + 'test_the_playback_qos_override_latches_the_description_and_tf_static',
    ('development.md', 'make demo'):
        'the commands that run the demo and this suite: test_demo.py runs the demo, .ci/run '
        'runs make test',
    ('development.md', 'make test ROS_DISTRO=kilted PYTHON=3.12'):
        '.ci/run runs make test with these arguments (kilted on 3.12, none on 3.13)',
}


def code_blocks() -> list[tuple[str, int, str, str]]:
    """(page, first line number, language, code) of every fenced block of doc/*.md."""
    blocks = []
    for page in sorted(DOC.glob('*.md')):
        fence, language, code, start = None, '', [], 0
        for number, line in enumerate(page.read_text(encoding='utf-8').splitlines(), 1):
            if fence is None:
                opening = FENCE.match(line)
                if opening:
                    fence, language, code, start = opening.group(1), opening.group(2), [], number
            elif line.strip() == fence:
                blocks.append((page.name, start + 1, language, '\n'.join(code) + '\n'))
                fence = None
            else:
                code.append(line)
    return blocks


def block(page: str, first_line: str) -> str:
    [code] = [code for name, _, _, code in code_blocks()
              if name == page and code.startswith(first_line)]
    return code


def test_every_code_block_in_doc_is_run_by_a_test():
    found = {(page, code.splitlines()[0]) for page, _, _, code in code_blocks()}
    unlisted = sorted(f'doc/{page} line {line}: {code.splitlines()[0]!r}'
                      for page, line, _, code in code_blocks()
                      if not any(page == p and code.startswith(first)
                                 for p, first in EXAMPLES))
    assert unlisted == [], 'blocks no test runs: list each in EXAMPLES with its test'
    stale = [key for key in EXAMPLES
             if not any(page == key[0] and line.startswith(key[1]) for page, line in found)]
    assert stale == []
    for test in EXAMPLES.values():
        if '::' in test:  # the named test exists
            file, name = test.split(' ', 1)[0].split('::')
            paths = list((REPO / 'test').rglob(file))  # in test/ or a folder, by its unique name
            assert len(paths) == 1, test
            assert f'def {name}(' in paths[0].read_text(), test


def test_the_inspect_command_runs_on_the_sample_robot(tmp_path):
    [command] = block('urdf.md', 'urdf_state_publisher_inspect').splitlines()
    # The example's robot is the sample; its optional arguments are given, unbracketed.
    words = [word.strip('[]') for word in shlex.split(command)]
    assert words[:2] == ['urdf_state_publisher_inspect', 'robot.urdf.xacro']
    result = subprocess.run(
        [sys.executable, '-m', 'urdf_state_publisher.tools.inspect', str(SAMPLE_XACRO),
         *words[2:]], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr  # --strict: no warnings
    expanded = ElementTree.fromstring(
        xacro.process_file(str(SAMPLE_XACRO), mappings={'prefix': 'left_'}).toxml())
    for joint in expanded.iter('joint'):
        assert joint.get('name').startswith('left_') and joint.get('name') in result.stdout
    assert (tmp_path / 'tree.dot').read_text().startswith('digraph')


def test_the_launch_argument_errors_are_as_shown(tmp_path, monkeypatch):
    # launch prints an exception that ends the launch as
    # '[ERROR] [launch]: Caught exception in launch (see debug for traceback): <message>'.
    prefix = '[ERROR] [launch]: Caught exception in launch (see debug for traceback): '
    monkeypatch.chdir(tmp_path)  # where no robot.urdf.xacro is
    lines = block('launch.md', prefix).splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith(prefix)
        message = line.removeprefix(prefix)
        argument, value = re.fullmatch(r"launch argument (\w+): .*'(.*)'", message).groups()
        with pytest.raises(LaunchArgumentError) as raised:
            node_setup({argument: value}, '/', str(REPO))
        assert str(raised.value) == message


class LaunchNodes:
    """Stands in for launch_ros.actions.Node: records each call's arguments."""

    def __init__(self):
        self.made: list[dict] = []

    def __call__(self, **kwargs):
        self.made.append(kwargs)
        return kwargs


def test_the_merging_example_gives_one_node_the_two_nodes_parameters():
    code = block('merging.md', '# before: two nodes')
    nodes = LaunchNodes()
    exec(compile(code, str(DOC / 'merging.md'), 'exec'),
         {'Node': nodes, 'robot_description': SAMPLE_URDF.read_text()})
    joint_state_publisher, robot_state_publisher, ours = nodes.made
    [jsp], [rsp], [parameters] = (node['parameters'] for node in nodes.made)
    assert (joint_state_publisher['package'], robot_state_publisher['package']) == (
        'joint_state_publisher', 'robot_state_publisher')
    assert (ours['package'], ours['executable']) == ('urdf_state_publisher',
                                                     'urdf_state_publisher')
    # The two nodes' parameters, given to one, which takes every one of them together.
    assert parameters['source_list'] == jsp['source_list']
    assert parameters['robot_description'] == rsp['robot_description']
    assert set(parameters) <= {spec.name for spec in DOCUMENTED}
    config = NodeConfig.from_values(parameters)
    assert config.publish_joint_states is True
    assert tuple(config.source_list) == tuple(jsp['source_list'])


def test_the_queue_depth_override_sets_the_subscription_depth(start_node, probe):
    values = yaml.safe_load(block('topics.md', '/**:'))['/**']['ros__parameters']
    depth = values['qos_overrides']['/joint_states']['subscription']['depth']
    assert depth == 100  # the depth the page measured
    node = start_node({**values, 'description_file': str(SAMPLE_URDF)})
    client = probe.node.create_client(GetParameters, '/urdf_state_publisher/get_parameters')
    probe.wait_until(client.service_is_ready, timeout=30, what='the parameter service')
    name = 'qos_overrides./joint_states.subscription.depth'
    response = call_service(client, GetParameters.Request(names=[name]), probe.spin, 30,
                            f'the parameter {name}')
    [value] = response.values
    assert (value.type, value.integer_value) == (ParameterType.PARAMETER_INTEGER, depth)
    assert node.running(), node.output()


def test_the_log_of_a_description_with_extensions_is_as_shown(start_node, probe):
    shown = block('diagnostics.md', '[INFO] [...] [urdf_state_publisher]:').splitlines()
    page = (DOC / 'diagnostics.md').read_text(encoding='utf-8')
    [fixture] = re.findall(r'For (test/fixtures/\S+\.urdf)', page)
    node = start_node({'description_file': str(REPO / fixture)})
    output = wait_for_log(node, probe, ' warnings\n', timeout=20.0)
    # '[...]' stands for the stamp rcutils writes.
    patterns = [re.compile(re.escape(line).replace(re.escape('[...]'), r'\[[0-9.]+\]'))
                for line in shown]
    lines = [line for line in output.splitlines() if line.startswith('[')]
    matched = [line for line in lines if any(p.fullmatch(line) for p in patterns)]
    assert len(matched) == len(patterns), output  # each line once, in this order
    assert all(p.fullmatch(line) for p, line in zip(patterns, matched)), output
    assert not [line for line in lines if line.startswith(('[WARN]', '[ERROR]'))], output



def test_the_replacement_file_holds_the_pairs_parameters():
    pair = yaml.safe_load(block('merging.md', 'joint_state_publisher:'))
    [ours] = yaml.safe_load(block('merging.md', 'urdf_state_publisher:')).values()
    joint_state_publisher, robot_state_publisher = (
        pair[name]['ros__parameters'] for name in ('joint_state_publisher',
                                                   'robot_state_publisher'))
    assert ours['ros__parameters'] == {**joint_state_publisher, **robot_state_publisher,
                                       'publish_joint_states': True}


# A robot with the joints the example names: a passive caster and two fingers, the right one
# to follow the left by parameter.
FINGERS = (
    '<robot name="fingers"><link name="base"/><link name="caster"/><link name="left"/>'
    '<link name="right"/>'
    '<joint name="caster_joint" type="revolute"><parent link="base"/><child link="caster"/>'
    '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
    '<joint name="left_finger_joint" type="prismatic"><parent link="base"/>'
    '<child link="left"/><axis xyz="0 1 0"/>'
    '<limit lower="0" upper="0.05" effort="1" velocity="1"/></joint>'
    '<joint name="right_finger_joint" type="prismatic"><parent link="base"/>'
    '<child link="right"/><axis xyz="0 1 0"/>'
    '<limit lower="-0.05" upper="0" effort="1" velocity="1"/></joint></robot>')


def test_the_replacement_file_runs_as_the_pair_would(start_node, probe, tmp_path):
    # The file as written, for a node of that name, with a robot that has those joints.
    document = yaml.safe_load(block('merging.md', 'urdf_state_publisher:'))
    document['urdf_state_publisher']['ros__parameters']['robot_description'] = FINGERS
    params_file = tmp_path / 'replacement.yaml'
    params_file.write_text(yaml.safe_dump(document))
    node = start_node({}, ('--params-file', str(params_file)))
    states = probe.record(JointState, '/joint_states', RELIABLE)
    driver = probe.node.create_publisher(JointState, '/arm/joint_states', RELIABLE)
    probe.wait_until(lambda: driver.get_subscription_count() > 0, 30,
                     f'the node to read arm/joint_states ({node.output()[-300:]})')
    stamps = iter(range(ns(10), ns(1000), ns(1) // 10))

    def drive() -> None:
        driver.publish(joint_state(next(stamps), {'left_finger_joint': 0.02}))
        probe.spin_for(0.1)

    def driven() -> list[dict]:
        return [dict(zip(s.name, s.position)) for s in states
                if dict(zip(s.name, s.position)).get('left_finger_joint') == 0.02]

    wait_until(lambda: driven(), 30, drive, f'the merged joint_states ({node.output()[-300:]})')
    # zeros: the caster held at 0.5; dependent_joints: the right finger at -1.0 x the left.
    assert driven()[-1] == pytest.approx(
        {'caster_joint': 0.5, 'left_finger_joint': 0.02, 'right_finger_joint': -0.02},
        abs=1e-12)
    assert node.running(), node.output()
    assert 'WARN' not in node.output() and 'ERROR' not in node.output(), node.output()


def test_the_warning_of_a_description_that_is_not_xml_is_as_shown():
    """A comment with '--' where the page's line puts it: line 1367, column 105."""
    [line] = block('urdf.md', "robot description: line 1367, column 105: '--'").splitlines()
    text = SAMPLE_URDF.read_text()
    declaration_end = text.index('?>') + 2
    comment = '\n' * 1366 + ' ' * 99 + '<!--a--b-->'
    text = text[:declaration_end] + comment + text[declaration_end:]
    description = parse_description(text)
    assert f'robot description: {description.warnings[0]}' == line


def test_the_refusal_of_a_mismatched_end_tag_is_as_shown():
    [line] = block('urdf.md', 'robot description line 12, column 3: the end tag').splitlines()
    text = '\n'.join([
        '<?xml version="1.0"?>', '<robot name="r">', '  <link name="a"/>', '  <link name="b"/>',
        '', '', '  <joint name="j" type="fixed">', '    <parent link="a"/>',
        '    <child link="b"/>', '', '', '  </jiont>', '</robot>'])
    with pytest.raises(DescriptionError) as refusal:
        parse_description(text)
    assert str(refusal.value) == line


def test_the_playback_qos_override_latches_the_description_and_tf_static():
    """The file given to ros2 bag play --qos-profile-overrides-path: each topic transient
    local and reliable (what RViz's RobotModel and tf2's static listener ask for), in the
    policy names and values rosbag2's override schema takes."""
    overrides = yaml.safe_load(block('recorded-data.md', '/robot_description:'))
    assert set(overrides) == {'/robot_description', '/tf_static'}
    for policies in overrides.values():
        assert policies == {'reliability': 'reliable', 'durability': 'transient_local',
                            'history': 'keep_last', 'depth': 1}
