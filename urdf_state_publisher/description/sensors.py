"""The one reader of <sensor> elements: an invalid sensor is skipped with a warning."""

from __future__ import annotations

from typing import Any

from urdf_state_publisher.description.messages import line_of, Warnings
from urdf_state_publisher.description.origins import read_origin
from urdf_state_publisher.description.records import Sensor
from urdf_state_publisher.description.unknown_names import check_children, ExtensionTally
from urdf_state_publisher.description.values import finite
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.quoting import quoted

__all__ = ['read_sensors']

# The children of <sensor> that give its frame. Its others (<camera>, <ray>, ...) describe the
# sensor and are not read: only near misses of these names are warned about.
_FRAME_CHILDREN = ('parent', 'origin')
_WITHOUT = {'parent': 'the sensor is skipped', 'origin': "the sensor's origin is the identity"}


def _parent(element: Any, context: str, links: set[str], warnings: Warnings,
            misspelt: bool) -> str | None:
    """The sensor's parent link, or None after a warning that says why it is unusable.

    `misspelt`: a near miss of <parent> was warned about, which says that already.
    """
    parent_element = element.find('parent')
    if parent_element is None:
        if not misspelt:
            warnings.append(f'{context} has no <parent link="..."/>; sensor skipped')
        return None
    parent = parent_element.get('link')
    if parent is None:
        if parent_element.get('joint') is not None:
            warnings.append(
                f'{context} uses <parent joint={quoted(parent_element.get("joint"))}>, which is '
                'not standard URDF; use <parent link="..."/>; sensor skipped')
        else:
            warnings.append(f'{context}: <parent> has no link attribute; sensor skipped')
        return None
    if parent not in links:
        warnings.append(
            f'{context} has parent link {quoted(parent)}, which does not exist; sensor skipped')
        return None
    return parent


def read_sensors(elements: list[Any], links: set[str], version: tuple[int, int],
                 warnings: Warnings, tally: ExtensionTally) -> list[Sensor]:
    """The usable sensors among `elements`, in document order, the first of each name."""
    sensors: list[Sensor] = []
    names: set[str] = set()
    for element in elements:
        name = element.get('name')
        if not name:
            warnings.append(f'a <sensor>{line_of(element)} has no name; sensor skipped')
            continue
        context = f'sensor {quoted(name)}'
        near_misses = check_children(element, _FRAME_CHILDREN,
                                     f'/robot/sensor[@name={quoted(name)}]', warnings, tally,
                                     without=_WITHOUT, extensions=False)
        parent = _parent(element, context, links, warnings, 'parent' in near_misses)
        if parent is None:
            continue
        if name in links:
            warnings.append(
                f'{context} has the name of a link; sensor skipped: the link already defines '
                'that frame')
            continue
        try:
            origin = read_origin(element.find('origin'), version, context)
        except DescriptionError as exc:
            warnings.append(f'{exc}; sensor skipped')
            continue
        update_rate = None
        rate_text = element.get('update_rate')
        if rate_text is not None:
            try:
                update_rate = finite(rate_text, context, 'update_rate')
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
