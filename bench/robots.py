"""The robots the benchmark runs on: small, medium (a real humanoid) and large (generated)."""

from __future__ import annotations

from dataclasses import dataclass
import math
import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class BenchRobot:
    label: str
    path: Path


def sample_arm() -> BenchRobot:
    return BenchRobot('sample_arm (bundled)', REPO / 'urdf' / 'sample_arm.urdf')


def jvrc1() -> BenchRobot:
    import jvrc_description

    return BenchRobot('jvrc1 (jvrc-description)',
                      Path(os.path.dirname(jvrc_description.__file__)) / 'urdf' / 'jvrc1.urdf')


def generated_hands(directory: Path, hands: int = 10, fingers: int = 4,
                    joints_per_finger: int = 3) -> BenchRobot:
    """A torso with `hands` arms, each a wrist and fingers of revolute joints, plus mimics.

    The default is 10 arms × (2 arm joints + 4 fingers × 3 joints) = 140 single-value joints,
    of which the last joint of every finger mimics the one before it (40 mimic joints).
    """
    links = ['<link name="torso"/>']
    joints = []

    def revolute(name, parent, child, xyz, rpy, axis, mimic=None):
        links.append(f'<link name="{child}"/>')
        mimic_xml = f'<mimic joint="{mimic}" multiplier="0.8" offset="0.01"/>' if mimic else ''
        joints.append(
            f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            f'<limit lower="-1.5" upper="1.5" effort="10" velocity="2"/>{mimic_xml}</joint>')

    for h in range(hands):
        yaw = 2 * math.pi * h / hands
        revolute(f'arm{h}_shoulder', 'torso', f'arm{h}_upper', '0 0 0.5', f'0 0 {yaw:.4f}',
                 '0 1 0')
        revolute(f'arm{h}_wrist', f'arm{h}_upper', f'arm{h}_palm', '0.3 0 0', '0.1 0 0',
                 '1 0 0')
        for f in range(fingers):
            parent = f'arm{h}_palm'
            for k in range(joints_per_finger):
                name = f'arm{h}_finger{f}_j{k}'
                previous = f'arm{h}_finger{f}_j{k - 1}' if k == joints_per_finger - 1 else None
                revolute(name, parent, f'{name}_link', f'0.04 {0.02 * (f - 1.5):.3f} 0',
                         '0 0 0', '0 0 1', mimic=previous)
                parent = f'{name}_link'
    text = '<robot name="many_hands">' + ''.join(links) + ''.join(joints) + '</robot>'
    count = hands * (2 + fingers * joints_per_finger)
    path = directory / f'many_hands_{count}.urdf'
    path.write_text(text)
    return BenchRobot(f'many_hands (generated, {count} joints)', path)
