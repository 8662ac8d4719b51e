"""A joint-state source for demos: every independent joint swinging smoothly within its limits.

Run it on its own next to the node::

    python -m urdf_state_publisher.tools.motion_source --description-file robot.urdf --rate 50

`MotionPlan` (what each joint does over time) is plain Python; `MotionSource` is the rclpy node
that publishes it as sensor_msgs/JointState on `joint_states`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
import math
import sys

from rclpy.node import Node
from sensor_msgs.msg import JointState

from urdf_state_publisher.description import JointType
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.ros.process import run_node, StopRequest
from urdf_state_publisher.words import counted

__all__ = ['JointMotion', 'MotionPlan', 'MotionSource', 'main']

# Swing over this fraction of a joint's range, so that values stay clear of the limits.
RANGE_FRACTION = 0.9
# Amplitudes for joints without usable limits (a revolute or prismatic joint with no <limit>).
UNBOUNDED_ANGLE = 1.0  # rad
UNBOUNDED_TRAVEL = 0.1  # m
# Periods grow from joint to joint, so the joints never move in lockstep.
FIRST_PERIOD_S = 4.0
PERIOD_STEP_S = 0.7
DEFAULT_RATE_HZ = 50.0


@dataclass(frozen=True)
class JointMotion:
    """One joint's motion: center + amplitude·sin(2πt/period + phase), or full turns."""

    name: str
    center: float
    amplitude: float
    period: float
    phase: float
    turns: bool = False  # a continuous joint: the angle grows by 2π per period

    def value(self, t: float) -> float:
        """The joint's value at time `t` (seconds); turning joints wrapped to [-π, π)."""
        angle = 2.0 * math.pi * t / self.period + self.phase
        if self.turns:
            return (angle + math.pi) % (2.0 * math.pi) - math.pi
        return self.center + self.amplitude * math.sin(angle)


@dataclass(frozen=True)
class MotionPlan:
    """The motions of every independent single-value joint of a model."""

    joints: tuple[JointMotion, ...]

    @classmethod
    def for_model(cls, model: RobotModel) -> MotionPlan:
        """Smooth motions within limits, narrowed by soft limits where a joint has them.

        Mimic followers are left to the node (it derives them from their leaders); floating
        and planar joints are not driven.
        """
        narrowed = RobotModel(model.description, use_smallest_joint_limits=True)
        scalar = set(model.scalar_joints)
        names = [n for n in model.independent_joints if n in scalar]
        motions = []
        for k, name in enumerate(names):
            joint = model.joint(name)
            period = FIRST_PERIOD_S + PERIOD_STEP_S * k
            phase = 2.0 * math.pi * k / max(len(names), 1)
            if joint.type is JointType.CONTINUOUS:
                motions.append(JointMotion(name, 0.0, math.pi, 2.0 * period, phase, turns=True))
                continue
            lower, upper = narrowed.limits(name)
            if math.isfinite(lower) and math.isfinite(upper):
                center = (lower + upper) / 2.0
                amplitude = RANGE_FRACTION * (upper - lower) / 2.0
            else:
                center = 0.0
                amplitude = UNBOUNDED_TRAVEL if joint.type is JointType.PRISMATIC \
                    else UNBOUNDED_ANGLE
            motions.append(JointMotion(name, center, amplitude, period, phase))
        return cls(tuple(motions))

    @property
    def names(self) -> tuple[str, ...]:
        """The driven joints, in publishing order."""
        return tuple(m.name for m in self.joints)

    def positions(self, t: float) -> list[float]:
        """Every driven joint's value at time `t` (seconds), in the order of `names`."""
        return [m.value(t) for m in self.joints]


class MotionSource(Node):
    """Publishes a MotionPlan on `joint_states`, stamped with the node clock."""

    def __init__(self, plan: MotionPlan, *, rate: float = DEFAULT_RATE_HZ, **node_options):
        """Publish `plan` at `rate` Hz from now on (call rclpy.init() first)."""
        super().__init__('motion_source', **node_options)
        self._plan = plan
        self._names = list(plan.names)
        self._publisher = self.create_publisher(JointState, 'joint_states', 10)
        self._start_ns = self.get_clock().now().nanoseconds
        self.create_timer(1.0 / rate, self._publish)
        self.get_logger().info(
            f'publishing {counted(len(self._names), "joint")} on '
            f"'{self.resolve_topic_name('joint_states')}' at {rate:g} Hz: "
            + ', '.join(self._names))

    def _publish(self) -> None:
        now = self.get_clock().now()
        message = JointState()
        message.header.stamp = now.to_msg()
        message.name = self._names
        message.position = self._plan.positions((now.nanoseconds - self._start_ns) * 1e-9)
        self._publisher.publish(message)


def positive_number(text: str) -> float:
    """An argparse type: a positive, finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a number: {text!r}') from None
    if not math.isfinite(value) or value <= 0.0:
        raise argparse.ArgumentTypeError(f'must be a positive number, got {text!r}')
    return value


def split_ros_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(our arguments, ROS arguments): each `--ros-args ... [--]` block goes to ROS.

    Done by hand because rclpy's remove_ros_args also takes any `name:=value` for a (legacy)
    remapping rule, and xacro arguments look just like that.
    """
    ours: list[str] = []
    ros: list[str] = []
    in_ros = False
    for argument in argv:
        if argument == '--ros-args':
            in_ros = True
        elif in_ros and argument == '--':
            in_ros = False
            continue
        (ros if in_ros else ours).append(argument)
    return ours, ros


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='python -m urdf_state_publisher.tools.motion_source',
        description='Publish smooth sensor_msgs/JointState motion, within limits, for every '
                    'independent joint of a robot description (ROS arguments after '
                    '--ros-args).')
    parser.add_argument('--description-file', required=True, metavar='FILE',
                        help='the .urdf or .xacro file of the robot')
    parser.add_argument('--xacro-arg', action='append', default=[], metavar='NAME:=VALUE',
                        help='an argument for a .xacro file (repeatable)')
    parser.add_argument('--rate', type=positive_number, default=DEFAULT_RATE_HZ, metavar='HZ',
                        help=f'messages per second (default {DEFAULT_RATE_HZ:g})')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Publish until a stop signal; exit status 1 if the description is unusable."""
    stop = StopRequest()
    ours, ros = split_ros_args(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(ours)
    try:
        model = RobotModel.from_file(args.description_file, args.xacro_arg)
    except DescriptionError as error:
        print(f'motion_source: {error}', file=sys.stderr)
        return 1
    plan = MotionPlan.for_model(model)
    if not plan.joints:
        print(f'motion_source: robot {model.name!r} has no independent revolute, continuous or '
              'prismatic joint to move', file=sys.stderr)
        return 1

    return run_node('motion_source', lambda: MotionSource(plan, rate=args.rate), stop,
                    ['motion_source', *ros])


if __name__ == '__main__':
    sys.exit(main())
