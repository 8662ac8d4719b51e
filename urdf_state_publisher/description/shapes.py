"""The shapes of link visuals and collisions, checked as urdfdom 6 checks them in URDF 1.2.

urdfdom 6.0.0 (ros/urdfdom#242) refuses, from URDF 1.2 on only, a <sphere>, <box>, <cylinder>
or <capsule> whose radius, size or length is not a positive finite number. It reads the first
element of each visual's and collision's first <geometry>, and so does this check. The
kinematic model needs no shape: nothing else of them is read (a mesh's scale may be zero or
negative in urdfdom 6 too).
"""

from __future__ import annotations

import math
from typing import Any

from urdf_state_publisher.description.messages import line_of
from urdf_state_publisher.description.values import numbers
from urdf_state_publisher.description.xml_safety import children
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.quoting import cut, quoted

__all__ = ['check_shapes']

# Per shape, its attributes; each holds one number but a box's size, which holds three.
_SHAPE_ATTRIBUTES = {
    'sphere': ('radius',),
    'box': ('size',),
    'cylinder': ('radius', 'length'),
    'capsule': ('radius', 'length'),
}
_COUNTS = {'size': 3}
_LINK_SHAPE_PARTS = ('visual', 'collision')


def check_shapes(element: Any, name: str, checked: set[tuple[str | None, ...]]) -> None:
    """DescriptionError for the first shape of link `name` that URDF 1.2 refuses.

    `checked` holds the shapes already found valid, as attribute values: a description that
    repeats one visual a million times costs one check and a million set look-ups.
    """
    for part in children(element, _LINK_SHAPE_PARTS):
        geometry = part.find('geometry')
        if geometry is None or not len(geometry):
            continue
        shape = geometry[0]
        attributes = _SHAPE_ATTRIBUTES.get(shape.tag)
        if attributes is None:
            continue
        key = (shape.tag, *map(shape.get, attributes))
        if key not in checked:
            _check_shape(shape, attributes, f'link {quoted(name)} <{part.tag}>')
            checked.add(key)


def _positive(text: str, count: int) -> bool:
    """Whether `text` is `count` finite numbers greater than 0, as values.numbers reads them."""
    parts = text.split()
    if len(parts) != count:
        return False
    try:
        values = [float(part) for part in parts]
    except ValueError:
        return False
    return all(math.isfinite(value) and value > 0.0 for value in values)


def _check_shape(shape: Any, attributes: tuple[str, ...], context: str) -> None:
    for attribute in attributes:
        count = _COUNTS.get(attribute, 1)
        text = shape.get(attribute)
        if text is not None and _positive(text, count):
            continue
        # An error: only now is the line looked up (a pass over the whole text).
        where = f'{context} <{shape.tag}>{line_of(shape)}'
        if text is None:
            raise DescriptionError(f'{where} has no {attribute} attribute; add {attribute}="..."')
        numbers(text, count, where, attribute)  # raises for a wrong count or a non-number
        what = 'every size' if count > 1 else f'the {attribute}'
        raise DescriptionError(
            f'{context} <{shape.tag} {attribute}="{cut(text)}">{line_of(shape)}: '
            f'{attribute} must be greater than 0 in URDF 1.2; make {what} positive')
