"""Which joints the unknown names in JointStates were meant to be: a prefix change or a typo.

JointStateHealth (engine/health.py) says so in its hint about unknown joint names. Nothing here
imports ROS.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from urdf_state_publisher.description.unknown_names import near_miss

__all__ = ['prefix_change', 'PrefixChange', 'unknown_names_hint']

SEPARATORS = '/_-.:'  # where a prefix of a joint name can end


class PrefixChange(NamedTuple):
    """A prefix that, removed from or added to received names, makes them joints of the model."""

    removed: str
    added: str
    matched: int   # names it turns into joints of the model
    total: int     # names considered
    example: tuple[str, str]  # a name and the joint it becomes


def _splits(name: str) -> Iterable[tuple[str, str]]:
    """(prefix, rest) for an empty prefix and for each prefix that ends with a separator."""
    yield '', name
    for i, character in enumerate(name[:-1]):
        if character in SEPARATORS:
            yield name[:i + 1], name[i + 1:]


def prefix_change(names: Iterable[str], joints: Iterable[str]) -> PrefixChange | None:
    """The prefix change that turns the most `names` into `joints`, if it explains enough.

    A change removes a prefix, adds one, or replaces one by another; prefixes end with a
    separator (/ _ - . :) so that ``'robot1_'`` or ``'/ns/'`` is found, not an arbitrary cut. It
    must explain at least half the names that are not joints, and at least two of them, each
    turned into another joint: one name alone matches some joint by chance too easily
    ('elbow_joint' is 'torso_lift_joint' with 'elbow_' replaced). The one exception is a prefix
    removed that leaves a whole joint name ('gripper/left_finger_joint').
    """
    joints = set(joints)
    names = [n for n in dict.fromkeys(names) if n not in joints]
    if not names:
        return None
    prefixes_of: dict[str, list[str]] = {}  # a joint name's rest -> the prefixes before it
    for joint in sorted(joints):
        for prefix, rest in _splits(joint):
            prefixes_of.setdefault(rest, []).append(prefix)
    explained: dict[tuple[str, str], dict[str, str]] = {}
    for name in names:
        for removed, rest in _splits(name):
            for added in prefixes_of.get(rest, ()):
                if removed or added:
                    explained.setdefault((removed, added), {}).setdefault(name, added + rest)
    if not explained:
        return None
    (removed, added), mapping = min(explained.items(), key=lambda item: (
        -len(item[1]), bool(item[0][0]) and bool(item[0][1]), len(item[0][0]) + len(item[0][1]),
        item[0]))
    matched = len(mapping)
    several = matched >= 2 and len(set(mapping.values())) == matched
    if 2 * matched < len(names) or not (several or (removed and not added)):
        return None
    example = next(iter(mapping.items()))
    return PrefixChange(removed, added, matched, len(names), example)


def _misspelt(name: str, joints: Sequence[str]) -> str | None:
    """The joint `name` misspells: its near miss, when one typo away; None otherwise.

    Joint names share so much ('r_', '_joint') that the near miss of an unrelated name is often
    a joint ('r_gripper_float_joint' near 'r_upper_arm_roll_joint', on a PR2): a hint is given
    only for a name one letter added, dropped, changed or swapped away ('elbow_jiont').
    """
    joint = near_miss(name, joints)
    return joint if joint is not None and _one_typo_apart(name, joint) else None


def _one_typo_apart(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by one insertion, deletion, substitution or swap of neighbours."""
    if abs(len(a) - len(b)) > 1:
        return False
    start = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    a, b = a[start:], b[start:]  # from the first difference on
    return (a[1:] == b[1:] or a[1:] == b or a == b[1:]
            or (len(a) == len(b) >= 2 and a[0] == b[1] and a[1] == b[0] and a[2:] == b[2:]))


def _hint_text(change: PrefixChange, robot: str) -> str:
    if change.removed and change.added:
        how = f"with the prefix '{change.removed}' replaced by '{change.added}'"
    elif change.removed:
        how = f"without the prefix '{change.removed}'"
    else:
        how = f"with the prefix '{change.added}' added"
    name, joint = change.example
    return (f"Hint: {change.matched} of {change.total} unknown names are joints of robot "
            f"'{robot}' {how} ('{name}' is '{joint}'): give the joint-state source and the "
            'description the same joint names (the prefix argument of the xacro description, '
            "the joints in the controllers' configuration); frame_prefix renames frames, not "
            'joints')


def unknown_names_hint(first: Sequence[str], names: Sequence[str], joints: Sequence[str],
                       robot: str) -> str:
    """A hint for the unknown `names`; '' for none, which is better than a wrong one.

    A prefix that turns them into `joints` of the model, else the joints the `first` names
    are near misses of.
    """
    change = prefix_change(names, joints)
    if change is not None:
        return _hint_text(change, robot)
    misses = [(name, joint) for name in first
              if (joint := _misspelt(name, joints)) is not None]
    return '' if not misses else (
        'Hint: ' + '; '.join(f"'{name}' is nearest to joint '{joint}'"
                             for name, joint in misses)
        + f" of robot '{robot}': is one of the two names misspelt, in the "
        'description or in the joint-state source?')
