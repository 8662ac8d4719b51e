"""The frozen records a robot description is read into."""

from __future__ import annotations

from dataclasses import dataclass
import enum
import math

from urdf_state_publisher.geometry import normalized, Quaternion, quaternion_from_rpy, Vector3

__all__ = ['Description', 'Extension', 'extension_label', 'Extensions', 'Joint', 'JointType',
           'Limits', 'Mimic', 'Origin', 'Sensor', 'SoftLimits', 'URDF_1_0', 'URDF_1_1',
           'URDF_1_2']

# URDF versions as (major, minor): what a document without a version attribute is; the first
# one with quaternion origins and capsules; the first with acceleration, deceleration and jerk
# limits, optional effort and velocity, and checked geometry (urdfdom 6).
URDF_1_0 = (1, 0)
URDF_1_1 = (1, 1)
URDF_1_2 = (1, 2)


class JointType(enum.Enum):
    """The joint types of the URDF spec."""

    REVOLUTE = 'revolute'
    CONTINUOUS = 'continuous'
    PRISMATIC = 'prismatic'
    FIXED = 'fixed'
    FLOATING = 'floating'
    PLANAR = 'planar'

    @property
    def single_value(self) -> bool:
        """Whether one number (a position) describes the joint's state."""
        return self in _SINGLE_VALUE_TYPES


_SINGLE_VALUE_TYPES = frozenset({JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC})


@dataclass(frozen=True)
class Origin:
    """A URDF <origin>: where a frame sits in its parent; identity by default.

    `quat_xyzw` is the quaternion as written in a URDF 1.1 document (any non-zero length), or
    None when the rotation was written as `rpy` (or not at all). For a quaternion origin, `rpy`
    holds equivalent fixed-axis roll, pitch, yaw for display; transforms use `rotation`, which
    is exact for both forms.
    """

    xyz: Vector3 = (0.0, 0.0, 0.0)
    rpy: Vector3 = (0.0, 0.0, 0.0)
    quat_xyzw: Quaternion | None = None

    @property
    def rotation(self) -> Quaternion:
        """The rotation as a unit quaternion (x, y, z, w)."""
        if self.quat_xyzw is not None:
            return normalized(self.quat_xyzw)
        return quaternion_from_rpy(*self.rpy)


@dataclass(frozen=True)
class Limits:
    """A joint's <limit>, with the defaults of the document's URDF version.

    lower and upper only bound revolute and prismatic joints (in URDF 1.2 a <limit> of another
    joint type may leave them out: -inf and inf). In URDF 1.2 effort, velocity, acceleration
    and jerk left out are inf (no limit) and deceleration left out is the acceleration; before
    1.2 effort and velocity are required and the last three are not read (inf).
    """

    lower: float
    upper: float
    velocity: float
    effort: float
    acceleration: float = math.inf
    deceleration: float = math.inf
    jerk: float = math.inf


@dataclass(frozen=True)
class SoftLimits:
    """A joint's <safety_controller>; absent soft limits are 0, as the spec and urdfdom say."""

    soft_lower: float
    soft_upper: float
    k_position: float
    k_velocity: float


@dataclass(frozen=True)
class Mimic:
    """A <mimic>, as written: this joint's value = multiplier * value of `joint` + offset."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class Joint:
    """A URDF joint with the spec's defaults applied and its axis of unit length."""

    name: str
    type: JointType
    parent: str
    child: str
    origin: Origin
    axis: Vector3
    limits: Limits | None
    soft_limits: SoftLimits | None
    mimic: Mimic | None

    def soft_limited_range(self) -> tuple[float, float] | None:
        """<limit> narrowed by the <safety_controller> soft limits, as [lower, upper].

        The larger of the lowers and the smaller of the uppers; None for a joint without both,
        or not revolute or prismatic.

        The range may be empty (lower > upper): soft limits not written default to 0.
        """
        if (self.type not in (JointType.REVOLUTE, JointType.PRISMATIC) or self.limits is None
                or self.soft_limits is None):
            return None
        return (max(self.limits.lower, self.soft_limits.soft_lower),
                min(self.limits.upper, self.soft_limits.soft_upper))


@dataclass(frozen=True)
class Sensor:
    """A URDF <sensor>: a frame attached to a link (its camera or ray details are not kept).

    The sensor spec has no `type` attribute: `type` is that attribute when a file has one,
    else the tag of the sensor's first other child element (`camera`, `ray`), else ''.
    """

    name: str
    type: str
    parent: str
    origin: Origin
    update_rate: float | None


@dataclass(frozen=True)
class Extension:
    """An element or attribute that the URDF format lets other tools add: not read, no warning.

    `name` is as written (a namespaced one with its prefix: 'drake:gear_ratio'), cut short if
    long; `where` is the element it is in ('<robot>', "/robot/link[@name='a']"); `line` that
    element's line (its own, for an element), if known.
    """

    name: str
    attribute: bool
    where: str
    line: int | None

    @property
    def label(self) -> str:
        """'<gazebo>' for an element, "'mu_coulomb'" for an attribute."""
        return extension_label(self.name, self.attribute)


def extension_label(name: str, attribute: bool) -> str:
    """How messages show an extension's name: '<gazebo>', "'mu_coulomb'"."""
    return repr(name) if attribute else f'<{name}>'


@dataclass(frozen=True)
class Extensions:
    """The extensions of a description: all counted, the first ones found listed.

    `counts` gives (label, number) per name, elements first, then attributes, each sorted by
    name; a hostile description's names beyond the first 50 are only in `total`.
    """

    listed: tuple[Extension, ...] = ()
    counts: tuple[tuple[str, int], ...] = ()
    total: int = 0


@dataclass(frozen=True)
class Description:
    """A validated robot description: one tree of links, joints parent-before-child.

    `version` is the document's URDF version, '1.0' when it declares none. `warnings` are the
    findings that change what is published or look like mistakes; `extensions` what the
    document holds for other tools (<gazebo>, <ros2_control>, vendor attributes).
    """

    name: str
    root: str
    links: tuple[str, ...]
    joints: tuple[Joint, ...]
    sensors: tuple[Sensor, ...]
    model_state: dict[str, float]
    warnings: tuple[str, ...]
    version: str = '1.0'
    extensions: Extensions = Extensions()
