"""The one reader of <joint> elements; mimic relations are checked once all joints are known."""

from __future__ import annotations

import math
from typing import Any

from urdf_state_publisher.description.messages import (
    line_of,
    quoted,
    shorten,
    warn_unknown_attributes,
    warn_unknown_children,
    Warnings,
)
from urdf_state_publisher.description.origins import ORIGIN_ATTRIBUTES, read_origin
from urdf_state_publisher.description.records import Joint, JointType, Limits, Mimic, SoftLimits
from urdf_state_publisher.description.values import finite_attribute, numbers
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.geometry import Vector3

__all__ = ['read_joint']

# The axis means nothing for these; CAD exporters write <axis xyz="0 0 0"/> on fixed joints.
_AXISLESS_TYPES = frozenset({JointType.FIXED, JointType.FLOATING})
_TYPE_NAMES = ', '.join(t.value for t in JointType)
_JOINT_ATTRIBUTES = frozenset({'name', 'type'})
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


def _children(element: Any, joint_type: JointType, name: str,
              warnings: Warnings) -> dict[str, Any]:
    """The first child of each known tag; warnings about repeats, unknown tags and attributes."""
    path = f'/robot/joint[@name={quoted(name)}]'
    warn_unknown_attributes(element, _JOINT_ATTRIBUTES, path, warnings)
    first: dict[str, Any] = {}
    counts: dict[str, int] = {}
    # lxml filters by tag in C: a joint padded with a million junk elements costs little.
    for child in element.iterchildren(*_CHILD_TAGS):
        tag = child.tag
        counts[tag] = counts.get(tag, 0) + 1
        if tag in first:
            continue
        first[tag] = child
    if joint_type in _AXISLESS_TYPES:
        first.pop('axis', None)
        counts.pop('axis', None)
    for tag, child in first.items():
        warn_unknown_attributes(child, _CHILD_ATTRIBUTES[tag], f'{path}/{tag}', warnings)
        if len(child):
            extra = f' (and {len(child) - 1} more)' if len(child) > 1 else ''
            warnings.append(
                f'unknown element <{shorten(child[0].tag)}> in {path}/{tag} ignored{extra}')
    for tag, count in counts.items():
        if count > 1:
            warnings.append(
                f'joint {quoted(name)}: <{tag}> is given {count} times; the first one is used')
    known = sum(1 for _ in element.iterchildren(*_CHILD_TAGS))
    warn_unknown_children(element, _CHILD_TAGS, path, warnings, known)
    return first


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


def read_joint(element: Any, version: tuple[int, int], warnings: Warnings) -> Joint:
    """Read one <joint> with the spec's defaults; DescriptionError naming the joint if invalid."""
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
    children = _children(element, joint_type, name, warnings)
    parent = _link_reference(children.get('parent'), 'parent', context)
    child = _link_reference(children.get('child'), 'child', context)
    origin = read_origin(children.get('origin'), version, context)
    axis_element = children.get('axis')
    axis = (1.0, 0.0, 0.0) if axis_element is None else _axis(axis_element, context)

    limits = None
    if 'limit' in children:
        limit, where = children['limit'], f'{context} <limit>'
        effort = finite_attribute(limit, 'effort', where)
        limits = Limits(lower=finite_attribute(limit, 'lower', where, 0.0),
                        upper=finite_attribute(limit, 'upper', where, 0.0),
                        velocity=finite_attribute(limit, 'velocity', where), effort=effort)
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
    if 'safety_controller' in children:
        safety, where = children['safety_controller'], f'{context} <safety_controller>'
        soft_limits = SoftLimits(
            soft_lower=finite_attribute(safety, 'soft_lower_limit', where, 0.0),
            soft_upper=finite_attribute(safety, 'soft_upper_limit', where, 0.0),
            k_position=finite_attribute(safety, 'k_position', where, 0.0),
            k_velocity=finite_attribute(safety, 'k_velocity', where))

    mimic = None
    if 'mimic' in children:
        element_mimic, where = children['mimic'], f'{context} <mimic>'
        leader = element_mimic.get('joint')
        if not leader:
            raise DescriptionError(f'{where} has no joint attribute; add joint="..."')
        mimic = Mimic(joint=leader,
                      multiplier=finite_attribute(element_mimic, 'multiplier', where, 1.0),
                      offset=finite_attribute(element_mimic, 'offset', where, 0.0))

    for tag in ('dynamics', 'calibration'):
        if tag in children:
            for attribute in sorted(_CHILD_ATTRIBUTES[tag]):
                finite_attribute(children[tag], attribute, f'{context} <{tag}>', 0.0)

    return Joint(name=name, type=joint_type, parent=parent, child=child, origin=origin,
                 axis=axis, limits=limits, soft_limits=soft_limits, mimic=mimic)
