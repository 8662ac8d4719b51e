"""The sign of a published quaternion: the one KDL gives, as robot_state_publisher publishes.

q and -q are one rotation. robot_state_publisher (ROS 1 and ROS 2) takes each quaternion from
KDL's Rotation::GetQuaternion (orocos_kdl/src/frames.cpp) of the rotation matrix: w from the
trace when the trace exceeds 1e-12 (w is then positive), otherwise the component of the largest
diagonal element, x, y or z, the later one of equal elements (that component is then positive).
For a unit quaternion the trace is 4w² - 1 and the diagonal elements order as x², y², z², so the
rule reads on the quaternion itself.

`kdl_signed` applies it to any rows of transforms (fixed joints, sensor frames, floating and
planar joints). Joint states are the hot path: there a joint's sign is settled inside the one
product of matrices that computes its transform (`sign_factors`), with no call of its own.
"""

from __future__ import annotations

import math

import numpy as np

from urdf_state_publisher.geometry import Quaternion

__all__ = ['kdl_signed', 'sign_factors']

# w² beyond which the trace, 4w² - 1, exceeds GetQuaternion's 1e-12.
TRACE_BRANCH_W2 = (1.0 + 1e-12) / 4
# Half-angles closer than this are one point: the sign between them is rounding's, not KDL's.
MERGED = 1e-9


def kdl_signed(transforms: np.ndarray) -> np.ndarray:
    """A copy of `transforms` with each rotation signed as KDL's GetQuaternion signs it.

    Rows of translation xyz and quaternion xyzw.
    """
    rotations = transforms[:, 3:7]
    # Keys in the order w, z, y, x: argmax takes the first of equal keys, KDL the later
    # element. w's key is 1 in the trace branch, above x², y², z² (together below 3/4 there),
    # and 0 outside it, below the largest of them (at least 1/4 there).
    keys = rotations[:, ::-1] * rotations[:, ::-1]
    np.greater(keys[:, 0], TRACE_BRANCH_W2, out=keys[:, 0])
    chosen = rotations[:, ::-1][np.arange(len(keys)), keys.argmax(axis=1)]
    signed = np.array(transforms, dtype=float)
    np.negative(signed[:, 3:7], out=signed[:, 3:7], where=(chosen < 0.0)[:, None])
    return signed


def _sign(q: np.ndarray) -> float:
    """1.0 where KDL keeps the quaternion `q`, -1.0 where it negates it."""
    row = np.concatenate([np.zeros(3), q]).reshape(1, 7)
    return 1.0 if (kdl_signed(row)[0, 3:] == q).all() else -1.0


def sign_factors(a: Quaternion, b: Quaternion) -> list[tuple[float, float, float]]:
    """The sign KDL gives q(θ) = a·cos θ + b·sin θ, as a product of functions of θ.

    A revolute joint at value v has the quaternion q(v/2) of its origin `a` and `b` = a ⊗ axis;
    a prismatic joint's is `a` whatever its value (`b` zero). Each function is returned as its
    coefficients on (1, cos θ, sin θ): their product's sign is KDL's for every θ, exactly at
    θ = 0 (a joint at zero has its origin's rotation, which is often one on a boundary of the
    rule, such as an optical frame's) and elsewhere up to rounding at the points where the
    rule's choice changes. Between those points the sign is constant: the rule changes its
    choice only where w² crosses the trace's bound or two of x², y², z² are equal, at most 16
    points a turn, each the zero of a sinusoid in θ. Its sign at θ + π is the opposite.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    at_zero = _sign(a)
    if not b.any():
        return [(at_zero, 0.0, 0.0)]
    # The points in [0, π) where the rule may change its choice.
    points = [0.0]
    radius, phase = math.hypot(a[3], b[3]), math.atan2(b[3], a[3])  # w(θ) = r·cos(θ - phase)
    bound = math.sqrt(TRACE_BRANCH_W2)
    if radius > bound:
        for level in (bound, -bound):
            spread = math.acos(level / radius)
            points += [phase + spread, phase - spread]
    tied = []  # (i, j, ±1) where q_j(θ) = ±q_i(θ) at every θ: equal, bit for bit, in q(θ) too
    for i in range(3):
        for j in range(i + 1, 3):
            for other in (1.0, -1.0):  # q_i(θ) = ±q_j(θ): a sinusoid's zero
                cos_part, sin_part = a[i] - other * a[j], b[i] - other * b[j]
                if cos_part or sin_part:
                    points.append(math.atan2(-cos_part, sin_part))
                else:
                    tied.append((i, j, other))
    points = sorted({p % math.pi for p in points})
    merged = [p for k, p in enumerate(points) if k == 0 or p - points[k - 1] > MERGED]
    if math.pi - merged[-1] <= MERGED and len(merged) > 1:
        merged.pop()
    ends = merged[1:] + [math.pi]
    signs = []
    for middle in ((s + e) / 2 for s, e in zip(merged, ends)):
        q = a * math.cos(middle) + b * math.sin(middle)
        for i, j, other in tied:  # as equal as the product of matrices leaves them
            q[j] = other * q[i]
        signs.append(_sign(q))
    # The sign changes at a point where the interval before it (the last one, negated, before
    # the first) has the other sign; the count in [0, π) is odd, as q(θ + π) = -q(θ).
    changes = [p for k, p in enumerate(merged)
               if signs[k] != (signs[k - 1] if k else -signs[-1])]
    # One factor sin(θ - c) per change c; a change at 0 moves just past 0 or just before it,
    # to the side that gives θ = 0 its own sign.
    # If θ = 0 itself differs from both sides (a tie that rounding settles there), a change just
    # before it and one just after.
    if merged[0] == 0.0 and 0.0 not in changes and at_zero != signs[0]:
        changes = [-MERGED / 10, MERGED / 10] + changes
    factors = []
    for c in changes:
        if c == 0.0:
            c = -MERGED / 10 if signs[0] == at_zero else MERGED / 10
        factors.append([0.0, -math.sin(c), math.cos(c)])
    # Their product has the sign of the first interval's midpoint up to a constant: fix it.
    middle = (merged[0] + ends[0]) / 2
    product = math.prod(f[1] * math.cos(middle) + f[2] * math.sin(middle) for f in factors)
    if (product < 0) != (signs[0] < 0):
        factors[0] = [-f for f in factors[0]]
    return [tuple(f) for f in factors]
