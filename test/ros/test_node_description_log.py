"""What the node logs about its description at start, in its own process over real DDS.

A correct ros2_control + Gazebo description starts without a WARN line, with one INFO line that
counts its extensions; one misspelt element inside a joint gives exactly one WARN line, with
the suggestion.
"""

from pathlib import Path
import re

from node_fixtures import wait_until

GAZEBO_ARM = Path(__file__).resolve().parents[1] / 'fixtures' / 'gazebo_arm.urdf'
ELBOW_ORIGIN = '<origin rpy="0 0.8 0" xyz="0.35 0 0"/>'
# '[LEVEL] [stamp] [logger]: message', as rcutils formats the node's log lines.
LOG_LINE = re.compile(r'^\[(\w+)\] \[[0-9.]+\] \[[^\]]*\]: (.*)$')
EXTENSIONS = (
    'robot description: 15 extensions ignored (elements and attributes for other tools, not '
    'used for tf): <drake:collision_filter_group> ×1, <drake:gear_ratio> ×1, '
    "<drake:rotor_inertia> ×1, <gazebo> ×4, <ros2_control> ×1, <self_filter> ×1, "
    "<transmission> ×2, 'mu_coulomb' ×2, 'mu_viscous' ×2")


def start_log(start_node, probe, path: Path) -> list[tuple[str, str]]:
    """(level, message) of each log line of a node started on `path`, up to its summary."""
    node = start_node({'description_file': str(path)})
    # The summary line ('robot ...: ..., 1 warning' or 'N warnings') comes after the
    # description's WARN and INFO lines.
    wait_until(lambda: re.search(r' warnings?\n', node.output()), 20.0,
               lambda: probe.spin(0.05), 'the summary line in the node log')
    output = node.output()
    log = []
    for match in map(LOG_LINE.match, output.splitlines()):
        if match:
            log.append(match.groups())
            if match[2].startswith("robot 'gazebo_arm': root"):
                return log
    raise AssertionError(f'no summary line in the node log:\n{output}')


def warnings_at_start(start_node, probe, tmp_path, text: str) -> tuple[str, list, list]:
    """The summary line, the WARN and ERROR lines and all lines of a node started on `text`."""
    path = tmp_path / 'robot.urdf'
    path.write_text(text)
    log = start_log(start_node, probe, path)
    return log[-1][1], [entry for entry in log if entry[0] in ('WARN', 'ERROR')], log


def test_a_gazebo_style_description_starts_without_warnings(start_node, probe):
    log = start_log(start_node, probe, GAZEBO_ARM)
    assert log[-1][1].endswith(', 2 sensors, 0 warnings')
    assert [entry for entry in log if entry[0] in ('WARN', 'ERROR')] == []
    assert [entry for entry in log if 'extension' in entry[1]] == [('INFO', EXTENSIONS)]


def test_a_misspelt_element_in_a_joint_gives_one_warning_with_the_suggestion(
        start_node, probe, tmp_path):
    text = GAZEBO_ARM.read_text()
    assert text.count(ELBOW_ORIGIN) == 1
    misspelt = text.replace(ELBOW_ORIGIN, ELBOW_ORIGIN.replace('<origin', '<orgin'))
    line = 1 + misspelt[:misspelt.index('<orgin')].count('\n')
    summary, warnings, log = warnings_at_start(start_node, probe, tmp_path, misspelt)
    assert summary.endswith(', 2 sensors, 1 warning')
    assert warnings == [(
        'WARN',
        f"robot description: unknown element <orgin> (line {line}) in "
        "/robot/joint[@name='elbow_joint'] ignored, so the joint's origin is the identity: "
        'did you mean <origin>?')]
    assert [entry for entry in log if 'extension' in entry[1]] == [('INFO', EXTENSIONS)]


def test_a_description_that_is_not_xml_starts_with_one_warning_naming_the_first_place(
        start_node, probe, tmp_path):
    """A bare '&' in an attribute, then '--' in a comment, as a PR2 published it: both read."""
    text = GAZEBO_ARM.read_text()
    text = text.replace('<link name="base_link">', '<!-- swept_back--coarse.STL -->\n'
                        '<link name="base_link">', 1)
    text = text.replace('<robot name="gazebo_arm"', '<robot note="R&D" name="gazebo_arm"', 1)
    ampersand = text.index('&D')
    line = 1 + text.count('\n', 0, ampersand)
    column = ampersand - text.rfind('\n', 0, ampersand)
    summary, warnings, _ = warnings_at_start(start_node, probe, tmp_path, text)
    assert summary.endswith(', 2 sensors, 1 warning')
    assert warnings == [(
        'WARN',
        f"robot description: line {line}, column {column}: a bare '&' in attribute 'note' of "
        "<robot>, which XML forbids (write '&amp;'); read as robot_state_publisher reads it (2 "
        'such places)')]
