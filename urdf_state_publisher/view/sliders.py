"""The joint sliders, as joint_state_publisher_gui has them: ranges, center, randomize, mimics.

Pure: the sliders' values become a JointState's names and positions here; the page and the
publisher are the shell's. One slider per moving single-value joint that is no mimic follower;
the followers are computed from their leaders by the package's model and published with them.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import random

import numpy as np

from urdf_state_publisher.kinematics.model import RobotModel

__all__ = ['Slider', 'SliderSet']


@dataclass(frozen=True)
class Slider:
    """One joint's slider: its range, and the value "center" puts it at."""

    joint: str
    lower: float
    upper: float
    center: float


class SliderSet:
    """The sliders of a robot model and their current values."""

    def __init__(self, model: RobotModel):
        self.model = model
        # A continuous joint (or any without finite limits) turns ±π, as joint_state_publisher's.
        defaults = model.default_positions()
        sliders = []
        for name in model.independent_joints:
            if name not in model.scalar_joints:
                continue  # floating and planar joints have no single value to slide
            lower, upper = model.limits(name)
            if not (math.isfinite(lower) and math.isfinite(upper)):
                lower, upper = -math.pi, math.pi
            sliders.append(Slider(name, lower, upper, min(max(defaults[name], lower), upper)))
        self.sliders = tuple(sliders)
        self.values = {s.joint: s.center for s in self.sliders}

    def set(self, joint: str, value: float) -> None:
        """Move one slider (a value outside its range is put at the nearest end)."""
        slider = next(s for s in self.sliders if s.joint == joint)
        self.values[joint] = min(max(float(value), slider.lower), slider.upper)

    def center(self) -> None:
        """Every slider at its center: the joint's zero, or the middle of a range without it."""
        self.values = {s.joint: s.center for s in self.sliders}

    def randomize(self, rng: random.Random | None = None) -> None:
        """Every slider at a value drawn uniformly within its range."""
        rng = rng or random.Random()
        self.values = {s.joint: rng.uniform(s.lower, s.upper) for s in self.sliders}

    def joint_state(self) -> tuple[tuple[str, ...], tuple[float, ...]]:
        """The names and positions to publish: every slider's joint and the mimic followers."""
        names = tuple(self.values)
        update = self.model.update(names, np.fromiter(self.values.values(), float, len(names)))
        return tuple(update.plan.joints), tuple(update.values.tolist())
