"""The one reader of <origin> elements, for every element that has one."""

from __future__ import annotations

from typing import Any

from urdf_state_publisher.description.records import Origin, URDF_1_1
from urdf_state_publisher.description.values import numbers
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.geometry import normalized, rpy_from_quaternion

__all__ = ['ORIGIN_ATTRIBUTES', 'ORIGIN_WITHOUT', 'read_origin']

ORIGIN_ATTRIBUTES = frozenset({'xyz', 'rpy', 'quat_xyzw'})
_ZERO = (0.0, 0.0, 0.0)
# What leaving out an attribute means, for the warning about a near miss of its name.
ORIGIN_WITHOUT = {name: f'{name} is ' + ' '.join(f'{v:g}' for v in _ZERO)
                  for name in ('xyz', 'rpy')}


def read_origin(element: Any | None, version: tuple[int, int], context: str) -> Origin:
    """The <origin> `element` (None: identity) of `context` in a document of URDF `version`.

    As urdfdom reads it: a quaternion of any non-zero length stands for its unit quaternion.
    Stricter than urdfdom, which ignores quat_xyzw in a 1.0 document and reads a zero
    quaternion as the identity: both are errors here, as is a number that is not finite.
    """
    if element is None:
        return Origin()
    where = f'{context} <origin>'
    xyz_text = element.get('xyz')
    rpy_text = element.get('rpy')
    quaternion_text = element.get('quat_xyzw')
    xyz = _ZERO if xyz_text is None else numbers(xyz_text, 3, where, 'xyz')
    if quaternion_text is None:
        rpy = _ZERO if rpy_text is None else numbers(rpy_text, 3, where, 'rpy')
        return Origin(xyz=xyz, rpy=rpy)
    if version < URDF_1_1:
        raise DescriptionError(
            f'{where}: quat_xyzw needs URDF 1.1, and this document is URDF 1.0 (it has no '
            'version="1.1" on <robot>); add version="1.1" to <robot>, or write the rotation '
            'as rpy')
    if rpy_text is not None:
        raise DescriptionError(
            f'{where} has both rpy and quat_xyzw; give the rotation once: remove one of them')
    quaternion = numbers(quaternion_text, 4, where, 'quat_xyzw')
    if not any(quaternion):
        raise DescriptionError(
            f'{where}: quat_xyzw is zero, which is no rotation; write "0 0 0 1" for none')
    return Origin(xyz=xyz, rpy=rpy_from_quaternion(normalized(quaternion)),
                  quat_xyzw=quaternion)
