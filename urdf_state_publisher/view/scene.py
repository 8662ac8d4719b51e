"""What the view draws and where: link visuals read from a URDF, links posed from transforms.

Pure: no ROS, no browser. The view poses each link as RViz's RobotModel display does, from the
transforms it receives (/tf and /tf_static) and not from joint values, so it shows whatever
publishes them. A link whose chain to the fixed frame (the root link) is incomplete is not
posed: the view hides it, where RViz reports "No transform".
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import os
from pathlib import Path
import xml.etree.ElementTree as ElementTree

from urdf_state_publisher.description import JointType
from urdf_state_publisher.geometry import Pose

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from urdf_state_publisher.kinematics.model import RobotModel

__all__ = ['MeshPathError', 'TransformTree', 'Visual', 'joint_values', 'read_visuals',
           'resolve_mesh']

# The colour of a visual without a material: RViz's default grey.
DEFAULT_RGBA = (0.8, 0.8, 0.8, 1.0)


@dataclass(frozen=True)
class Visual:
    """One <visual> of a link: its shape in the link's frame, and its colour.

    `shape` is 'box' (size: x, y, z), 'cylinder' and 'capsule' (size: radius, length; along z),
    'sphere' (size: radius,) or 'mesh' (mesh: the file's URI as written, size: the scale).
    """

    link: str
    origin: Pose
    shape: str
    size: tuple[float, ...]
    rgba: tuple[float, float, float, float] = DEFAULT_RGBA
    mesh: str = ''
    # Whether the URDF gave a colour: a mesh without one keeps its own (a DAE's materials).
    colored: bool = False


class MeshPathError(ValueError):
    """A mesh URI that names no readable file; the message names the URI and what to do."""


def _floats(text: str | None, default: tuple[float, ...]) -> tuple[float, ...]:
    if text is None:
        return default
    return tuple(float(word) for word in text.split())


def _origin(element: ElementTree.Element) -> Pose:
    origin = element.find('origin')
    if origin is None:
        return Pose()
    return Pose.from_xyz_rpy(_floats(origin.get('xyz'), (0.0, 0.0, 0.0)),
                             _floats(origin.get('rpy'), (0.0, 0.0, 0.0)))


def _rgba(material: ElementTree.Element | None,
          named: Mapping[str, tuple[float, float, float, float]]):
    """The colour of a <material> (its <color>, else the robot-level material of its name)."""
    if material is None:
        return None
    color = material.find('color')
    if color is not None and color.get('rgba'):
        return _floats(color.get('rgba'), DEFAULT_RGBA)
    return named.get(material.get('name', ''))


def read_visuals(urdf: str) -> tuple[Visual, ...]:
    """Every link's visuals, in document order (the description is already validated)."""
    robot = ElementTree.fromstring(urdf.encode() if isinstance(urdf, str) else urdf)
    named = {}
    for material in robot.findall('material'):
        rgba = _rgba(material, {})
        if rgba is not None:
            named[material.get('name', '')] = rgba
    visuals = []
    for link in robot.findall('link'):
        for visual in link.findall('visual'):
            geometry = visual.find('geometry')
            shape = None if geometry is None or len(geometry) == 0 else geometry[0]
            if shape is None:
                continue
            rgba = _rgba(visual.find('material'), named)
            common = dict(link=link.get('name'), origin=_origin(visual),
                          rgba=rgba or DEFAULT_RGBA, colored=rgba is not None)
            if shape.tag == 'box':
                size = _floats(shape.get('size'), (0.0, 0.0, 0.0))
            elif shape.tag in ('cylinder', 'capsule'):
                size = (float(shape.get('radius', 0)), float(shape.get('length', 0)))
            elif shape.tag == 'sphere':
                size = (float(shape.get('radius', 0)),)
            elif shape.tag == 'mesh':
                scale = _floats(shape.get('scale'), (1.0, 1.0, 1.0))
                visuals.append(Visual(shape='mesh', size=scale, mesh=shape.get('filename', ''),
                                      **common))
                continue
            else:
                continue  # a shape of a later URDF version: nothing to draw it with
            visuals.append(Visual(shape=shape.tag, size=size, **common))
    return tuple(visuals)


def resolve_mesh(uri: str, package_paths: Mapping[str, str],
                 find_package: Callable[[str], str] | None,
                 description_dir: str | None = None) -> Path:
    """The file a mesh URI names: package://NAME/PATH, file://PATH, or a path.

    A package's directory comes from `package_paths` (--package-path NAME=DIR) first, then
    from `find_package` (the ament index's lookup; None without ROS). A relative path is
    relative to the description file's directory. MeshPathError when no file is found.
    """
    if uri.startswith('package://'):
        name, _, rest = uri[len('package://'):].partition('/')
        if name in package_paths:
            base = package_paths[name]
        elif find_package is not None:
            try:
                base = find_package(name)
            except LookupError:
                base = None
        else:
            base = None
        if base is None:
            raise MeshPathError(
                f'mesh {uri!r}: package {name!r} is not found; give its directory with '
                f'--package-path {name}=DIR')
        path = Path(base) / rest
    elif uri.startswith('file://'):
        path = Path(uri[len('file://'):])
    else:
        path = Path(description_dir or os.curdir) / uri
    if not path.is_file():
        raise MeshPathError(f'mesh {uri!r}: no file at {str(path)!r}')
    return path


class TransformTree:
    """The latest transform of each child frame, as tf2's buffer keeps them (without history).

    A frame has one parent: a transform to a frame from a new parent replaces the old one.
    """

    def __init__(self):
        self._parent: dict[str, tuple[str, Pose]] = {}

    def set(self, parent: str, child: str, pose: Pose) -> None:
        """Record `child`'s pose in `parent`; a non-finite one is ignored (nothing draws NaN)."""
        if not all(math.isfinite(v) for v in (*pose.translation, *pose.rotation)):
            return
        self._parent[child] = (parent, pose)

    def snapshot(self) -> dict[str, tuple[str, Pose]]:
        """The tree as it stands, for `restore`."""
        return dict(self._parent)

    def restore(self, snapshot: dict[str, tuple[str, Pose]]) -> None:
        """The tree as it stood at `snapshot` (a bag's timeline jumped back)."""
        self._parent = dict(snapshot)

    def pose(self, frame: str, fixed: str) -> Pose | None:
        """Pose of `frame` in `fixed`, if a chain of transforms leads from one to the other."""
        pose = Pose()
        seen = set()
        while frame != fixed:
            if frame in seen or frame not in self._parent:
                return None
            seen.add(frame)
            parent, step = self._parent[frame]
            pose = step * pose
            frame = parent
        return pose

    def relative(self, child: str, parent: str, fixed: str) -> Pose | None:
        """Pose of `child` in `parent`: up `child`'s chain, else through both ones' to `fixed`.

        None if neither way is complete (as tf2's lookup between two frames of one tree).
        """
        pose = self.pose(child, parent)
        if pose is None:
            below, above = self.pose(child, fixed), self.pose(parent, fixed)
            if below is not None and above is not None:
                pose = above.inverse() * below
        return pose

    def transform(self, parent: str, child: str) -> Pose | None:
        """The latest transform of `child` if its parent is `parent`."""
        entry = self._parent.get(child)
        return entry[1] if entry is not None and entry[0] == parent else None


def joint_values(model: RobotModel, tree: TransformTree, frame_prefix: str = ''
                 ) -> dict[str, float]:
    """The value of each single-value joint, read back from its transform (as received).

    A revolute or continuous joint's angle about its axis, a prismatic joint's travel along it:
    the view shows what the transforms say, whoever published them. The frames are the links'
    names after `frame_prefix` (robot_state_publisher's parameter of that name).
    """
    values = {}
    for name in model.scalar_joints:
        joint = model.joint(name)
        pose = tree.transform(frame_prefix + joint.parent, frame_prefix + joint.child)
        if pose is None:
            continue
        motion = model.joint_pose(name, 0.0).inverse() * pose
        if joint.type is JointType.PRISMATIC:
            values[name] = sum(a * t for a, t in zip(joint.axis, motion.translation))
        else:
            x, y, z, w = motion.rotation
            along = joint.axis[0] * x + joint.axis[1] * y + joint.axis[2] * z
            values[name] = 2.0 * math.atan2(along, w)
            values[name] = math.remainder(values[name], 2.0 * math.pi)
    return values
