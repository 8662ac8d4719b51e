"""Load robot-description text (URDF, or xacro expanded to URDF) into a validated Description."""

from collections.abc import Iterable, Iterator, Mapping, Sequence
import contextlib
from dataclasses import dataclass, field
import enum
import math
import os
from pathlib import Path
import re
import threading
from typing import Any

from lxml import etree
from urdf_parser_py import urdf as urdfdom
from urdf_parser_py import xml_reflection
from urdf_parser_py.xml_reflection import core as xml_reflection_core
import xacro

from urdf_state_publisher.errors import DescriptionError

__all__ = [
    'Description',
    'DescriptionError',
    'Joint',
    'JointType',
    'Limits',
    'MAX_DESCRIPTION_BYTES',
    'Mimic',
    'Origin',
    'Sensor',
    'SoftLimits',
    'expand_xacro',
    'parse_description',
    'read_description_file',
]

Vector3 = tuple[float, float, float]


class JointType(enum.Enum):
    """The joint types of the URDF spec."""

    REVOLUTE = 'revolute'
    CONTINUOUS = 'continuous'
    PRISMATIC = 'prismatic'
    FIXED = 'fixed'
    FLOATING = 'floating'
    PLANAR = 'planar'

    @property
    def single_value(self) -> bool:
        """Whether one number (a position) describes the joint's state."""
        return self in _SINGLE_VALUE_TYPES


_SINGLE_VALUE_TYPES = frozenset({JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC})
# The axis means nothing for these; CAD exporters write <axis xyz="0 0 0"/> on fixed joints.
_AXISLESS_TYPES = frozenset({JointType.FIXED, JointType.FLOATING})
_TYPE_NAMES = ', '.join(t.value for t in JointType)


@dataclass(frozen=True)
class Origin:
    """A URDF <origin>: translation, then fixed-axis roll, pitch, yaw; identity by default."""

    xyz: Vector3 = (0.0, 0.0, 0.0)
    rpy: Vector3 = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Limits:
    """A joint's <limit>; lower and upper only mean something for revolute and prismatic joints."""

    lower: float
    upper: float
    velocity: float
    effort: float


@dataclass(frozen=True)
class SoftLimits:
    """A joint's <safety_controller>; absent soft limits are 0, as the spec and urdfdom say."""

    soft_lower: float
    soft_upper: float
    k_position: float
    k_velocity: float


@dataclass(frozen=True)
class Mimic:
    """A <mimic>, as written: this joint's value = multiplier * value of `joint` + offset."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class Joint:
    """A URDF joint with the spec's defaults applied and its axis of unit length."""

    name: str
    type: JointType
    parent: str
    child: str
    origin: Origin
    axis: Vector3
    limits: Limits | None
    soft_limits: SoftLimits | None
    mimic: Mimic | None


@dataclass(frozen=True)
class Sensor:
    """A URDF <sensor>: a frame attached to a link (its camera or ray details are not kept).

    The sensor spec has no `type` attribute: `type` is that attribute when a file has one,
    else the tag of the sensor's first other child element (`camera`, `ray`), else ''.
    """

    name: str
    type: str
    parent: str
    origin: Origin
    update_rate: float | None


@dataclass(frozen=True)
class Description:
    """A validated robot description: one tree of links, joints parent-before-child."""

    name: str
    root: str
    links: tuple[str, ...]
    joints: tuple[Joint, ...]
    sensors: tuple[Sensor, ...]
    model_state: dict[str, float]
    warnings: tuple[str, ...]
    _joints_by_name: dict[str, Joint] = field(
        init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        """Index the joints by name for `joint()`."""
        object.__setattr__(self, '_joints_by_name', {j.name: j for j in self.joints})

    def joint(self, name: str) -> Joint:
        """Return the joint called `name`; KeyError if there is none."""
        try:
            return self._joints_by_name[name]
        except KeyError:
            raise KeyError(f'robot {self.name!r} has no joint {name!r}') from None


# Quoted names and values are cut to this length so that an error never carries much of a
# (possibly hostile) document.
_MAX_QUOTED = 80
_MAX_DETAIL = 300
# Lists in messages (roots, cycles, ...) name at most this many items, then say how many more.
_MAX_LISTED = 10
# At most this many warnings are kept; the rest are counted in one last warning.
_MAX_WARNINGS = 50

# The largest description accepted, in bytes (UTF-8 for text). Real URDFs, meshes aside (they
# live in separate files), are well under a few MB; anything bigger is refused before parsing.
MAX_DESCRIPTION_BYTES = 32 * 1024 * 1024

# urdfdom_py reports unknown elements through a module-level hook: swapping it is only safe
# while no other thread does the same.
_URDFDOM_HOOK_LOCK = threading.Lock()
# xacro keeps its file stack and arguments in module globals.
_XACRO_LOCK = threading.Lock()

_DECLARATIONS = tuple(
    marker.encode(encoding)
    for marker in ('<!DOCTYPE', '<!ENTITY')
    for encoding in ('utf-8', 'utf-16-le', 'utf-16-be', 'utf-32-le', 'utf-32-be'))
_DECLARATION_MESSAGE = (
    'robot description contains a DOCTYPE/entity declaration; URDF needs neither; remove it')


def _cut(value: object) -> str:
    """A name or value for a message, cut short if long."""
    text = str(value)
    return text if len(text) <= _MAX_QUOTED else text[:_MAX_QUOTED] + '...'


def _q(value: object) -> str:
    """Quote a name or value for a message, cut short if long."""
    return repr(_cut(value))


def _listing(items: Sequence[str]) -> str:
    """Comma-separated items, at most _MAX_LISTED of them, then how many more there are."""
    listed = ', '.join(items[:_MAX_LISTED])
    rest = len(items) - _MAX_LISTED
    return listed if rest <= 0 else f'{listed}, ... and {rest} more'


class _Warnings:
    """Keeps the first _MAX_WARNINGS warnings and only counts the rest.

    A hostile description can hold millions of junk elements: storing a warning for each
    would cost gigabytes, and the node logs every warning it is given.
    """

    def __init__(self) -> None:
        self._kept: list[str] = []
        self._dropped = 0

    @property
    def room(self) -> int:
        """How many more warnings are kept; callers may skip formatting the others."""
        return _MAX_WARNINGS - len(self._kept)

    def append(self, message: str) -> None:
        if self.room > 0:
            self._kept.append(message)
        else:
            self._dropped += 1

    def extend(self, messages: Iterable[str]) -> None:
        for message in messages:
            self.append(message)

    def count(self, number: int) -> None:
        """Count warnings that are not formatted because they would be dropped anyway."""
        self._dropped += number

    def result(self) -> tuple[str, ...]:
        """The kept warnings, then one that says how many more there were, if any."""
        if not self._dropped:
            return tuple(self._kept)
        return (*self._kept, f'... and {self._dropped} more warnings')


def _shorten(text: str) -> str:
    text = ' '.join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL] + '...'


def _describe_exception(exc: BaseException) -> str:
    if isinstance(exc, xml_reflection_core.ParseError):
        inner = exc.e
        detail = str(inner) or type(inner).__name__
        return _shorten(f'{detail} (at {exc.path})')
    return _shorten(f'{type(exc).__name__}: {exc}' if str(exc) else type(exc).__name__)


def _warn_unknown_children(parent: Any, known: tuple[str, ...], where: str,
                           warnings: _Warnings, known_count: int | None = None) -> None:
    """Warn about children of `parent` whose tag is not `known`; count those not kept.

    Python only visits children until the warnings are full: lxml counts in C, so that a
    million junk elements cost little time.
    """
    if known_count is None:
        known_count = sum(1 for _ in parent.iterchildren(*known))
    # The parser drops comments and processing instructions and refuses entities: every
    # child is an element.
    unknown = len(parent) - known_count
    if unknown <= 0:
        return
    shown = 0
    if warnings.room > 0:
        for child in parent:
            if child.tag in known or not isinstance(child.tag, str):
                continue
            warnings.append(f'unknown element <{_shorten(child.tag)}> in {where} ignored')
            shown += 1
            if warnings.room <= 0 or shown == unknown:
                break
    warnings.count(unknown - shown)


def _line(element: Any) -> str:
    line = getattr(element, 'sourceline', None)
    return f' (line {line})' if line else ''


def _lines(first: Any, second: Any) -> str:
    lines = [getattr(e, 'sourceline', None) for e in (first, second)]
    return f' (lines {lines[0]} and {lines[1]})' if all(lines) else ''


# --------------------------------------------------------------------------- XML loading

def _check_size(size: int) -> None:
    if size > MAX_DESCRIPTION_BYTES:
        raise DescriptionError(
            f'robot description is {size} bytes ({size / 2**20:.1f} MiB); more than the '
            f'{MAX_DESCRIPTION_BYTES // 2**20} MiB this node accepts')


def _parse_xml(text: str | bytes) -> Any:
    """Parse with a parser that loads nothing from outside and expands no entities."""
    if isinstance(text, str):
        # A character takes at least one byte: refuse before copying what is surely too big.
        _check_size(len(text))
        if not text.strip():
            raise DescriptionError('robot description is empty')
        try:
            data = text.encode('utf-8')
        except UnicodeEncodeError:
            raise DescriptionError(
                'robot description is not valid Unicode text (it contains a lone surrogate)'
            ) from None
        _check_size(len(data))
        # The text is already decoded: make lxml ignore whatever encoding its declaration names.
        encoding = 'utf-8'
    elif isinstance(text, (bytes, bytearray, memoryview)):
        _check_size(text.nbytes if isinstance(text, memoryview) else len(text))
        data = bytes(text)
        if not data.strip():
            raise DescriptionError('robot description is empty')
        encoding = None
    else:
        raise DescriptionError(
            f'robot description must be str or bytes, not {type(text).__name__}')
    # Refusing before parsing means that no entity is ever looked at, whatever libxml2 does.
    if any(marker in data for marker in _DECLARATIONS):
        raise DescriptionError(_DECLARATION_MESSAGE)
    parser = etree.XMLParser(
        encoding=encoding, resolve_entities=False, no_network=True, load_dtd=False,
        huge_tree=False, remove_comments=True, remove_pis=True, collect_ids=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise DescriptionError(f'robot description is not well-formed XML: {_shorten(str(exc))}'
                               ) from None
    except (ValueError, LookupError) as exc:
        raise DescriptionError(f'robot description could not be parsed: {_shorten(str(exc))}'
                               ) from None
    if root is None:
        raise DescriptionError('robot description is empty')
    docinfo = root.getroottree().docinfo
    # Catches what the byte scan cannot see, e.g. a declaration in an encoding it does not try.
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise DescriptionError(_DECLARATION_MESSAGE)
    if any(True for _ in root.iter(etree.Entity)):
        raise DescriptionError(_DECLARATION_MESSAGE)
    return root


def _strip_default_namespace(root: Any) -> None:
    """Make `<robot xmlns="...">` documents read like plain ones, as C++ urdfdom does."""
    if not isinstance(root.tag, str) or not root.tag.startswith('{'):
        return
    namespace, _, local = root.tag[1:].partition('}')
    if local != 'robot':
        return
    prefix = '{' + namespace + '}'
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag.startswith(prefix):
            element.tag = element.tag[len(prefix):]
    etree.cleanup_namespaces(root)


# --------------------------------------------------------------------------- urdfdom_py

def _urdfdom_message(message: str, context: str) -> str:
    match = re.fullmatch(r'Unknown (tag|attribute) "(.*)" in (.*)', message, re.DOTALL)
    if match:
        # The path urdfdom_py gives already names the element, e.g. /robot/joint[@name='j'].
        kind = 'element' if match.group(1) == 'tag' else 'attribute'
        what = f'<{match.group(2)}>' if kind == 'element' else repr(match.group(2))
        return _shorten(f'unknown {kind} {what} in {match.group(3)} ignored')
    return _shorten(f'{context}: {message}')


@contextlib.contextmanager
def _urdfdom_messages(sink: list[str]) -> Iterator[None]:
    """Send what urdfdom_py would print on stderr to `sink`."""
    def hook(message: object) -> None:
        sink.append(str(message))

    with _URDFDOM_HOOK_LOCK:
        # urdf.py calls the hook through the package, core.py through its own module.
        saved = (xml_reflection_core.on_error, xml_reflection.on_error)
        xml_reflection_core.on_error = hook
        xml_reflection.on_error = hook
        try:
            yield
        finally:
            xml_reflection_core.on_error, xml_reflection.on_error = saved


def _urdfdom_read(cls: type, element: Any, parent_path: Any) -> Any:
    path = xml_reflection_core.Path(element.tag, parent=parent_path)
    return cls.from_xml(element, path)


# --------------------------------------------------------------------------- values

def _finite(value: Any, context: str, attribute: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DescriptionError(
            f'{context}: {attribute} is not a number ({_q(value)})') from None
    if not math.isfinite(number):
        raise DescriptionError(
            f'{context}: {attribute} is not finite ({number}); give a finite number')
    return number


def _vector3(values: Any, context: str, attribute: str) -> Vector3:
    values = list(values) if values is not None else []
    if len(values) != 3:
        raise DescriptionError(f'{context}: {attribute} needs 3 numbers, got {len(values)}')
    x, y, z = (_finite(v, context, attribute) for v in values)
    return (x, y, z)


def _parse_vector3(text: str | None, context: str, attribute: str) -> Vector3:
    if text is None:
        return (0.0, 0.0, 0.0)
    try:
        values = [float(part) for part in text.split()]
    except ValueError:
        raise DescriptionError(
            f'{context}: {attribute} is not 3 numbers ({_q(text)})') from None
    return _vector3(values, context, attribute)


def _check_no_quaternion(origin_element: Any, context: str) -> None:
    if origin_element is not None and origin_element.get('quat_xyzw') is not None:
        raise DescriptionError(
            f'{context}: <origin quat_xyzw=...> (URDF 1.1) is not supported; use rpy')


# --------------------------------------------------------------------------- joints

def _link_reference(element: Any, tag: str, context: str) -> str:
    reference = element.find(tag)
    if reference is None:
        raise DescriptionError(f'{context} has no <{tag}> element; add <{tag} link="..."/>')
    link = reference.get('link')
    if not link:
        raise DescriptionError(f'{context}: <{tag}> has no link attribute; add link="..."')
    return link


# The children of <joint> that urdfdom_py reads; each has attributes only.
_JOINT_CHILDREN = ('origin', 'parent', 'child', 'axis', 'limit', 'dynamics',
                   'safety_controller', 'calibration', 'mimic')


def _joint_for_urdfdom(element: Any, joint_type: JointType, name: str,
                       warnings: _Warnings) -> Any:
    """The <joint> to give urdfdom_py; warnings about what it leaves out.

    A joint whose children are all ones urdfdom_py reads, at most one of each and none with
    children of its own, is given as it is. Any other is given as a copy with the joint's
    attributes and the first of each such child, without that child's children: urdfdom_py
    spends microseconds on each element it is given, so a joint padded with a million junk
    elements would block for a minute. The axis of fixed and floating joints is left out.
    """
    drop_axis = joint_type in _AXISLESS_TYPES
    if len(element) <= len(_JOINT_CHILDREN):
        children = list(element.iterchildren(*_JOINT_CHILDREN))
        tags = [child.tag for child in children]
        if (len(children) == len(element) == len(set(tags))
                and not (drop_axis and 'axis' in tags)
                and not any(len(child) for child in children)):
            return element  # the usual case: nothing to trim
    path = f'/robot/joint[@name={_q(name)}]'
    source = etree.Element(element.tag, dict(element.attrib))
    counts: dict[str, int] = {}
    for child in element.iterchildren(*_JOINT_CHILDREN):
        tag = child.tag
        counts[tag] = counts.get(tag, 0) + 1
        if counts[tag] > 1 or (tag == 'axis' and drop_axis):
            continue
        etree.SubElement(source, tag, dict(child.attrib))
        if len(child):
            extra = f' (and {len(child) - 1} more)' if len(child) > 1 else ''
            warnings.append(
                f'unknown element <{_shorten(child[0].tag)}> in {path}/{tag} ignored{extra}')
    for tag, count in counts.items():
        if count > 1:
            warnings.append(
                f'joint {_q(name)}: <{tag}> is given {count} times; the first one is used')
    _warn_unknown_children(element, _JOINT_CHILDREN, path, warnings, sum(counts.values()))
    return source


def _read_joint(element: Any, robot_path: Any, warnings: _Warnings) -> Joint:
    """Read one <joint>; mimic relations are checked later, once all joints are known."""
    name = element.get('name')
    if not name:
        raise DescriptionError(
            f'a <joint> element{_line(element)} has no name; give every joint a unique name')
    context = f'joint {_q(name)}'
    type_text = element.get('type')
    if type_text is None:
        raise DescriptionError(f'{context} has no type attribute; use one of {_TYPE_NAMES}')
    try:
        joint_type = JointType(type_text)
    except ValueError:
        raise DescriptionError(
            f'{context} has unknown type {_q(type_text)}; use one of {_TYPE_NAMES}') from None
    parent = _link_reference(element, 'parent', context)
    child = _link_reference(element, 'child', context)
    origin_element = element.find('origin')
    _check_no_quaternion(origin_element, context)

    if joint_type not in _AXISLESS_TYPES:
        axis_element = element.find('axis')
        if axis_element is not None and axis_element.get('xyz') is None:
            raise DescriptionError(f'{context}: <axis> has no xyz attribute; add xyz="x y z"')
    source = _joint_for_urdfdom(element, joint_type, name, warnings)
    try:
        parsed = _urdfdom_read(urdfdom.Joint, source, robot_path)
    except DescriptionError:
        raise
    except Exception as exc:  # urdfdom_py raises anything from AttributeError to bare Exception
        raise DescriptionError(f'{context} is invalid: {_describe_exception(exc)}') from None

    origin = Origin()
    if parsed.origin is not None:
        origin = Origin(
            xyz=_vector3(parsed.origin.xyz, f'{context} <origin>', 'xyz'),
            rpy=_vector3(parsed.origin.rpy, f'{context} <origin>', 'rpy'))

    axis: Vector3 = (1.0, 0.0, 0.0)
    if joint_type not in _AXISLESS_TYPES and parsed.axis is not None:
        x, y, z = _vector3(parsed.axis, f'{context} <axis>', 'xyz')
        # hypot overflows to inf near the largest double: scale to a largest |component| of 1.
        scale = max(abs(x), abs(y), abs(z))
        if not scale > 0.0:
            raise DescriptionError(
                f'{context}: <axis> xyz has zero length; give a non-zero direction')
        x, y, z = x / scale, y / scale, z / scale
        length = math.hypot(x, y, z)
        axis = (x / length, y / length, z / length)

    limits = None
    if parsed.limit is not None:
        limit_context = f'{context} <limit>'
        limits = Limits(
            lower=_finite(parsed.limit.lower, limit_context, 'lower'),
            upper=_finite(parsed.limit.upper, limit_context, 'upper'),
            velocity=_finite(parsed.limit.velocity, limit_context, 'velocity'),
            effort=_finite(parsed.limit.effort, limit_context, 'effort'))
    if joint_type in (JointType.REVOLUTE, JointType.PRISMATIC):
        if limits is None:
            raise DescriptionError(
                f'{context} is {joint_type.value} but has no <limit>; add '
                '<limit lower="..." upper="..." effort="..." velocity="..."/>')
        if limits.lower > limits.upper:
            raise DescriptionError(
                f'{context}: <limit> lower ({limits.lower}) is greater than upper '
                f'({limits.upper}); swap them')

    soft_limits = None
    if parsed.safety_controller is not None:
        safety = parsed.safety_controller
        safety_context = f'{context} <safety_controller>'
        soft_limits = SoftLimits(
            soft_lower=_finite(safety.soft_lower_limit, safety_context, 'soft_lower_limit'),
            soft_upper=_finite(safety.soft_upper_limit, safety_context, 'soft_upper_limit'),
            k_position=_finite(safety.k_position, safety_context, 'k_position'),
            k_velocity=_finite(safety.k_velocity, safety_context, 'k_velocity'))

    mimic = None
    if parsed.mimic is not None:
        mimic_context = f'{context} <mimic>'
        multiplier = 1.0 if parsed.mimic.multiplier is None else parsed.mimic.multiplier
        offset = 0.0 if parsed.mimic.offset is None else parsed.mimic.offset
        if not parsed.mimic.joint:
            raise DescriptionError(f'{mimic_context} has no joint attribute; add joint="..."')
        mimic = Mimic(
            joint=str(parsed.mimic.joint),
            multiplier=_finite(multiplier, mimic_context, 'multiplier'),
            offset=_finite(offset, mimic_context, 'offset'))

    return Joint(name=name, type=joint_type, parent=parent, child=child, origin=origin,
                 axis=axis, limits=limits, soft_limits=soft_limits, mimic=mimic)


def _without_mimic(joint: Joint) -> Joint:
    return Joint(name=joint.name, type=joint.type, parent=joint.parent, child=joint.child,
                 origin=joint.origin, axis=joint.axis, limits=joint.limits,
                 soft_limits=joint.soft_limits, mimic=None)


def _check_mimics(joints: dict[str, Joint], warnings: _Warnings) -> dict[str, Joint]:
    """Drop mimics that change nothing and refuse those that cannot be evaluated."""
    result = {}
    for name, joint in joints.items():
        if joint.mimic is not None and not joint.type.single_value:
            warnings.append(
                f'joint {_q(name)} is {joint.type.value} and has a <mimic>; mimic dropped: a '
                f'{joint.type.value} joint has no single position to set')
            joint = _without_mimic(joint)
        result[name] = joint
    for name, joint in result.items():
        if joint.mimic is None:
            continue
        leader = result.get(joint.mimic.joint)
        if leader is None:
            raise DescriptionError(
                f'joint {_q(name)} mimics joint {_q(joint.mimic.joint)}, which does not exist; '
                'fix its <mimic joint="...">')
        if leader.name != name and not leader.type.single_value:
            raise DescriptionError(
                f'joint {_q(name)} mimics joint {_q(leader.name)}, which is '
                f'{leader.type.value}; a mimic needs a revolute, continuous or prismatic leader')
    # Each joint has at most one leader, so following leaders either ends or loops.
    done: set[str] = set()
    for start in result:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = start
        while current is not None and current not in done:
            if current in on_path:
                loop = path[path.index(current):]
                if len(loop) <= _MAX_LISTED:
                    shown = ' -> '.join(_cut(n) for n in loop + [current])
                else:
                    shown = (' -> '.join(_cut(n) for n in loop[:_MAX_LISTED])
                             + f' -> ... ({len(loop)} joints in the cycle)')
                raise DescriptionError(
                    f'mimic cycle: {shown} (each joint mimics the next); '
                    'a mimic chain must end at a joint that mimics nobody')
            path.append(current)
            on_path.add(current)
            mimic = result[current].mimic
            current = mimic.joint if mimic is not None else None
        done.update(path)
    return result


# --------------------------------------------------------------------------- tree

def _format_cycle(loop: list[str], parent_joint: dict[str, Joint]) -> str:
    """Describe links found walking up (child before parent) as a loop from parent to child."""
    loop = list(reversed(loop))
    parts = []
    for index, link in enumerate(loop[:_MAX_LISTED]):
        next_link = loop[(index + 1) % len(loop)]
        parts += [f'link {_q(link)}', f'joint {_q(parent_joint[next_link].name)}']
    if len(loop) <= _MAX_LISTED:
        parts.append(f'link {_q(loop[0])}')
    else:
        parts.append(f'... ({len(loop)} links in the cycle)')
    return ' -> '.join(parts)


def _find_cycle(links: list[str], parent_joint: dict[str, Joint]) -> str | None:
    """Return a description of the first kinematic loop, walking up from each link."""
    # Each link has at most one parent, so walking up either reaches a root or loops.
    done: set[str] = set()
    for start in links:
        chain: list[str] = []
        position: dict[str, int] = {}
        link: str | None = start
        while link is not None and link not in done:
            if link in position:
                return _format_cycle(chain[position[link]:], parent_joint)
            position[link] = len(chain)
            chain.append(link)
            joint = parent_joint.get(link)
            link = joint.parent if joint is not None else None
        done.update(chain)
    return None


def _build_tree(links: list[str], joints: list[Joint]) -> tuple[str, list[str], list[Joint]]:
    """Check that links and joints form one tree; return root, links and joints in order."""
    link_set = set(links)
    parent_joint: dict[str, Joint] = {}
    children: dict[str, list[Joint]] = {}
    for joint in joints:
        for role, link in (('parent', joint.parent), ('child', joint.child)):
            if link not in link_set:
                raise DescriptionError(
                    f'joint {_q(joint.name)} has {role} link {_q(link)}, which does not '
                    f"exist; add <link name={_q(link)}/> or fix the joint's <{role}>")
        previous = parent_joint.get(joint.child)
        if previous is not None:
            raise DescriptionError(
                f'link {_q(joint.child)} is the child of two joints, {_q(previous.name)} and '
                f'{_q(joint.name)}; a link can have only one parent joint')
        parent_joint[joint.child] = joint
        children.setdefault(joint.parent, []).append(joint)

    roots = [link for link in links if link not in parent_joint]
    cycle = _find_cycle(links, parent_joint)
    if not roots:
        raise DescriptionError(
            'no root link: every link is a child of a joint (cycle?): '
            f'{cycle or "no cycle found"}')
    if cycle is not None:
        raise DescriptionError(
            f'kinematic cycle: {cycle}; a URDF must be a tree: remove one of these joints')
    if len(roots) > 1:
        listed = _listing([_q(root) for root in sorted(roots)])
        raise DescriptionError(
            f"{len(roots)} root links (links that are no joint's child): {listed}; a URDF "
            'needs exactly one root link: connect them, e.g. with a fixed joint')

    root = roots[0]
    ordered_links = [root]
    ordered_joints: list[Joint] = []
    # Depth-first, children in document order, so chains read as they do in the file.
    stack = list(reversed(children.get(root, [])))
    while stack:
        joint = stack.pop()
        ordered_joints.append(joint)
        ordered_links.append(joint.child)
        stack.extend(reversed(children.get(joint.child, [])))
    if len(ordered_links) != len(links):
        unreached = sorted(link_set.difference(ordered_links))
        raise DescriptionError(
            'links not connected to root link ' + _q(root) + ': '
            + _listing([_q(link) for link in unreached]))
    return root, ordered_links, ordered_joints


# --------------------------------------------------------------------------- soft limits

def _soft_limit_warnings(joints: Iterable[Joint]) -> list[str]:
    warnings = []
    for joint in joints:
        if joint.type not in (JointType.REVOLUTE, JointType.PRISMATIC):
            continue
        if joint.limits is None or joint.soft_limits is None:
            continue
        lower = max(joint.limits.lower, joint.soft_limits.soft_lower)
        upper = min(joint.limits.upper, joint.soft_limits.soft_upper)
        if lower > upper:
            warnings.append(
                f'joint {_q(joint.name)}: <limit> [{joint.limits.lower}, {joint.limits.upper}] '
                f'and <safety_controller> soft limits [{joint.soft_limits.soft_lower}, '
                f'{joint.soft_limits.soft_upper}] leave no common range (soft limits that are '
                'not written default to 0); check soft_lower_limit and soft_upper_limit')
    return warnings


# --------------------------------------------------------------------------- sensors

def _read_sensors(elements: list[Any], links: set[str], warnings: _Warnings) -> list[Sensor]:
    sensors: list[Sensor] = []
    names: set[str] = set()
    for element in elements:
        name = element.get('name')
        if not name:
            warnings.append(f'a <sensor>{_line(element)} has no name; sensor skipped')
            continue
        context = f'sensor {_q(name)}'
        parent_element = element.find('parent')
        if parent_element is None:
            warnings.append(f'{context} has no <parent link="..."/>; sensor skipped')
            continue
        parent = parent_element.get('link')
        if parent is None:
            if parent_element.get('joint') is not None:
                warnings.append(
                    f'{context} uses <parent joint={_q(parent_element.get("joint"))}>, which is '
                    'not standard URDF; use <parent link="..."/>; sensor skipped')
            else:
                warnings.append(f'{context}: <parent> has no link attribute; sensor skipped')
            continue
        if parent not in links:
            warnings.append(
                f'{context} has parent link {_q(parent)}, which does not exist; sensor skipped')
            continue
        if name in links:
            warnings.append(
                f'{context} has the name of a link; sensor skipped: the link already defines '
                'that frame')
            continue
        origin_element = element.find('origin')
        try:
            _check_no_quaternion(origin_element, context)
            origin = Origin()
            if origin_element is not None:
                origin = Origin(
                    xyz=_parse_vector3(origin_element.get('xyz'), f'{context} <origin>', 'xyz'),
                    rpy=_parse_vector3(origin_element.get('rpy'), f'{context} <origin>', 'rpy'))
        except DescriptionError as exc:
            warnings.append(f'{exc}; sensor skipped')
            continue
        update_rate = None
        rate_text = element.get('update_rate')
        if rate_text is not None:
            try:
                update_rate = _finite(rate_text, context, 'update_rate')
            except DescriptionError as exc:
                warnings.append(f'{exc}; update_rate ignored')
        sensor_type = element.get('type')
        if sensor_type is None:
            sensor_type = next((child.tag for child in element if isinstance(child.tag, str)
                                and child.tag not in ('parent', 'origin')), '')
        if name in names:
            warnings.append(f'{context} is defined twice; the first one is kept')
            continue
        names.add(name)
        sensors.append(Sensor(name=name, type=sensor_type, parent=parent, origin=origin,
                              update_rate=update_rate))
    return sensors


# --------------------------------------------------------------------------- model_state

def _read_model_state(elements: list[Any], joints: dict[str, Joint],
                      warnings: _Warnings) -> dict[str, float]:
    positions: dict[str, float] = {}
    for model_state in elements:
        _warn_unknown_children(model_state, ('joint_state',), '<model_state>', warnings)
        for element in model_state.iterchildren('joint_state'):
            name = element.get('joint')
            if not name:
                warnings.append(
                    f'a <model_state> <joint_state>{_line(element)} has no joint attribute; '
                    'ignored')
                continue
            context = f'<model_state> position of joint {_q(name)}'
            joint = joints.get(name)
            if joint is None:
                warnings.append(f'{context}: no such joint; ignored')
                continue
            if not joint.type.single_value:
                warnings.append(
                    f'{context}: the joint is {joint.type.value}, it has no single position; '
                    'ignored')
                continue
            values = (element.get('position') or '').split()
            if not values:
                warnings.append(f'{context} is missing; ignored')
                continue
            try:
                position = float(values[0])
            except ValueError:
                warnings.append(f'{context} is not a number ({_q(values[0])}); ignored')
                continue
            if not math.isfinite(position):
                warnings.append(f'{context} is not finite ({position}); ignored')
                continue
            if name in positions:
                warnings.append(f'{context} is given twice; the first one is kept')
                continue
            positions[name] = position
    return positions


# --------------------------------------------------------------------------- entry points

_READ_ROBOT_CHILDREN = ('link', 'joint', 'sensor', 'model_state')
_SKIPPED_ROBOT_CHILDREN = ('material', 'gazebo', 'transmission')
_KNOWN_ROBOT_CHILDREN = (*_READ_ROBOT_CHILDREN, *_SKIPPED_ROBOT_CHILDREN)
# What urdfdom_py reads in a <link> (origin is a deprecated extra of it).
_KNOWN_LINK_CHILDREN = ('visual', 'collision', 'inertial', 'origin')


def parse_description(text: str | bytes) -> Description:
    """Parse and validate robot-description (URDF) text.

    Raises DescriptionError, and nothing else, for anything that cannot become one tree of
    links and joints; problems that leave the model usable are returned in `warnings`.
    A <mimic> on a fixed, floating or planar joint is dropped with a warning (such a joint has
    no single position to set); a mimic whose leader is such a joint is an error. Of a link only
    the name is read (the kinematic model needs nothing else): its visual, collision and
    inertial contents are not parsed nor checked; an unknown child element of a link is
    warned about. Of a joint, only the first of each kind of child is read (a repeat is warned
    about), and elements inside them are ignored, with a warning. The axis of fixed and
    floating joints is not read.

    Descriptions of more than MAX_DESCRIPTION_BYTES (32 MiB; as UTF-8 for str) are refused
    before parsing. At most the first 50 warnings found are kept; if there are more, a last,
    51st, warning says how many more there were ('... and N more warnings').
    """
    try:
        return _parse_description(text)
    except DescriptionError:
        raise
    except Exception as exc:  # the promise is "only DescriptionError", whatever the input
        raise DescriptionError(
            f'robot description could not be read: {_describe_exception(exc)}') from exc


def _parse_description(text: str | bytes) -> Description:
    root = _parse_xml(text)
    _strip_default_namespace(root)
    if root.tag != 'robot':
        raise DescriptionError(
            f'the root element is <{_shorten(str(root.tag))}>, not <robot>; a URDF must be a '
            '<robot> document')
    robot_name = root.get('name')
    if robot_name is None:
        raise DescriptionError('the <robot> element has no name attribute; add name="..."')

    warnings = _Warnings()
    # lxml filters children by tag in C: junk elements cost no Python time.
    by_tag: dict[str, list[Any]] = {tag: [] for tag in _READ_ROBOT_CHILDREN}
    for child in root.iterchildren(*_READ_ROBOT_CHILDREN):
        by_tag[child.tag].append(child)
    known = sum(map(len, by_tag.values())) + sum(
        1 for _ in root.iterchildren(*_SKIPPED_ROBOT_CHILDREN))
    _warn_unknown_children(root, _KNOWN_ROBOT_CHILDREN, '<robot>', warnings, known)
    if not by_tag['link']:
        raise DescriptionError(f'robot {_q(robot_name)} has no links; a URDF needs at least one')

    robot_path = xml_reflection_core.Path('robot')
    link_elements: dict[str, Any] = {}
    joint_elements: dict[str, Any] = {}
    joints: dict[str, Joint] = {}
    messages: list[str] = []
    with _urdfdom_messages(messages):
        for element in by_tag['link']:
            name = element.get('name')
            if not name:
                raise DescriptionError(
                    f'a <link> element{_line(element)} has no name; give every link a unique '
                    'name')
            if name in link_elements:
                raise DescriptionError(
                    f'link {_q(name)} is defined twice{_lines(link_elements[name], element)}; '
                    'link names must be unique')
            # Only the name matters for kinematics: the contents are not handed to urdfdom_py,
            # which takes ~1 s per MB of <visual> elements only to produce warnings.
            link_elements[name] = element
            if len(element):
                _warn_unknown_children(element, _KNOWN_LINK_CHILDREN,
                                       f'/robot/link[@name={_q(name)}]', warnings)
        for element in by_tag['joint']:
            first = len(messages)
            joint = _read_joint(element, robot_path, warnings)
            if joint.name in joints:
                raise DescriptionError(
                    f'joint {_q(joint.name)} is defined twice'
                    f'{_lines(joint_elements[joint.name], element)}; joint names must be unique')
            joint_elements[joint.name] = element
            joints[joint.name] = joint
            warnings.extend(_urdfdom_message(m, f'joint {_q(joint.name)}')
                            for m in messages[first:])
    links = list(link_elements)

    joints = _check_mimics(joints, warnings)
    root_link, ordered_links, ordered_joints = _build_tree(links, list(joints.values()))
    warnings.extend(_soft_limit_warnings(ordered_joints))
    sensors = _read_sensors(by_tag['sensor'], set(links), warnings)
    model_state = _read_model_state(by_tag['model_state'], joints, warnings)
    return Description(
        name=robot_name,
        root=root_link,
        links=tuple(ordered_links),
        joints=tuple(ordered_joints),
        sensors=tuple(sensors),
        model_state=model_state,
        warnings=warnings.result(),
    )


def _xacro_mappings(arguments: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    if isinstance(arguments, Mapping):
        return {str(name): str(value) for name, value in arguments.items()}
    if isinstance(arguments, str):
        arguments = [arguments]
    mappings = {}
    for argument in arguments:
        name, separator, value = str(argument).partition(':=')
        if not separator or not name:
            raise DescriptionError(
                f'xacro argument {_q(argument)} is not of the form name:=value')
        mappings[name] = value
    return mappings


def expand_xacro(path: str | os.PathLike,
                 arguments: Mapping[str, str] | Sequence[str] = ()) -> str:
    """Expand a .xacro file (arguments as a mapping or 'name:=value' strings) to URDF text."""
    path_text = os.fspath(path)
    mappings = _xacro_mappings(arguments)
    if not os.path.isfile(path_text):
        raise DescriptionError(f'xacro file {path_text!r} does not exist or is not a file')
    with _XACRO_LOCK:
        try:
            document = xacro.process_file(path_text, mappings=mappings)
            return document.toprettyxml(indent='  ')
        except Exception as exc:  # xacro raises its own errors, expat's, eval's, ...
            raise DescriptionError(
                f'xacro could not expand {path_text!r}: {_describe_exception(exc)}') from None


def _decode(data: bytes, path_text: str) -> str:
    try:
        return data.decode('utf-8-sig')
    except UnicodeDecodeError:
        pass
    declared = re.match(rb'\s*<\?xml[^>]*encoding\s*=\s*["\']([A-Za-z0-9._-]+)["\']', data)
    if declared:
        try:
            return data.decode(declared.group(1).decode('ascii'))
        except (LookupError, UnicodeDecodeError):
            pass
    raise DescriptionError(
        f'robot description file {path_text!r} is not UTF-8 text (nor in the encoding its XML '
        'declaration names)')


def read_description_file(path: str | os.PathLike,
                          arguments: Mapping[str, str] | Sequence[str] = ()) -> str:
    """Text of a .urdf file, or the expansion of a .xacro (by suffix `.xacro`).

    Raises DescriptionError naming the path when the file is missing or unreadable, when xacro
    fails (with xacro's message), or when arguments are given for a file that is not xacro.
    """
    path_text = os.fspath(path)
    if path_text.lower().endswith('.xacro'):
        return expand_xacro(path_text, arguments)
    if arguments:
        raise DescriptionError(
            f'arguments were given for {path_text!r}, but only .xacro files take arguments')
    try:
        data = Path(path_text).read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DescriptionError(
            f'cannot read robot description file {path_text!r}: {reason}') from None
    return _decode(data, path_text)
