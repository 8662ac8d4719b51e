"""The one reader of <joint> elements; mimic relations are checked once all joints are known."""

from __future__ import annotations

import math
from typing import Any

from urdf_state_publisher.description.messages import line_of, Warnings
from urdf_state_publisher.description.origins import (
    ORIGIN_ATTRIBUTES,
    ORIGIN_WITHOUT,
    read_origin,
)
from urdf_state_publisher.description.records import (
    Joint,
    JointType,
    Limits,
    Mimic,
    SoftLimits,
    URDF_1_2,
)
from urdf_state_publisher.description.unknown_names import (
    check_attributes,
    check_children,
    ExtensionTally,
)
from urdf_state_publisher.description.values import finite, finite_attribute, numbers
from urdf_state_publisher.description.xml_safety import children, count_children
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.geometry import Vector3
from urdf_state_publisher.quoting import cut, quoted

__all__ = ['read_joint']

# The axis means nothing for these; CAD exporters write <axis xyz="0 0 0"/> on fixed joints.
_AXISLESS_TYPES = frozenset({JointType.FIXED, JointType.FLOATING})
_TYPE_NAMES = ', '.join(t.value for t in JointType)
_JOINT_ATTRIBUTES = frozenset({'name', 'type'})
_POSITION_LIMITED_TYPES = (JointType.REVOLUTE, JointType.PRISMATIC)
# The <limit> attributes URDF 1.2 adds (urdfdom 6, ros/urdfdom#212); in older documents they
# are extensions, as before (urdfdom 6 ignores them there, with a warning). With effort and
# velocity, each is optional in 1.2 and must not be negative.
_LIMIT_1_2_ATTRIBUTES = ('acceleration', 'deceleration', 'jerk')
_NON_NEGATIVE_1_2 = ('effort', 'velocity', *_LIMIT_1_2_ATTRIBUTES)
# The children of <joint> in the URDF spec and the attributes of each; none has children.
# <dynamics> and <calibration> are only checked: the kinematic model does not use them.
_CHILD_ATTRIBUTES = {
    'origin': ORIGIN_ATTRIBUTES,
    'parent': frozenset({'link'}),
    'child': frozenset({'link'}),
    'axis': frozenset({'xyz'}),
    'limit': frozenset({'lower', 'upper', 'effort', 'velocity'}),
    'dynamics': frozenset({'damping', 'friction'}),
    'safety_controller': frozenset(
        {'soft_lower_limit', 'soft_upper_limit', 'k_position', 'k_velocity'}),
    'calibration': frozenset({'rising', 'falling'}),
    'mimic': frozenset({'joint', 'multiplier', 'offset'}),
}
_CHILD_TAGS = tuple(_CHILD_ATTRIBUTES)
_CHILD_ATTRIBUTES_1_2 = {
    **_CHILD_ATTRIBUTES,
    'limit': _CHILD_ATTRIBUTES['limit'].union(_LIMIT_1_2_ATTRIBUTES),
}
_DEFAULT_AXIS = (1.0, 0.0, 0.0)
# The attributes that may be left out, and the value they then have.
_DEFAULTS = {
    'limit': {'lower': 0.0, 'upper': 0.0},
    'safety_controller': {'soft_lower_limit': 0.0, 'soft_upper_limit': 0.0, 'k_position': 0.0},
    'mimic': {'multiplier': 1.0, 'offset': 0.0},
    'dynamics': {'damping': 0.0, 'friction': 0.0},
    'calibration': {'rising': 0.0, 'falling': 0.0},
}
# What leaving out a child or an attribute means, for the warning about a near miss of its name
# (leaving out a required one is an error, which names the near miss).
_CHILD_WITHOUT = {
    'origin': "the joint's origin is the identity",
    'axis': 'the axis is ' + ' '.join(f'{c:g}' for c in _DEFAULT_AXIS),
    'limit': 'the joint has no limits',
    'safety_controller': 'the joint has no soft limits',
    'mimic': 'the joint mimics no other joint',
}
_AXISLESS_CHILD_WITHOUT = {k: v for k, v in _CHILD_WITHOUT.items() if k != 'axis'}
_ATTRIBUTE_WITHOUT = {
    'origin': ORIGIN_WITHOUT,
    **{tag: {attribute: f'{attribute} is {value:g}' for attribute, value in defaults.items()}
       for tag, defaults in _DEFAULTS.items()},
}
# In URDF 1.2 (ros/urdfdom#249): the defaults of urdfdom_headers 3's JointLimits.
_ATTRIBUTE_WITHOUT_1_2 = {
    **_ATTRIBUTE_WITHOUT,
    'limit': {'lower': 'lower is -inf (revolute and prismatic joints need it)',
              'upper': 'upper is inf (revolute and prismatic joints need it)',
              **{attribute: f'{attribute} is not limited' for attribute in (
                  'effort', 'velocity', 'acceleration', 'jerk')},
              'deceleration': 'deceleration is the acceleration'},
}


def _children(element: Any, joint_type: JointType, name: str, version: tuple[int, int],
              warnings: Warnings, tally: ExtensionTally) -> tuple[dict[str, Any], str | None]:
    """The first child of each known tag, and the first near miss of a known name, if any.

    Warns about repeats and near misses of known names; records the other unknown names as
    extensions.
    """
    path = f'/robot/joint[@name={quoted(name)}]'
    near_misses = check_attributes(element, _JOINT_ATTRIBUTES, path, warnings, tally)
    first: dict[str, Any] = {}
    counts: dict[str, int] = {}
    # Filtered by tag in C: a joint padded with a million junk elements costs little.
    for child in children(element, _CHILD_TAGS):
        tag = child.tag
        counts[tag] = counts.get(tag, 0) + 1
        if tag in first:
            continue
        first[tag] = child
    if joint_type in _AXISLESS_TYPES:
        first.pop('axis', None)
        counts.pop('axis', None)
    if version >= URDF_1_2:
        known_attributes, attribute_without = _CHILD_ATTRIBUTES_1_2, _ATTRIBUTE_WITHOUT_1_2
    else:
        known_attributes, attribute_without = _CHILD_ATTRIBUTES, _ATTRIBUTE_WITHOUT
    for tag, child in first.items():
        near_misses.update(check_attributes(
            child, known_attributes[tag], f'{path}/{tag}', warnings, tally,
            without=attribute_without.get(tag, {})))
        if len(child):  # no child of <joint> has children in the spec
            check_children(child, (), f'{path}/{tag}', warnings, tally)
    for tag, count in counts.items():
        if count > 1:
            warnings.append(
                f'joint {quoted(name)}: <{tag}> is given {count} times; the first one is used')
    known = count_children(element, _CHILD_TAGS)
    without = _AXISLESS_CHILD_WITHOUT if joint_type in _AXISLESS_TYPES else _CHILD_WITHOUT
    near_misses.update(check_children(element, _CHILD_TAGS, path, warnings, tally,
                                      known_count=known, without=without))
    return first, next(iter(near_misses.values()), None)


def _value(children: dict[str, Any], tag: str, attribute: str, context: str) -> float:
    """The number in `attribute` of child `tag`; its default if absent, else an error."""
    return finite_attribute(children[tag], attribute, f'{context} <{tag}>',
                            _DEFAULTS.get(tag, {}).get(attribute))


def _link_reference(reference: Any | None, tag: str, context: str) -> str:
    if reference is None:
        raise DescriptionError(f'{context} has no <{tag}> element; add <{tag} link="..."/>')
    link = reference.get('link')
    if not link:
        raise DescriptionError(f'{context}: <{tag}> has no link attribute; add link="..."')
    return link


def _axis(element: Any, context: str) -> Vector3:
    where = f'{context} <axis>'
    text = element.get('xyz')
    if text is None:
        raise DescriptionError(f'{where} has no xyz attribute; add xyz="x y z"')
    x, y, z = numbers(text, 3, where, 'xyz')
    # hypot overflows to inf near the largest double: scale to a largest |component| of 1.
    scale = max(abs(x), abs(y), abs(z))
    if not scale > 0.0:
        raise DescriptionError(f'{where}: xyz has zero length; give a non-zero direction')
    x, y, z = x / scale, y / scale, z / scale
    length = math.hypot(x, y, z)
    return (x / length, y / length, z / length)


def read_joint(element: Any, version: tuple[int, int], warnings: Warnings,
               tally: ExtensionTally) -> Joint:
    """Read one <joint> with the spec's defaults; DescriptionError naming the joint if invalid.

    The error also names the joint's first near miss of a known name, which is often its cause
    (<limits> on a revolute joint).
    """
    name = element.get('name')
    if not name:
        raise DescriptionError(
            f'a <joint> element{line_of(element)} has no name; give every joint a unique name')
    context = f'joint {quoted(name)}'
    type_text = element.get('type')
    if type_text is None:
        raise DescriptionError(f'{context} has no type attribute; use one of {_TYPE_NAMES}')
    try:
        joint_type = JointType(type_text)
    except ValueError:
        raise DescriptionError(
            f'{context} has unknown type {quoted(type_text)}; use one of {_TYPE_NAMES}') from None
    children, near_miss = _children(element, joint_type, name, version, warnings, tally)
    try:
        return _joint(name, joint_type, children, version, context)
    except DescriptionError as error:
        if near_miss is None:
            raise
        raise DescriptionError(f'{error} ({near_miss})') from None


def _limits_before_1_2(children: dict[str, Any], context: str) -> Limits:
    """<limit> in a URDF 1.0 or 1.1 document: effort and velocity required, lower and upper 0.

    The attributes URDF 1.2 adds are not read: they are extensions here (no limit: inf).
    """
    effort = _value(children, 'limit', 'effort', context)
    return Limits(lower=_value(children, 'limit', 'lower', context),
                  upper=_value(children, 'limit', 'upper', context),
                  velocity=_value(children, 'limit', 'velocity', context), effort=effort)


def _finite_or_none(text: str) -> float | None:
    """The finite number `text` holds, as values.finite reads it; None if none."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _limits_1_2(element: Any, joint_type: JointType, context: str) -> Limits:
    """<limit> in a URDF 1.2 document, as urdfdom 6.0.0 reads it (ros/urdfdom#212, #249).

    Every attribute is optional, but a revolute or prismatic joint needs lower and upper. Left
    out: lower -inf, upper inf, effort, velocity, acceleration and jerk inf (no limit),
    deceleration the acceleration. Effort, velocity, acceleration, deceleration and jerk must not
    be negative; upper must not be below lower, whatever the joint type.
    """
    def where() -> str:  # the line is found only for a message: it costs a pass over the text
        return f'{context} <limit>{line_of(element)}'

    if joint_type in _POSITION_LIMITED_TYPES:
        for attribute in ('lower', 'upper'):
            if attribute not in element.attrib:
                raise DescriptionError(
                    f'{where()} has no {attribute} attribute, which a {joint_type.value} joint '
                    f'needs in URDF 1.2; add {attribute}="..."')
    values = {}
    for attribute in ('lower', 'upper', *_NON_NEGATIVE_1_2):
        text = element.get(attribute)
        if text is None:
            continue
        value = _finite_or_none(text)
        if value is None:
            finite(text, where(), attribute)  # raises, saying what the text is
        values[attribute] = value
    lower, upper = values.get('lower', -math.inf), values.get('upper', math.inf)
    if lower > upper:
        raise DescriptionError(
            f'{where()}: upper ({upper}) is smaller than lower ({lower}); swap them')
    for attribute in _NON_NEGATIVE_1_2:
        value = values.get(attribute, 0.0)
        if value < 0.0:
            text = element.get(attribute)
            raise DescriptionError(
                f'{context} <limit {attribute}="{cut(text)}">{line_of(element)}: {attribute} '
                f'cannot be negative; give 0 or more, or leave {attribute} out for no limit')
    acceleration = values.get('acceleration', math.inf)
    return Limits(lower=lower, upper=upper, velocity=values.get('velocity', math.inf),
                  effort=values.get('effort', math.inf), acceleration=acceleration,
                  deceleration=values.get('deceleration', acceleration),
                  jerk=values.get('jerk', math.inf))


def _joint(name: str, joint_type: JointType, children: dict[str, Any],
           version: tuple[int, int], context: str) -> Joint:
    parent = _link_reference(children.get('parent'), 'parent', context)
    child = _link_reference(children.get('child'), 'child', context)
    origin = read_origin(children.get('origin'), version, context)
    axis_element = children.get('axis')
    axis = _DEFAULT_AXIS if axis_element is None else _axis(axis_element, context)

    limits = None
    if 'limit' in children and version >= URDF_1_2:
        limits = _limits_1_2(children['limit'], joint_type, context)
    elif 'limit' in children:
        limits = _limits_before_1_2(children, context)
    if joint_type in _POSITION_LIMITED_TYPES:
        if limits is None:
            raise DescriptionError(
                f'{context} is {joint_type.value} but has no <limit>; add '
                '<limit lower="..." upper="..." effort="..." velocity="..."/>')
        if limits.lower > limits.upper:
            raise DescriptionError(
                f'{context}: <limit> lower ({limits.lower}) is greater than upper '
                f'({limits.upper}); swap them')

    soft_limits = None
    if 'safety_controller' in children:
        soft_limits = SoftLimits(
            soft_lower=_value(children, 'safety_controller', 'soft_lower_limit', context),
            soft_upper=_value(children, 'safety_controller', 'soft_upper_limit', context),
            k_position=_value(children, 'safety_controller', 'k_position', context),
            k_velocity=_value(children, 'safety_controller', 'k_velocity', context))

    mimic = None
    if 'mimic' in children:
        element_mimic, where = children['mimic'], f'{context} <mimic>'
        leader = element_mimic.get('joint')
        if not leader:
            raise DescriptionError(f'{where} has no joint attribute; add joint="..."')
        mimic = Mimic(joint=leader,
                      multiplier=_value(children, 'mimic', 'multiplier', context),
                      offset=_value(children, 'mimic', 'offset', context))

    for tag in ('dynamics', 'calibration'):
        if tag in children:
            for attribute in sorted(_CHILD_ATTRIBUTES[tag]):
                _value(children, tag, attribute, context)

    return Joint(name=name, type=joint_type, parent=parent, child=child, origin=origin,
                 axis=axis, limits=limits, soft_limits=soft_limits, mimic=mimic)
