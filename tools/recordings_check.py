"""urdf_state_publisher_bag on recordings made by others, checked against what they recorded.

    python tools/recordings_check.py RECORDINGS_DIR

RECORDINGS_DIR holds the two ROS 1 recordings of other people that CI has beside the clone
(franka_panda_moveit/ and pr2_rsp_test/, each with its URDF). For each, the command is run as
a user runs it, and its output read back:

- MoveIt's Panda demo: the computed /tf equals the /tf that the robot's own
  robot_state_publisher recorded, at every stamp and child frame both have, component for
  component (to 1e-12; a rotation's sign included, which is KDL's); none of the robot's
  recorded transforms is left in the output, and MoveIt's `world` transform is. The robot's
  recorded /tf_static equals the computed one alike.
- The ROS 1 robot_state_publisher's own PR2 test bag (roslib/Header, a topic named without a
  leading slash): /tf is computed for every moving joint the recording names, and its two
  names that are no joints of the PR2 are reported.

Not a test of the suite: the recordings are not the repository's. Needs rosbags. Exit status
0 when every check holds, 1 otherwise, each failed check on a line of its own.
"""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys
import tempfile

import numpy as np

from urdf_state_publisher.description import parse_description
from urdf_state_publisher.recorded.frames import tf2_name
from urdf_state_publisher.recorded.input import open_bag
from urdf_state_publisher.wire.tf import read_tf_message

TOLERANCE = 1e-12


def run_command(*arguments: str) -> str:
    """The command's standard output; it must exit 0."""
    result = subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                             *arguments],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f'urdf_state_publisher_bag {" ".join(arguments)} exited '
                         f'{result.returncode}:\n{result.stderr}')
    return result.stdout


def transforms(path: Path, topic: str) -> dict[tuple[int, str], tuple[str, np.ndarray]]:
    """(stamp in ns, child frame as tf2 reads it) -> (parent, xyz and xyzw) of a bag's topic."""
    bag = open_bag(path)
    ids = {t.id for t in bag.topics if t.topic == topic}
    found = {}
    for topic_id, _, data in bag.messages():
        if topic_id in ids:
            for t in read_tf_message(data):
                found[t.sec * 1_000_000_000 + t.nanosec, tf2_name(t.child)] = (
                    tf2_name(t.parent), np.array(t.values))
    bag.close()
    return found


def same_pose(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal translations and quaternions, component for component (sign included)."""
    return bool(np.abs(a - b).max() <= TOLERANCE)


def check_panda(recordings: Path, output: Path) -> list[str]:
    folder = recordings / 'franka_panda_moveit'
    bag, urdf = folder / 'rosbagFrankaPanda.bag', folder / 'panda.urdf'
    run_command(str(bag), str(output), '--description', str(urdf))
    recorded, computed = transforms(bag, '/tf'), transforms(output, '/tf')
    both = recorded.keys() & computed.keys()
    failures = []
    if not both:
        failures.append('panda: no stamp and frame in both the recorded and the computed /tf')
    wrong = [key for key in both if recorded[key][0] != computed[key][0]
             or not same_pose(recorded[key][1], computed[key][1])]
    if wrong:
        failures.append(f'panda: {len(wrong)} of {len(both)} transforms differ from the '
                        f'recorded ones, first {sorted(wrong)[0]}')
    description = parse_description(urdf.read_text())
    robot_frames = {j.child for j in description.joints}
    static = transforms(output, '/tf_static')
    if ('world', 'panda_link0') not in {(p, c) for (_, c), (p, _) in static.items()}:
        failures.append("panda: MoveIt's world -> panda_link0 is not kept on /tf_static")
    # The robot's frames: computed, each once; the recorded ones all replaced.
    fixed = {j.child for j in description.joints if j.type.value == 'fixed'}
    static_children = [c for (_, c) in static]
    if sorted(c for c in static_children if c in robot_frames) != sorted(fixed):
        failures.append('panda: the output /tf_static does not hold each fixed joint of the '
                        'robot once')
    recorded_static = transforms(bag, '/tf_static')
    if not {c for (_, c) in recorded_static} & fixed:
        failures.append('panda: the recording has no transform of the robot on /tf_static')
    # Fixed transforms are stamped when published: compared by frame.
    recorded_fixed = {c: pose for (_, c), pose in recorded_static.items() if c in fixed}
    computed_fixed = {c: pose for (_, c), pose in static.items() if c in fixed}
    wrong_fixed = sorted(c for c in recorded_fixed.keys() & computed_fixed.keys()
                         if recorded_fixed[c][0] != computed_fixed[c][0]
                         or not same_pose(recorded_fixed[c][1], computed_fixed[c][1]))
    if wrong_fixed:
        failures.append(f'panda: {len(wrong_fixed)} of {len(recorded_fixed)} fixed transforms '
                        f'differ from the recorded ones, first {wrong_fixed[0]}')
    print(f'panda: {len(both)} transforms at the same stamp and frame, '
          f'{len(both) - len(wrong)} equal; {len(recorded_fixed)} fixed transforms, '
          f'{len(recorded_fixed) - len(wrong_fixed)} equal')
    return failures


def check_pr2(recordings: Path, output: Path) -> list[str]:
    folder = recordings / 'pr2_rsp_test'
    bag, urdf = folder / 'joint_states_indexed.bag', folder / 'pr2.urdf'
    summary = run_command(str(bag), str(output), '--description', str(urdf))
    description = parse_description(urdf.read_text())
    moving = {j.child for j in description.joints if j.type.value != 'fixed'}
    named = set()
    source = open_bag(bag)
    from rosbags.typesys import get_typestore, Stores

    typestore = get_typestore(Stores.ROS2_JAZZY)
    for _, _, data in source.messages():
        named.update(typestore.deserialize_cdr(data, 'sensor_msgs/msg/JointState').name)
    source.close()
    expected = {j.child for j in description.joints if j.name in named and j.child in moving}
    computed = {child for (_, child) in transforms(output, '/tf')}
    failures = []
    if not expected or not expected <= computed:
        failures.append(f'pr2: no /tf for {sorted(expected - computed)[:5]}')
    unknown = ('r_gripper_float_joint', 'l_gripper_float_joint')
    if not all(name in summary for name in unknown):
        failures.append(f'pr2: the summary does not name {", ".join(unknown)}')
    print(f'pr2: /tf for {len(expected & computed)} of the {len(expected)} moving joints the '
          'recording names; unknown joints reported')
    return failures


def main() -> int:
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_dir():
        print('usage: python tools/recordings_check.py RECORDINGS_DIR (make recordings-check '
              'RECORDINGS=DIR): the folder that holds franka_panda_moveit/ and pr2_rsp_test/',
              file=sys.stderr)
        return 2
    recordings = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as scratch:
        failures = (check_panda(recordings, Path(scratch) / 'panda')
                    + check_pr2(recordings, Path(scratch) / 'pr2'))
    for failure in failures:
        print('FAILED:', failure)
    print('recordings: ' + ('all checks hold' if not failures else f'{len(failures)} failed'))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
