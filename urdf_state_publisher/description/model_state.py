"""The one reader of <model_state>: initial joint positions; bad entries only warn."""

from __future__ import annotations

import math
from typing import Any

from urdf_state_publisher.description.messages import line_of, Warnings
from urdf_state_publisher.description.records import Joint
from urdf_state_publisher.description.unknown_names import check_children, ExtensionTally
from urdf_state_publisher.quoting import quoted

__all__ = ['read_model_state']


def read_model_state(elements: list[Any], joints: dict[str, Joint], warnings: Warnings,
                     tally: ExtensionTally) -> dict[str, float]:
    """Position by joint name from every <model_state>'s <joint_state>s; the first one wins."""
    positions: dict[str, float] = {}
    for model_state in elements:
        check_children(model_state, ('joint_state',), '<model_state>', warnings, tally)
        for element in model_state.findall('joint_state'):  # a plain tag: found in C
            name = element.get('joint')
            if not name:
                warnings.append(
                    f'a <model_state> <joint_state>{line_of(element)} has no joint attribute; '
                    'ignored')
                continue
            context = f'<model_state> position of joint {quoted(name)}'
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
                warnings.append(f'{context} is not a number ({quoted(values[0])}); ignored')
                continue
            if not math.isfinite(position):
                warnings.append(f'{context} is not finite ({position}); ignored')
                continue
            if name in positions:
                warnings.append(f'{context} is given twice; the first one is kept')
                continue
            positions[name] = position
    return positions
