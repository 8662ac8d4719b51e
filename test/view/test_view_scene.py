"""The view's pure parts: link visuals read from a URDF, mesh paths, link poses from
transforms, joint values read back, and the sliders (ranges, center, randomize, mimics).

Expected values are written out by hand from the documents and the URDF's conventions, or read
from the URDF's text with the standard library's XML parser.
"""

from __future__ import annotations

import math
from pathlib import Path
import random
import xml.etree.ElementTree as ElementTree

import pytest

from urdf_state_publisher.geometry import Pose
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.view.scene import (
    DEFAULT_RGBA,
    joint_values,
    MeshPathError,
    read_visuals,
    resolve_mesh,
    TransformTree,
)
from urdf_state_publisher.view.sliders import SliderSet

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

SAMPLE_URDF = Path(__file__).resolve().parents[2] / 'urdf' / 'sample_arm.urdf'

SHAPES = """<robot name="shapes">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base">
    <visual><origin xyz="1 2 3"/><geometry><box size="0.1 0.2 0.3"/></geometry>
      <material name="red"/></visual>
    <visual><geometry><cylinder radius="0.05" length="0.4"/></geometry>
      <material name="glass"><color rgba="0 0 1 0.5"/></material></visual>
  </link>
  <link name="arm">
    <visual><geometry><sphere radius="0.07"/></geometry></visual>
    <visual><geometry><capsule radius="0.02" length="0.3"/></geometry></visual>
    <visual><geometry><mesh filename="package://arm_meshes/arm.stl" scale="2 2 2"/></geometry>
    </visual>
    <collision><geometry><box size="9 9 9"/></geometry></collision>
  </link>
  <joint name="j" type="continuous"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/></joint>
</robot>"""


def test_every_visual_is_read_with_its_shape_origin_and_colour():
    visuals = read_visuals(SHAPES)

    assert [(v.link, v.shape, v.size) for v in visuals] == [
        ('base', 'box', (0.1, 0.2, 0.3)), ('base', 'cylinder', (0.05, 0.4)),
        ('arm', 'sphere', (0.07,)), ('arm', 'capsule', (0.02, 0.3)),
        ('arm', 'mesh', (2.0, 2.0, 2.0))]  # collisions are not drawn
    assert visuals[0].origin.translation == (1.0, 2.0, 3.0)
    # A material by name is the robot's; one with its own colour keeps it; none is grey.
    assert [v.rgba for v in visuals[:3]] == [(1, 0, 0, 1), (0, 0, 1, 0.5), DEFAULT_RGBA]
    assert [v.colored for v in visuals] == [True, True, False, False, False]
    assert visuals[4].mesh == 'package://arm_meshes/arm.stl'


def test_a_mesh_is_found_by_package_path_the_index_or_beside_the_description(tmp_path):
    (tmp_path / 'meshes').mkdir()
    mesh = tmp_path / 'meshes' / 'arm.stl'
    mesh.write_text('solid arm\nendsolid arm\n')

    def index(name: str) -> str:
        if name == 'indexed':
            return str(tmp_path)
        raise LookupError(name)

    assert resolve_mesh('package://arm/meshes/arm.stl', {'arm': str(tmp_path)}, None) == mesh
    assert resolve_mesh('package://indexed/meshes/arm.stl', {}, index) == mesh
    assert resolve_mesh(f'file://{mesh}', {}, None) == mesh
    assert resolve_mesh('meshes/arm.stl', {}, None, str(tmp_path)) == mesh
    with pytest.raises(MeshPathError, match=r'--package-path other=DIR'):
        resolve_mesh('package://other/arm.stl', {}, index)
    with pytest.raises(MeshPathError, match=r'no file at'):
        resolve_mesh('package://arm/meshes/missing.stl', {'arm': str(tmp_path)}, None)


def quarter_turn_about_z() -> tuple[float, float, float, float]:
    return (0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5))


def test_a_link_is_posed_through_its_chain_of_transforms_or_not_at_all():
    tree = TransformTree()
    tree.set('odom', 'base', Pose((5.0, 0.0, 0.0)))
    tree.set('base', 'torso', Pose((0.0, 0.0, 1.0), quarter_turn_about_z()))
    tree.set('torso', 'arm', Pose((1.0, 0.0, 0.0)))
    tree.set('lost', 'hand', Pose((1.0, 0.0, 0.0)))
    tree.set('base', 'wheel', Pose((math.nan, 0.0, 0.0)))  # never drawn at NaN
    tree.set('loop_a', 'loop_b', Pose())
    tree.set('loop_b', 'loop_a', Pose())

    poses = {frame: tree.pose(frame, 'base')
             for frame in ('base', 'torso', 'arm', 'hand', 'wheel', 'loop_a')}

    assert poses['base'].translation == (0.0, 0.0, 0.0)
    # The arm, 1 m along the torso's x, which is turned a quarter about z: along base's y.
    assert poses['arm'].translation == pytest.approx((0.0, 1.0, 1.0))
    assert poses['hand'] is None and poses['wheel'] is None and poses['loop_a'] is None
    assert tree.pose('arm', 'odom').translation == pytest.approx((5.0, 1.0, 1.0))


def test_a_link_is_posed_in_its_parent_link_whatever_shape_the_transforms_tree_has():
    # The description's tree: base -> arm -> hand. A publisher of another shape gives the
    # hand from the base, and the arm from the base: the hand in the arm is still found.
    tree = TransformTree()
    tree.set('base', 'arm', Pose((0.0, 0.0, 1.0), quarter_turn_about_z()))
    tree.set('base', 'hand', Pose((0.0, 2.0, 1.0)))
    tree.set('lost', 'finger', Pose((1.0, 0.0, 0.0)))

    # In the arm's frame (turned a quarter about z, 1 m up), base's (0, 2, 1) is 2 m along x.
    hand = tree.relative('hand', 'arm', 'base')
    assert hand.translation == pytest.approx((2.0, 0.0, 0.0))
    assert hand.rotation == pytest.approx((0.0, 0.0, -math.sqrt(0.5), math.sqrt(0.5)))
    assert tree.relative('arm', 'base', 'base').translation == pytest.approx((0.0, 0.0, 1.0))
    assert tree.relative('finger', 'hand', 'base') is None


def test_joint_values_are_read_back_from_their_transforms():
    model = RobotModel.from_file(SAMPLE_URDF)
    tree = TransformTree()
    # shoulder_pan_joint: origin xyz 0 0 0.4, rpy 0 0 0.3, axis z; at 0.7 its rotation is
    # a turn of 1.0 about z. torso_lift_joint: origin -0.1 0 0.15, axis z; at 0.2: z 0.35.
    tree.set('torso_link', 'shoulder_pan_link',
             Pose((0.0, 0.0, 0.4), (0.0, 0.0, math.sin(0.5), math.cos(0.5))))
    tree.set('base_link', 'torso_link', Pose((-0.1, 0.0, 0.35)))

    assert joint_values(model, tree) == {
        'shoulder_pan_joint': pytest.approx(0.7), 'torso_lift_joint': pytest.approx(0.2)}
    # One robot of several: its frames named after a prefix (the publisher's frame_prefix).
    prefixed = TransformTree()
    prefixed.set('robot1/base_link', 'robot1/torso_link', Pose((-0.1, 0.0, 0.35)))
    assert joint_values(model, prefixed, 'robot1/') == {'torso_lift_joint': pytest.approx(0.2)}
    assert joint_values(model, prefixed) == {}


def sample_joints() -> dict[str, ElementTree.Element]:
    robot = ElementTree.parse(SAMPLE_URDF).getroot()
    return {j.get('name'): j for j in robot.iter('joint')}


def test_one_slider_per_moving_joint_that_is_no_mimic_follower_within_its_limits():
    joints = sample_joints()
    sliders = SliderSet(RobotModel.from_file(SAMPLE_URDF)).sliders

    expected = {}
    for name, joint in joints.items():
        if joint.get('type') == 'fixed' or joint.find('mimic') is not None:
            continue
        if joint.get('type') == 'continuous':
            expected[name] = (-math.pi, math.pi)
        else:
            limit = joint.find('limit')
            expected[name] = (float(limit.get('lower')), float(limit.get('upper')))
    assert {s.joint: (s.lower, s.upper) for s in sliders} == expected


def test_mimic_followers_follow_the_sliders_and_center_and_randomize_stay_in_range():
    joints = sample_joints()
    sliders = SliderSet(RobotModel.from_file(SAMPLE_URDF))

    sliders.set('left_finger_joint', 0.03)
    sliders.set('elbow_joint', 99.0)  # past its end: at its end
    names, positions = sliders.joint_state()
    state = dict(zip(names, positions))

    right = joints['right_finger_joint'].find('mimic')
    tip = joints['right_finger_tip_joint'].find('mimic')
    right_value = float(right.get('multiplier')) * 0.03 + float(right.get('offset'))
    tip_value = float(tip.get('multiplier')) * right_value + float(tip.get('offset'))
    tip_lower = float(joints['right_finger_tip_joint'].find('limit').get('lower'))
    assert state['right_finger_joint'] == pytest.approx(right_value)
    assert state['right_finger_tip_joint'] == pytest.approx(max(tip_value, tip_lower))
    assert state['elbow_joint'] == float(joints['elbow_joint'].find('limit').get('upper'))

    sliders.randomize(random.Random(1))
    ranges = {s.joint: (s.lower, s.upper) for s in sliders.sliders}
    assert all(ranges[n][0] <= v <= ranges[n][1] for n, v in sliders.values.items())
    assert len(set(sliders.values.values())) == len(ranges)  # each drawn on its own
    sliders.center()
    # Each joint's range holds 0 (torso and fingers at their lower end, 0): center is 0.
    assert set(sliders.values.values()) == {0.0}


def test_a_timeline_gives_the_latest_transforms_until_a_moment_forward_and_back():
    from urdf_state_publisher.view.bag_source import Timeline

    static = [('base', 'camera', Pose((0.0, 0.0, 1.0)))]
    moments = [(30, [('base', 'arm', Pose((3.0, 0.0, 0.0)))]),
               (10, [('base', 'arm', Pose((1.0, 0.0, 0.0)))]),  # logged out of order
               (20, [('base', 'arm', Pose((2.0, 0.0, 0.0))), ('arm', 'hand', Pose())])]
    timeline = Timeline(static, moments)

    def x_of(frame: str, time_ns: int) -> float | None:
        pose = timeline.seek(time_ns).pose(frame, 'base')
        return None if pose is None else pose.translation[0]

    assert (timeline.start_ns, timeline.end_ns) == (10, 30)
    assert x_of('camera', 0) == 0.0 and x_of('arm', 0) is None  # static from the start
    assert [x_of('arm', t) for t in (10, 25, 30, 99)] == [1.0, 2.0, 3.0, 3.0]
    # Back: what came later is forgotten (the hand came at 20).
    assert x_of('arm', 15) == 1.0 and x_of('hand', 15) is None
    assert x_of('hand', 20) == 2.0


def test_a_long_timeline_seeks_back_and_forth_to_what_was_logged_until_then():
    from urdf_state_publisher.view.bag_source import SNAPSHOT_EVERY, Timeline

    # Moment k (at k ns) puts the arm at x = k; the hand appears at moment 300 and stays.
    count = 4 * SNAPSHOT_EVERY + 17
    moments = [(k, [('base', 'arm', Pose((float(k), 0.0, 0.0)))]
                + ([('arm', 'hand', Pose())] if k == 300 else [])) for k in range(count)]
    timeline = Timeline([], moments)

    for time_ns in (count - 1, 5, 3 * SNAPSHOT_EVERY + 1, 299, 300, 2 * SNAPSHOT_EVERY,
                    SNAPSHOT_EVERY - 1, count + 100, 0):
        tree = timeline.seek(time_ns)
        last = min(time_ns, count - 1)
        assert tree.pose('arm', 'base').translation[0] == float(last), time_ns
        assert (tree.pose('hand', 'base') is None) == (last < 300), time_ns


@pytest.mark.parametrize('arguments, named', [
    (['--package-path', 'robot_meshes'], "--package-path 'robot_meshes': give it as NAME=DIR"),
    (['--port', '70000'], '--port 70000: give a port from 0 to 65535'),
    (['--no-such-option'], 'unrecognized arguments: --no-such-option'),
])
def test_a_usage_error_is_one_line_naming_it_and_exits_64_starting_nothing(arguments, named,
                                                                          capsys):
    from urdf_state_publisher.exit_status import USAGE
    from urdf_state_publisher.view.command import main

    with pytest.raises(SystemExit) as ended:
        main(arguments)

    assert ended.value.code == USAGE
    assert capsys.readouterr().err == (f'urdf_state_publisher_view: {named} '
                                       '(usage: urdf_state_publisher_view --help)\n')
