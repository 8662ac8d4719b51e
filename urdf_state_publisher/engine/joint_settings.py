"""joint_state_publisher's per-joint parameters, applied to a description: zeros, dependent_joints.

A user who replaces joint_state_publisher brings its parameters file. Its scalar parameters
(rate, use_mimic_tags, publish_default_velocities, ...) are the node's own (`parameters`); the
ones that name joints are read here, from the parameters given to the node by name
(`zeros.<joint>`, `dependent_joints.<joint>.parent|factor|offset`, undeclared overrides that
rclpy declares as given):

- `zeros.<joint>`: the joint's default position, and the value it keeps until a source names
  it. A joint held this way is passive on purpose (robot_state_publisher #57): the node
  publishes it on its timer and does not report it as never received.
- `dependent_joints.<joint>`: a mimic relation given as a parameter (`parent`, `factor`
  default 1, `offset` default 0), checked like a URDF <mimic>.
- `delta`, joint_state_publisher's sweep of every joint, is not done here: a non-zero value is
  refused with what to use instead.

Every error is a ParameterValueError of one line that names the parameter. Nothing here imports
ROS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
import math

from urdf_state_publisher.description import Description, Joint, Mimic
from urdf_state_publisher.description.messages import Warnings
from urdf_state_publisher.description.validation import check_mimics
from urdf_state_publisher.engine.parameters import NodeConfig, ParameterValueError
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.quoting import quoted

__all__ = ['JointSettings']

ZEROS = 'zeros'
DEPENDENT_JOINTS = 'dependent_joints'
DEPENDENT_FIELDS = ('parent', 'factor', 'offset')
DELTA = 'delta'


@dataclass(frozen=True)
class JointSettings:
    """The per-joint parameters, checked in form; `model` checks them against a description."""

    zeros: Mapping[str, float] = field(default_factory=dict)
    dependent_joints: Mapping[str, Mimic] = field(default_factory=dict)
    use_mimic_tags: bool = True
    parameter_names: tuple[str, ...] = ()  # the node parameters they come from, as given

    @classmethod
    def from_parameters(cls, given: Mapping[str, object], config: NodeConfig) -> JointSettings:
        """The settings in `given` (every parameter given to the node, by name, with its value).

        ParameterValueError, naming the parameter, for a value or name of the wrong form, a
        non-zero `delta`, and `publish_default_positions: false` given with
        publish_joint_states.
        """
        zeros: dict[str, float] = {}
        fields: dict[str, dict[str, object]] = {}
        names = []
        for name, value in given.items():
            group, _, rest = name.partition('.')
            if group in (ZEROS, DEPENDENT_JOINTS):
                names.append(name)
            if group == ZEROS:
                zeros[_joint_of(name, rest)] = _number(name, value)
            elif group == DEPENDENT_JOINTS:
                joint, _, part = rest.rpartition('.')
                if part not in DEPENDENT_FIELDS or not joint:
                    raise ParameterValueError(
                        f'{name}: not a dependent joint field; give '
                        f'{DEPENDENT_JOINTS}.<joint>.parent (and optionally .factor, .offset)')
                fields.setdefault(joint, {})[part] = value
        if DELTA in given and _number(DELTA, given[DELTA]) != 0.0:
            raise ParameterValueError(
                f"{DELTA}: this node does not sweep the joints as joint_state_publisher's delta "
                'does; to move joints without hardware, publish JointStates on a source_list '
                'topic (python -m urdf_state_publisher.tools.motion_source --description-file '
                'FILE '
                'does) or use joint_state_publisher_gui; remove delta')
        if given.get('publish_default_positions') is False and config.publish_joint_states:
            raise ParameterValueError(
                'publish_default_positions: false does not go with publish_joint_states: the '
                'resolved joint_states gives every joint a position, its default until a source '
                'names it, and /tf shows the same; remove publish_default_positions, or hold '
                'a joint at a value of your choice with zeros.<joint>')
        return cls(zeros=zeros,
                   dependent_joints={joint: _mimic(joint, parts) for joint, parts in
                                     fields.items()},
                   use_mimic_tags=config.use_mimic_tags, parameter_names=tuple(names))

    @property
    def held(self) -> frozenset[str]:
        """The joints given a value by zeros: passive until a source names them."""
        return frozenset(self.zeros)

    def model(self, description: Description, *, use_smallest_joint_limits: bool
              ) -> RobotModel:
        """The model of `description` with these settings applied.

        ParameterValueError, naming the parameter, when they do not fit the description.
        """
        described = self._with_mimics(description)
        joints = {j.name: j for j in described.joints}
        for joint in self.zeros:
            where = f'{ZEROS}.{joint}'
            found = _single_value_joint(joints, joint, where, description.name)
            if found.mimic is not None:
                raise ParameterValueError(
                    f'{where}: joint {quoted(joint)} mimics joint {quoted(found.mimic.joint)}, '
                    'so its value is computed; give the value of the joint it follows instead')
        model = RobotModel(replace(described, model_state={**described.model_state,
                                                           **self.zeros}),
                           use_smallest_joint_limits=use_smallest_joint_limits)
        for joint, value in self.zeros.items():
            lower, upper = model.limits(joint)
            if not lower <= value <= upper:
                raise ParameterValueError(
                    f'{ZEROS}.{joint}: {value:g} is outside the limits of joint {quoted(joint)} '
                    f'[{lower:g}, {upper:g}]; give a value within them')
        return model

    def _with_mimics(self, description: Description) -> Description:
        """`description` with dependent_joints added (and its <mimic>s dropped, if so set)."""
        if self.use_mimic_tags and not self.dependent_joints:
            return description
        joints = {j.name: j if self.use_mimic_tags else replace(j, mimic=None)
                  for j in description.joints}
        for name, mimic in self.dependent_joints.items():
            where = f'{DEPENDENT_JOINTS}.{name}'
            joint = _single_value_joint(joints, name, where, description.name)
            if joint.mimic is not None:
                raise ParameterValueError(
                    f'{where}: joint {quoted(name)} already mimics joint '
                    f'{quoted(joint.mimic.joint)} by its <mimic> in the description; remove '
                    f'one of the two, or set use_mimic_tags: false')
            _single_value_joint(joints, mimic.joint, f'{where}.parent', description.name)
            joints[name] = replace(joint, mimic=mimic)
        try:
            check_mimics(joints, Warnings())  # what is left to find: a cycle
        except DescriptionError as error:
            raise ParameterValueError(f'{DEPENDENT_JOINTS}: {error}') from None
        return replace(description, joints=tuple(joints[j.name] for j in description.joints))


def _single_value_joint(joints: Mapping[str, Joint], name: str, where: str, robot: str
                        ) -> Joint:
    """The joint `name` that parameter `where` names, if it is a single-value joint."""
    joint = joints.get(name)
    if joint is None:
        raise ParameterValueError(
            f'{where}: robot {quoted(robot)} has no joint {quoted(name)}; name one of its '
            'revolute, continuous or prismatic joints')
    if not joint.type.single_value:
        raise ParameterValueError(
            f'{where}: joint {quoted(name)} is {joint.type.value} and has no single value; name '
            'a revolute, continuous or prismatic joint')
    return joint


def _joint_of(name: str, joint: str) -> str:
    if not joint:
        raise ParameterValueError(
            f'{name}: give one value per joint, as {ZEROS}.<joint>: <value>')
    return joint


def _number(name: str, value: object) -> float:
    """`value` as a finite float; ParameterValueError naming the parameter otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value):
        raise ParameterValueError(f'{name} must be a finite number, got {value!r}')
    return float(value)


def _mimic(joint: str, parts: Mapping[str, object]) -> Mimic:
    """The mimic relation of dependent_joints.<joint>: parent, factor (1) and offset (0)."""
    where = f'{DEPENDENT_JOINTS}.{joint}'
    if 'parent' not in parts:
        raise ParameterValueError(
            f'{where}: no parent; give {where}.parent, the joint that {quoted(joint)} follows')
    parent = parts['parent']
    if not isinstance(parent, str) or not parent:
        raise ParameterValueError(
            f'{where}.parent must name the joint that {quoted(joint)} follows, got {parent!r}')
    return Mimic(joint=parent,
                 multiplier=_number(f'{where}.factor', parts.get('factor', 1.0)),
                 offset=_number(f'{where}.offset', parts.get('offset', 0.0)))
