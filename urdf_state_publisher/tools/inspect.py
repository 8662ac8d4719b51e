"""`urdf_state_publisher_inspect`: check a robot description and show what the node would do.

Prints the kinematic tree, links, joints with their limits, mimic relations resolved to their
independent leaders, sensor frames, the extensions (elements and attributes for other tools,
each with where it is) and every validation warning. Exit status (exit_status's, which the bag
command shares): 0 for a usable description, 1 for an invalid one or an unwritable `--dot` file
(the error on stderr), 3 with `--strict` when there are warnings (extensions are none), 64 for
a usage error. Imports no ROS package.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
import math
import os
from pathlib import Path
import sys
import tempfile

from urdf_state_publisher.description import (
    Description,
    Joint,
    JointType,
    Origin,
    parse_description,
    read_description_file,
    Sensor,
)
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.exit_status import ArgumentParser, FAILED, FINDINGS, OK, USAGE
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.words import counted

__all__ = ['load_model', 'main', 'render_dot', 'render_report']

PROG = 'urdf_state_publisher_inspect'
STDIN = '-'
XACRO_NAMESPACE = 'http://www.ros.org/wiki/xacro'


# Loading --------------------------------------------------------------------------------------

def _stdin_description(data: bytes, xacro_args: Sequence[str]) -> Description:
    """The description in stdin bytes, expanded first if it declares the xacro namespace."""
    if XACRO_NAMESPACE.encode() not in data:
        if xacro_args:
            raise DescriptionError(
                'xacro arguments were given, but the description on stdin is not xacro (it '
                f'does not declare xmlns:xacro="{XACRO_NAMESPACE}")')
        return parse_description(data)
    # xacro reads files: expand a copy (includes relative to the current directory still work
    # when given with $(find ...) or absolute paths only).
    with tempfile.TemporaryDirectory(prefix=f'{PROG}_') as directory:
        path = Path(directory) / 'stdin.urdf.xacro'
        path.write_bytes(data)
        return read_description_file(path, xacro_args).parse()


def load_model(source: str, xacro_args: Sequence[str] = (), *,
               use_smallest_joint_limits: bool = False) -> RobotModel:
    """The model of a .urdf or .xacro file, or of stdin for `-`; DescriptionError if invalid.

    An xacro argument the file neither declares nor reads is one of the model's warnings.
    """
    if source == STDIN:
        description = _stdin_description(sys.stdin.buffer.read(), xacro_args)
    else:
        description = read_description_file(source, xacro_args).parse()
    return RobotModel(description, use_smallest_joint_limits=use_smallest_joint_limits)


# Text report ----------------------------------------------------------------------------------

def _number(value: float) -> str:
    return f'{value:g}'


def _vector(values: Sequence[float]) -> str:
    return ' '.join(_number(v) for v in values)


def _written(value: float) -> str:
    """The shortest text that reads back as `value`: what a description would have written."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _origin(origin: Origin) -> tuple[str, str]:
    """An origin's xyz and its rotation in the form the description wrote: rpy or quat_xyzw."""
    xyz = ' '.join(_written(v) for v in origin.xyz)
    if origin.quat_xyzw is not None:
        return xyz, 'quat_xyzw ' + ' '.join(_written(v) for v in origin.quat_xyzw)
    return xyz, 'rpy ' + ' '.join(_written(v) for v in origin.rpy)


def _range(lower: float, upper: float, unit: str) -> str:
    if not (math.isfinite(lower) or math.isfinite(upper)):
        return 'unbounded'
    return f'[{_number(lower)}, {_number(upper)}] {unit}'


def _unit(joint_type: JointType) -> str:
    return 'm' if joint_type is JointType.PRISMATIC else 'rad'


def _bound(value: float, unit: str) -> str:
    """A velocity, effort, acceleration... limit with its unit; URDF 1.2 leaves some out (inf)."""
    return f'{_number(value)} {unit}' if math.isfinite(value) else 'no limit'


def _table(rows: Sequence[Sequence[str]], indent: str = '  ') -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [indent + '  '.join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
            for row in rows]


def _section(title: str, count: int | None = None) -> list[str]:
    return ['', title if count is None else f'{title} ({count})']


def _links_section(model: RobotModel) -> list[str]:
    parent_joint = {j.child: j for j in model.description.joints}
    sensors: dict[str, list[str]] = {}
    for sensor in model.sensors:
        sensors.setdefault(sensor.parent, []).append(sensor.name)
    rows = [('link', 'parent link', 'via joint', 'sensors')]
    for link in model.links:
        joint = parent_joint.get(link)
        rows.append((link, '(root)' if joint is None else joint.parent,
                     '' if joint is None else f'{joint.name} ({joint.type.value})',
                     ', '.join(sensors.get(link, []))))
    return _section('Links', len(model.links)) + _table(rows)


def _affine(multiplier: float, leader: str, offset: float) -> str:
    """`m × leader + o` as text."""
    sign = '-' if offset < 0 else '+'
    return f'{_number(multiplier)} × {leader} {sign} {_number(abs(offset))}'


def _joints_section(model: RobotModel, soft_limits: bool) -> list[str]:
    # The limits URDF 1.2 adds get their columns in a 1.2 document only: older ones have none.
    urdf_1_2 = model.description.version not in ('1.0', '1.1')
    derivatives = ('acceleration', 'deceleration', 'jerk') if urdf_1_2 else ()
    rows = [('joint', 'type', 'axis', 'limits', 'soft limits', 'clamped to', 'velocity',
             'effort', *derivatives, 'mimic (as written)')]
    for joint in model.description.joints:
        unit = _unit(joint.type)
        axis = '' if joint.type in (JointType.FIXED, JointType.FLOATING) else _vector(joint.axis)
        hard = soft = velocity = effort = clamp = mimic = ''
        rates = [''] * len(derivatives)
        if joint.type.single_value:
            if joint.limits is not None:
                limits = joint.limits
                velocity = _bound(limits.velocity, f'{unit}/s')
                effort = _bound(limits.effort,
                                'N' if joint.type is JointType.PRISMATIC else 'Nm')
                if joint.type is not JointType.CONTINUOUS:
                    hard = _range(limits.lower, limits.upper, unit)
                if urdf_1_2:
                    rates = [_bound(limits.acceleration, f'{unit}/s²'),
                             _bound(limits.deceleration, f'{unit}/s²'),
                             _bound(limits.jerk, f'{unit}/s³')]
            if joint.soft_limits is not None:
                soft = _range(joint.soft_limits.soft_lower, joint.soft_limits.soft_upper, unit)
            clamp = _range(*model.limits(joint.name), unit)
        if joint.mimic is not None:
            mimic = _affine(joint.mimic.multiplier, joint.mimic.joint, joint.mimic.offset)
        rows.append((joint.name, joint.type.value, axis, hard, soft, clamp, velocity, effort,
                     *rates, mimic))
    if soft_limits:
        mode = ('<limit> narrowed by <safety_controller> soft limits (--soft-limits: as the node '
                'with use_smallest_joint_limits:=true)')
    else:
        mode = ("<limit> alone (the node's default; --soft-limits shows "
                'use_smallest_joint_limits:=true)')
    return (_section('Joints', len(model.description.joints)) + _table(rows)
            + [f'  clamped to: the range the node clamps values to: {mode}'])


def walk_tree(model: RobotModel) -> Iterator[tuple[str, Joint | Sensor]]:
    """The kinematic tree below the root, depth first: (indent, item) per joint and sensor.

    A link's sensors come before its child joints. `indent` is one character a level,
    '└' or '├' for the item itself and ' ' or '│' for each level above it.
    """
    children: dict[str, list[Joint | Sensor]] = {}
    for sensor in model.sensors:
        children.setdefault(sensor.parent, []).append(sensor)
    for joint in model.description.joints:
        children.setdefault(joint.parent, []).append(joint)

    # A stack, not recursion: a serial chain of thousands of joints is a valid description.
    stack = [('', iter(children.get(model.root, [])), len(children.get(model.root, [])))]
    counts = [0]
    while stack:
        above, items, total = stack[-1]
        item = next(items, None)
        if item is None:
            stack.pop()
            counts.pop()
            continue
        counts[-1] += 1
        last = counts[-1] == total
        yield above + ('└' if last else '├'), item
        if isinstance(item, Joint):
            below = children.get(item.child, [])
            stack.append((above + (' ' if last else '│'), iter(below), len(below)))
            counts.append(0)


def tree_prefix(indent: str, width: int) -> str:
    """`indent` of walk_tree drawn `width` characters a level: '│   ├── ' for width 4."""
    drawn = {'└': '└' + '─' * (width - 2) + ' ', '├': '├' + '─' * (width - 2) + ' ',
             '│': '│' + ' ' * (width - 1), ' ': ' ' * width}
    return ''.join(drawn[c] for c in indent)


def describe_joint(model: RobotModel, name: str) -> str:
    """One line: joint name, type, axis, limits, mimic relation, child link."""
    joint = model.joint(name)
    parts = [joint.type.value]
    if joint.type not in (JointType.FIXED, JointType.FLOATING):
        parts.append('axis ' + ' '.join(f'{c:g}' for c in joint.axis))
    if joint.type in (JointType.REVOLUTE, JointType.PRISMATIC) and joint.limits:
        parts.append(f'limits [{joint.limits.lower:g}, {joint.limits.upper:g}]')
        if joint.soft_limits is not None:
            parts.append(f'soft [{joint.soft_limits.soft_lower:g}, '
                         f'{joint.soft_limits.soft_upper:g}]')
    source = model.mimic_source(name)
    if source is not None:
        leader, multiplier, offset = source
        parts.append(f'mimics {leader} ×{multiplier:g} {offset:+g}')
    return f'{name} [{", ".join(parts)}] → {joint.child}'


def tree_text(model: RobotModel) -> str:
    """The kinematic tree as indented text: joints with types, axes, limits and mimics."""
    lines = [f'robot {model.name!r}: root {model.root!r}, {counted(len(model.links), "link")}, '
             f'{counted(len(model.movable_joints), "moving joint")} '
             f'({len(model.mimic_joints)} mimic), {counted(len(model.sensors), "sensor")}',
             model.root]
    for indent, item in walk_tree(model):
        text = (describe_joint(model, item.name) if isinstance(item, Joint)
                else f'{item.name} [sensor {item.type}]')
        lines.append(tree_prefix(indent, 4) + text)
    return '\n'.join(lines)


def mimic_chain(model: RobotModel, name: str) -> list[str]:
    """The joints from `name` up its mimic chain to the independent leader, both included."""
    return [name, *(leader for leader, _, _ in model.mimic_leaders(name))]


def _mimic_section(model: RobotModel) -> list[str]:
    lines = _section('Mimic relations, resolved to their independent leaders',
                     len(model.mimic_joints))
    if not model.mimic_joints:
        return lines + ['  none']
    for name in model.mimic_joints:
        leader, multiplier, offset = model.mimic_source(name)
        follower = model.joint(name)
        line = (f'  {name} = {_affine(multiplier, leader, offset)}'
                f'    (chain: {" -> ".join(mimic_chain(model, name))})')
        lines.append(line)
        lower, upper = model.limits(leader)
        if math.isfinite(lower) and math.isfinite(upper):
            ends = sorted((multiplier * lower + offset, multiplier * upper + offset))
            own_lower, own_upper = model.limits(name)
            unit = _unit(follower.type)
            note = (f'      {leader} in {_range(lower, upper, _unit(model.joint(leader).type))} '
                    f'gives {_range(ends[0], ends[1], unit)}')
            if ends[0] < own_lower or ends[1] > own_upper:
                note += f', clamped to {_range(own_lower, own_upper, unit)}'
            lines.append(note)
    return lines


def _sensors_section(model: RobotModel) -> list[str]:
    lines = ['', f'Sensor frames ({len(model.sensors)}), published on /tf_static']
    if not model.sensors:
        return lines + ['  none']
    rows = [('sensor', 'type', 'parent link', 'xyz', 'rotation (as written)', 'update rate')]
    for sensor in model.sensors:
        rate = '' if sensor.update_rate is None else f'{_number(sensor.update_rate)} Hz'
        rows.append((sensor.name, sensor.type or '?', sensor.parent, *_origin(sensor.origin),
                     rate))
    return lines + _table(rows)


def _origins_section(model: RobotModel) -> list[str]:
    rows = [('joint', 'xyz', 'rotation (as written)')]
    rows += [(joint.name, *_origin(joint.origin)) for joint in model.description.joints]
    return _section('Joint origins', len(model.description.joints)) + _table(rows)


def _extensions_section(model: RobotModel) -> list[str]:
    extensions = model.extensions
    lines = ['', f'Extensions ({extensions.total}): elements and attributes for other tools, '
             'not used for tf (ignored, no warning)']
    if not extensions.total:
        return lines + ['  none']
    rows = [('name', 'in', 'line')]
    # In document order; an element's line is known unless the text was built in memory.
    for extension in sorted(extensions.listed, key=lambda e: e.line or 0):
        rows.append((extension.label, extension.where,
                     '' if extension.line is None else str(extension.line)))
    lines += _table(rows)
    unlisted = extensions.total - len(extensions.listed)
    if unlisted:
        by_name = [f'{label} ×{number}' for label, number in extensions.counts]
        others = extensions.total - sum(number for _, number in extensions.counts)
        if others:
            by_name.append(f'{others} of other names')
        lines.append(f'  ... and {unlisted} more, not listed; all by name: {", ".join(by_name)}')
    return lines


def _warnings_section(model: RobotModel) -> list[str]:
    lines = _section('Warnings', len(model.warnings))
    if not model.warnings:
        return lines + ['  none']
    return lines + [f'  {k}. {warning}' for k, warning in enumerate(model.warnings, 1)]


def summary_line(model: RobotModel, strict: bool = False) -> str:
    """One line: counts, and whether the description passes (`strict`: warnings fail it)."""
    joints = model.description.joints
    independent = len(model.independent_joints)
    warnings = len(model.warnings)
    if warnings == 0:
        verdict = 'OK'
    elif strict:
        verdict = 'FAILED (--strict: warnings are errors)'
    else:
        verdict = 'usable, with warnings'
    return (f'summary: robot {model.name!r}: {counted(len(model.links), "link")}, '
            f'{counted(len(joints), "joint")} ({len(model.movable_joints)} moving: '
            f'{independent} independent + {len(model.mimic_joints)} mimic; '
            f'{len(model.fixed_joints)} fixed), {counted(len(model.sensors), "sensor")}, '
            f'{counted(warnings, "warning")}: {verdict}')


def render_report(model: RobotModel, *, source: str = '', soft_limits: bool = False,
                  strict: bool = False) -> str:
    """The full text report on a model."""
    lines = [f'{source}: ' if source else '']
    lines[0] += (f'robot {model.name!r}, root link {model.root!r}, '
                 f'URDF {model.description.version}')
    lines += _section('Kinematic tree') + ['  ' + line for line in tree_text(model).splitlines()]
    lines += _links_section(model)
    lines += _joints_section(model, soft_limits)
    lines += _origins_section(model)
    lines += _mimic_section(model)
    lines += _sensors_section(model)
    lines += _extensions_section(model)
    lines += _warnings_section(model)
    lines += ['', summary_line(model, strict)]
    return '\n'.join(lines)


# Graphviz -------------------------------------------------------------------------------------

def _dot_id(text: str) -> str:
    """A DOT quoted ID (also used for labels): backslashes and quotes escaped."""
    escaped = text.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n')
    return f'"{escaped}"'


def render_dot(model: RobotModel) -> str:
    """Graphviz of the model.

    Links are boxes (the root drawn bold), joints labelled edges parent -> child, sensors
    ellipses attached by dotted edges, mimic relations dashed edges from the leader's child
    link to the follower's child link.
    """
    lines = [f'digraph {_dot_id(model.name)} {{',
             '  rankdir=TB;',
             '  node [shape=box, style=rounded, fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];']
    for link in model.links:
        attributes = ', penwidth=2' if link == model.root else ''
        lines.append(f'  {_dot_id(link)} [label={_dot_id(link)}{attributes}];')
    for sensor in model.sensors:
        label = f'{sensor.name}\n({sensor.type or "sensor"})'
        lines.append(f'  {_dot_id(sensor.name)} [label={_dot_id(label)}, shape=ellipse, '
                     'style=filled, fillcolor="lightblue"];')
    for joint in model.description.joints:
        style = ', style=bold' if joint.type is not JointType.FIXED else ''
        label = f'{joint.name}\n{joint.type.value}'
        lines.append(f'  {_dot_id(joint.parent)} -> {_dot_id(joint.child)} '
                     f'[label={_dot_id(label)}{style}];')
    for sensor in model.sensors:
        lines.append(f'  {_dot_id(sensor.parent)} -> {_dot_id(sensor.name)} '
                     '[style=dotted, arrowhead=none];')
    for name in model.mimic_joints:
        follower = model.joint(name)
        mimic = follower.mimic
        leader = model.joint(mimic.joint)
        label = f'{name} = {_affine(mimic.multiplier, leader.name, mimic.offset)}'
        lines.append(f'  {_dot_id(leader.child)} -> {_dot_id(follower.child)} '
                     f'[label={_dot_id(label)}, style=dashed, color="gray40", '
                     'fontcolor="gray40", constraint=false];')
    lines.append('}')
    return '\n'.join(lines) + '\n'


# main -----------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description='Check a robot description (.urdf or .xacro) and show its kinematic tree, '
                    'joints and limits, mimic relations resolved to their independent leaders, '
                    'sensor frames, extensions for other tools and every validation warning.',
        epilog=f'Exit status: {OK} usable, {FAILED} invalid (error on stderr), {FINDINGS} '
               f'warnings with --strict, {USAGE} a usage error.')
    parser.add_argument('file', metavar='FILE', help=f'a .urdf or .xacro file, {STDIN} for stdin')
    parser.add_argument('--xacro-arg', action='append', default=[], metavar='NAME:=VALUE',
                        help='an argument for a .xacro file (repeatable)')
    parser.add_argument('--dot', metavar='OUT.dot', type=Path,
                        help='also write the tree as a Graphviz digraph to this file')
    parser.add_argument('--soft-limits', action='store_true',
                        help='clamp ranges as the node computes them with '
                             'use_smallest_joint_limits:=true (<limit> narrowed by '
                             '<safety_controller>)')
    parser.add_argument('--strict', action='store_true',
                        help=f'exit with status {FINDINGS} when there are warnings (extensions '
                             'for other tools are none)')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Inspect one description; the exit status as described in the module docstring."""
    args = _parser().parse_args(argv)
    source = '<stdin>' if args.file == STDIN else args.file
    try:
        model = load_model(args.file, args.xacro_arg,
                           use_smallest_joint_limits=args.soft_limits)
    except DescriptionError as error:
        print(f'{PROG}: invalid robot description {source}: {error}', file=sys.stderr)
        return FAILED
    print(render_report(model, source=source, soft_limits=args.soft_limits, strict=args.strict))
    if args.dot is not None:
        try:
            args.dot.write_text(render_dot(model), encoding='utf-8')
        except OSError as error:
            print(f'{PROG}: cannot write {os.fspath(args.dot)!r}: '
                  f'{error.strerror or error}', file=sys.stderr)
            return FAILED
        print(f'Graphviz written to {os.fspath(args.dot)} (render: dot -Tsvg '
              f'{os.fspath(args.dot)} -o tree.svg)')
    if model.warnings and args.strict:
        return FINDINGS
    return OK


if __name__ == '__main__':
    sys.exit(main())
