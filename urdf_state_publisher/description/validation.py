"""Checks across elements: mimic relations, the one tree of links and joints, soft limits."""

from __future__ import annotations

from collections.abc import Iterable

from urdf_state_publisher.description.messages import listing, MAX_LISTED, Warnings
from urdf_state_publisher.description.records import Joint
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.quoting import cut, quoted
from urdf_state_publisher.words import counted

__all__ = ['build_tree', 'check_mimics', 'soft_limit_warnings']


def _without_mimic(joint: Joint) -> Joint:
    return Joint(name=joint.name, type=joint.type, parent=joint.parent, child=joint.child,
                 origin=joint.origin, axis=joint.axis, limits=joint.limits,
                 soft_limits=joint.soft_limits, mimic=None)


def check_mimics(joints: dict[str, Joint], warnings: Warnings) -> dict[str, Joint]:
    """Drop mimics that change nothing and refuse those that cannot be evaluated."""
    result = {}
    for name, joint in joints.items():
        if joint.mimic is not None and not joint.type.single_value:
            warnings.append(
                f'joint {quoted(name)} is {joint.type.value} and has a <mimic>; mimic dropped: a '
                f'{joint.type.value} joint has no single position to set')
            joint = _without_mimic(joint)
        result[name] = joint
    for name, joint in result.items():
        if joint.mimic is None:
            continue
        leader = result.get(joint.mimic.joint)
        if leader is None:
            raise DescriptionError(
                f'joint {quoted(name)} mimics joint {quoted(joint.mimic.joint)}, which does not '
                'exist; fix its <mimic joint="...">')
        if leader.name != name and not leader.type.single_value:
            raise DescriptionError(
                f'joint {quoted(name)} mimics joint {quoted(leader.name)}, which is '
                f'{leader.type.value}; a mimic needs a revolute, continuous or prismatic leader')
    # Each joint has at most one leader, so following leaders either ends or loops.
    done: set[str] = set()
    for start in result:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = start
        while current is not None and current not in done:
            if current in on_path:
                loop = path[path.index(current):]
                if len(loop) <= MAX_LISTED:
                    shown = ' -> '.join(cut(n) for n in loop + [current])
                else:
                    shown = (' -> '.join(cut(n) for n in loop[:MAX_LISTED])
                             + f' -> ... ({counted(len(loop), "joint")} in the cycle)')
                raise DescriptionError(
                    f'mimic cycle: {shown} (each joint mimics the next); '
                    'a mimic chain must end at a joint that mimics nobody')
            path.append(current)
            on_path.add(current)
            mimic = result[current].mimic
            current = mimic.joint if mimic is not None else None
        done.update(path)
    return result


def _format_cycle(loop: list[str], parent_joint: dict[str, Joint]) -> str:
    """Describe links found walking up (child before parent) as a loop from parent to child."""
    loop = list(reversed(loop))
    parts = []
    for index, link in enumerate(loop[:MAX_LISTED]):
        next_link = loop[(index + 1) % len(loop)]
        parts += [f'link {quoted(link)}', f'joint {quoted(parent_joint[next_link].name)}']
    if len(loop) <= MAX_LISTED:
        parts.append(f'link {quoted(loop[0])}')
    else:
        parts.append(f'... ({counted(len(loop), "link")} in the cycle)')
    return ' -> '.join(parts)


def _find_cycle(links: list[str], parent_joint: dict[str, Joint]) -> str | None:
    """Return a description of the first kinematic loop, walking up from each link."""
    # Each link has at most one parent, so walking up either reaches a root or loops.
    done: set[str] = set()
    for start in links:
        chain: list[str] = []
        position: dict[str, int] = {}
        link: str | None = start
        while link is not None and link not in done:
            if link in position:
                return _format_cycle(chain[position[link]:], parent_joint)
            position[link] = len(chain)
            chain.append(link)
            joint = parent_joint.get(link)
            link = joint.parent if joint is not None else None
        done.update(chain)
    return None


def build_tree(links: list[str], joints: list[Joint]) -> tuple[str, list[str], list[Joint]]:
    """Check that links and joints form one tree; return root, links and joints in order."""
    link_set = set(links)
    parent_joint: dict[str, Joint] = {}
    children: dict[str, list[Joint]] = {}
    for joint in joints:
        for role, link in (('parent', joint.parent), ('child', joint.child)):
            if link not in link_set:
                raise DescriptionError(
                    f'joint {quoted(joint.name)} has {role} link {quoted(link)}, which does not '
                    f"exist; add <link name={quoted(link)}/> or fix the joint's <{role}>")
        previous = parent_joint.get(joint.child)
        if previous is not None:
            raise DescriptionError(
                f'link {quoted(joint.child)} is the child of two joints, '
                f'{quoted(previous.name)} and {quoted(joint.name)}; a link can have only one '
                'parent joint')
        parent_joint[joint.child] = joint
        children.setdefault(joint.parent, []).append(joint)

    roots = [link for link in links if link not in parent_joint]
    cycle = _find_cycle(links, parent_joint)
    if not roots:
        raise DescriptionError(
            'no root link: every link is a child of a joint (cycle?): '
            f'{cycle or "no cycle found"}')
    if cycle is not None:
        raise DescriptionError(
            f'kinematic cycle: {cycle}; a URDF must be a tree: remove one of these joints')
    if len(roots) > 1:
        listed = listing([quoted(root) for root in sorted(roots)])
        raise DescriptionError(
            f"{len(roots)} root links (links that are no joint's child): {listed}; a URDF "
            'needs exactly one root link: connect them, e.g. with a fixed joint')

    root = roots[0]
    ordered_links = [root]
    ordered_joints: list[Joint] = []
    # Depth-first, children in document order, so chains read as they do in the file.
    stack = list(reversed(children.get(root, [])))
    while stack:
        joint = stack.pop()
        ordered_joints.append(joint)
        ordered_links.append(joint.child)
        stack.extend(reversed(children.get(joint.child, [])))
    if len(ordered_links) != len(links):
        unreached = sorted(link_set.difference(ordered_links))
        raise DescriptionError(
            'links not connected to root link ' + quoted(root) + ': '
            + listing([quoted(link) for link in unreached]))
    return root, ordered_links, ordered_joints


def soft_limit_warnings(joints: Iterable[Joint]) -> list[str]:
    warnings = []
    for joint in joints:
        narrowed = joint.soft_limited_range()
        if narrowed is not None and narrowed[0] > narrowed[1]:
            soft = joint.soft_limits
            warnings.append(
                f'joint {quoted(joint.name)}: <limit> [{joint.limits.lower}, '
                f'{joint.limits.upper}] and <safety_controller> soft limits '
                f'[{soft.soft_lower}, {soft.soft_upper}] leave no common range (soft limits '
                'that are not written default to 0); check soft_lower_limit and '
                'soft_upper_limit')
    return warnings
