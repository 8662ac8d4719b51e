"""parse_description: robot-description text to a validated Description, each element read once."""

from __future__ import annotations

from typing import Any

from urdf_state_publisher.description.joints import read_joint
from urdf_state_publisher.description.messages import (
    describe_exception,
    line_of,
    lines_of,
    shorten,
    Warnings,
)
from urdf_state_publisher.description.model_state import read_model_state
from urdf_state_publisher.description.origins import read_origin
from urdf_state_publisher.description.records import Description, Joint, URDF_1_1, URDF_1_2
from urdf_state_publisher.description.sensors import read_sensors
from urdf_state_publisher.description.shapes import check_shapes
from urdf_state_publisher.description.source import reading
from urdf_state_publisher.description.unknown_names import check_children, ExtensionTally
from urdf_state_publisher.description.validation import (
    build_tree,
    check_mimics,
    soft_limit_warnings,
)
from urdf_state_publisher.description.version import read_version
from urdf_state_publisher.description.xml_safety import (
    children,
    count_children,
    parse_xml,
    strip_default_namespace,
)
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.quoting import quoted

__all__ = ['parse_description']

_READ_ROBOT_CHILDREN = ('link', 'joint', 'sensor', 'model_state')
# URDF's own, for visualisers; <gazebo> and <transmission>, other tools', are extensions.
_SKIPPED_ROBOT_CHILDREN = ('material',)
_KNOWN_ROBOT_CHILDREN = (*_READ_ROBOT_CHILDREN, *_SKIPPED_ROBOT_CHILDREN)
# The children of <link> in the URDF spec, and <origin>, which old files put in links.
_LINK_PARTS = ('visual', 'collision', 'inertial')
_KNOWN_LINK_CHILDREN = (*_LINK_PARTS, 'origin')


def parse_description(text: str | bytes) -> Description:
    """Parse and validate robot-description (URDF 1.0, 1.1 or 1.2) text.

    Raises DescriptionError, and nothing else, for anything that cannot become one tree of
    links and joints; problems that leave the model usable are returned in `warnings`.
    A <mimic> on a fixed, floating or planar joint is dropped with a warning (such a joint has
    no single position to set); a mimic whose leader is such a joint is an error. Of a link the
    kinematic model needs only the name; its unknown children are sorted as said below.
    In a URDF 1.1 document the origins of a link's visual, collision and inertial elements are
    checked as joint origins are (their geometry, a capsule included, is not read); in a 1.2
    document their sphere, box, cylinder and capsule sizes are checked too (see shapes); a 1.0
    document's link contents are not read at all. A joint's <limit> is read with the defaults
    and checks of the document's version (see joints). Of a joint, only the first of each kind of
    child is read (a repeat is warned about), and elements inside them are extensions. The axis
    of fixed and floating joints is not read.

    An unknown element or attribute is a warning when its name is a near miss of a name known
    at its place (<orgin> in a joint: "did you mean <origin>?"); any other is an extension,
    which the format lets other tools add (<gazebo>, <ros2_control>, drake:...), returned in
    `extensions` and not warned about (see unknown_names).

    Descriptions of more than MAX_DESCRIPTION_BYTES (32 MiB; as UTF-8 for str) are refused
    before parsing. At most the first 50 warnings found are kept; if there are more, a last,
    51st, warning says how many more there were ('... and N more warnings'). Extensions are
    all counted, the first 100 listed.
    """
    try:
        return _parse_description(text)
    except DescriptionError:
        raise
    except Exception as exc:  # the promise is "only DescriptionError", whatever the input
        raise DescriptionError(
            f'robot description could not be read: {describe_exception(exc)}') from exc


def _check_link_origins(element: Any, name: str, version: tuple[int, int],
                        checked: set[tuple[str | None, ...]]) -> None:
    """Check the <origin> of each visual, collision and inertial of a link, as urdfdom would.

    `checked` holds the attribute values already found valid: a description that repeats one
    visual a million times costs one check and a million set look-ups.
    """
    for part in children(element, _LINK_PARTS):
        origin = part.find('origin')
        if origin is None:
            continue
        key = (origin.get('xyz'), origin.get('rpy'), origin.get('quat_xyzw'))
        if key not in checked:
            read_origin(origin, version, f'link {quoted(name)} <{part.tag}>')
            checked.add(key)


def _read_links(elements: list[Any], version: tuple[int, int], warnings: Warnings,
                tally: ExtensionTally) -> list[str]:
    """Link names in document order; DescriptionError for a missing or repeated name."""
    by_name: dict[str, Any] = {}
    checked: set[tuple[str | None, ...]] = set()
    checked_shapes: set[tuple[str | None, ...]] = set()
    for element in elements:
        name = element.get('name')
        if not name:
            raise DescriptionError(
                f'a <link> element{line_of(element)} has no name; give every link a unique '
                'name')
        if name in by_name:
            raise DescriptionError(
                f'link {quoted(name)} is defined twice{lines_of(by_name[name], element)}; '
                'link names must be unique')
        by_name[name] = element
        if len(element):
            check_children(element, _KNOWN_LINK_CHILDREN,
                           f'/robot/link[@name={quoted(name)}]', warnings, tally)
            if version >= URDF_1_1:
                _check_link_origins(element, name, version, checked)
            if version >= URDF_1_2:
                check_shapes(element, name, checked_shapes)
    return list(by_name)


def _read_joints(elements: list[Any], version: tuple[int, int], warnings: Warnings,
                 tally: ExtensionTally) -> dict[str, Joint]:
    """Joints by name in document order; DescriptionError for a repeated name."""
    joints: dict[str, Joint] = {}
    joint_elements: dict[str, Any] = {}
    for element in elements:
        joint = read_joint(element, version, warnings, tally)
        if joint.name in joints:
            raise DescriptionError(
                f'joint {quoted(joint.name)} is defined twice'
                f'{lines_of(joint_elements[joint.name], element)}; joint names must be unique')
        joint_elements[joint.name] = element
        joints[joint.name] = joint
    return joints


def _parse_description(text: str | bytes) -> Description:
    root, source, leniency = parse_xml(text)
    with reading(source):  # the lines and namespace prefixes that messages name
        return _read_document(root, leniency)


def _read_document(root: Any, leniency: str | None) -> Description:
    strip_default_namespace(root)
    wrapper = None
    if root.tag != 'robot':
        # joint_state_publisher reads the first <robot> anywhere, and its own test robots
        # wrap it in <urdf>: one <robot> directly inside the root is read, with a warning.
        robots = root.findall('robot')
        if len(robots) != 1:
            raise DescriptionError(
                f'the root element is <{shorten(str(root.tag))}>, not <robot>; a URDF must be '
                'a <robot> document')
        wrapper, root = root.tag, robots[0]
    robot_name = root.get('name')
    if robot_name is None:
        raise DescriptionError('the <robot> element has no name attribute; add name="..."')
    version = read_version(root.get('version'))

    warnings = Warnings()
    if leniency is not None:
        warnings.append(leniency)
    if wrapper is not None:
        warnings.append(
            f'<robot> is inside <{shorten(str(wrapper))}>{line_of(root)}: read as '
            'joint_state_publisher reads it, but robot_state_publisher refuses such a '
            'document; make <robot> the root element')
    tally = ExtensionTally()
    # Children filtered by tag in C: junk elements cost no Python time.
    by_tag: dict[str, list[Any]] = {tag: [] for tag in _READ_ROBOT_CHILDREN}
    for child in children(root, _READ_ROBOT_CHILDREN):
        by_tag[child.tag].append(child)
    known = count_children(root, _KNOWN_ROBOT_CHILDREN)
    near_misses = check_children(root, _KNOWN_ROBOT_CHILDREN, '<robot>', warnings, tally,
                                 known_count=known)
    try:
        return _read_robot(robot_name, version, by_tag, warnings, tally)
    except DescriptionError as error:
        # A misspelt <link> or <joint> is often what breaks the tree (two root links).
        if not near_misses:
            raise
        raise DescriptionError(f'{error} ({next(iter(near_misses.values()))})') from None


def _read_robot(robot_name: str, version: tuple[int, int], by_tag: dict[str, list[Any]],
                warnings: Warnings, tally: ExtensionTally) -> Description:
    if not by_tag['link']:
        raise DescriptionError(
            f'robot {quoted(robot_name)} has no links; a URDF needs at least one')

    links = _read_links(by_tag['link'], version, warnings, tally)
    joints = check_mimics(_read_joints(by_tag['joint'], version, warnings, tally), warnings)
    root_link, ordered_links, ordered_joints = build_tree(links, list(joints.values()))
    warnings.extend(soft_limit_warnings(ordered_joints))
    sensors = read_sensors(by_tag['sensor'], set(links), version, warnings, tally)
    model_state = read_model_state(by_tag['model_state'], joints, warnings, tally)
    return Description(
        name=robot_name,
        root=root_link,
        links=tuple(ordered_links),
        joints=tuple(ordered_joints),
        sensors=tuple(sensors),
        model_state=model_state,
        warnings=warnings.result(),
        version=f'{version[0]}.{version[1]}',
        extensions=tally.result(),
    )
