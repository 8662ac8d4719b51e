"""A node's `--ros-args` as rcl reads them, without ROS: parameters, remaps, name and namespace.

The bag command takes the node's command line, so that a bringup's params file and remaps work
unchanged on a recording. What rcl and rclpy do, followed here:

- `-p name:=value` (the value read as YAML) and `--params-file FILE` are parameter overrides,
  in the order given. A params file holds, per node name, `ros__parameters` whose nested keys
  join with dots. A node name without a leading slash gets one; `/*` stands for one level of
  the name and `/**` for any number (rclpy matches the name as a regular expression so made).
  `-p` sets its value in the `/**` entry. The entries apply to the node in the order they
  first appeared, each setting what it names. A name's parts may also nest (`robot1:
  state_publisher: ros__parameters:` is `/robot1/state_publisher`).
- `-r [node:]from:=to` remaps: `__node:=` (or `__name:=`) renames the node, `__ns:=` sets its
  namespace; any other rule maps the topic `from` to `to`, both expanded in the node's
  namespace, the first matching rule winning. A rule prefixed with a node name applies only to
  that node (for `__node` and `__ns`, the node's name before any rule renames it).
- `--log-level`, `--enclave` and `--disable-...` are taken and have no effect here.

Errors are `RosArgumentsError`, one line that names the argument and what to give instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
import re

import yaml

__all__ = ['RosArguments', 'RosArgumentsError', 'parse_ros_arguments']

# The flags rcl takes with a value and the ones it takes alone that have no effect here.
_IGNORED_WITH_VALUE = {'--log-level', '-e', '--enclave', '--log-config-file',
                       '--log-file-name'}
_IGNORED_ALONE = {'--enable-rosout-logs', '--disable-rosout-logs', '--enable-stdout-logs',
                  '--disable-stdout-logs', '--enable-external-lib-logs',
                  '--disable-external-lib-logs'}
_TOKEN = re.compile(r'[A-Za-z_][A-Za-z0-9_]*$')


class RosArgumentsError(ValueError):
    """A --ros-args argument that cannot be used; the message names it."""


@dataclass
class RosArguments:
    """What a node's `--ros-args` give it."""

    node_name: str
    namespace: str = '/'
    # Parameter overrides per node-name entry, in the order the entries first appeared.
    entries: dict[str, dict[str, object]] = field(default_factory=dict)
    remaps: list[tuple[str | None, str, str]] = field(default_factory=list)  # (node, from, to)

    @property
    def fully_qualified_name(self) -> str:
        return self.namespace.rstrip('/') + '/' + self.node_name

    def parameters(self) -> dict[str, object]:
        """The parameter overrides that apply to this node, by name."""
        values: dict[str, object] = {}
        name = self.fully_qualified_name
        for key, entry in self.entries.items():
            if re.fullmatch(key.replace('/*', r'(/\w+)'), name):
                values.update(entry)
        return values

    def resolve_topic(self, name: str) -> str:
        """`name` expanded in the node's namespace, then remapped: the topic the node uses."""
        topic = self._expanded(name)
        for node, source, target in self.remaps:
            if node in (None, self.node_name) and self._expanded(source) == topic:
                return self._expanded(target)
        return topic

    def _expanded(self, name: str) -> str:
        """`name` as a fully qualified topic name (rcl_expand_topic_name)."""
        if name.startswith('~'):
            name = self.fully_qualified_name + name[1:]
        elif not name.startswith('/'):
            name = self.namespace.rstrip('/') + '/' + name
        parts = name.split('/')[1:]
        if not name.startswith('/') or not all(_TOKEN.match(p) for p in parts):
            raise RosArgumentsError(
                f'{name!r} is not a valid topic name: give names of letters, digits and '
                "underscores, separated by '/'")
        return name


def parse_ros_arguments(arguments: Sequence[str], default_node_name: str) -> RosArguments:
    """The `--ros-args` in `arguments` (what follows `--ros-args`, up to an optional `--`)."""
    parsed = RosArguments(default_node_name)
    words = list(arguments)
    k = 0
    while k < len(words):
        word = words[k]
        if word == '--':
            break
        if word == '--ros-args':
            k += 1
            continue
        if word in _IGNORED_ALONE:
            k += 1
            continue
        if k + 1 >= len(words):
            raise RosArgumentsError(f'{word}: give a value after it, or leave it out')
        value = words[k + 1]
        if word in ('-p', '--param'):
            name, assigned = _rule(word, value)
            _set(parsed.entries, '/**', {name: _yaml_value(word, value, assigned)})
        elif word == '--params-file':
            for key, values in _params_file(value).items():
                _set(parsed.entries, key, values)
        elif word in ('-r', '--remap'):
            _remap(parsed, value, default_node_name)
        elif word not in _IGNORED_WITH_VALUE:
            raise RosArgumentsError(
                f'{word}: not a --ros-args flag this command takes; give -p NAME:=VALUE, '
                '--params-file FILE or -r FROM:=TO')
        k += 2
    return parsed


def _rule(flag: str, text: str) -> tuple[str, str]:
    name, separator, value = text.partition(':=')
    if not separator or not name:
        raise RosArgumentsError(f'{flag} {text}: give it as NAME:=VALUE')
    return name, value


def _yaml_value(flag: str, text: str, value: str) -> object:
    try:
        return yaml.safe_load(value)
    except yaml.YAMLError as error:
        raise RosArgumentsError(f'{flag} {text}: the value is not YAML ({error})') from None


def _set(entries: dict[str, dict[str, object]], key: str, values: Mapping[str, object]) -> None:
    key = key if key.startswith('/') else '/' + key
    entries.setdefault(key, {}).update(values)


def _params_file(path: str) -> dict[str, dict[str, object]]:
    """A params file's parameters per node-name key, flattened."""
    try:
        document = yaml.safe_load(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise RosArgumentsError(f'--params-file {path}: cannot read it ({error})') from None
    except yaml.YAMLError as error:
        raise RosArgumentsError(f'--params-file {path}: not YAML ({error})') from None
    if not isinstance(document, dict):
        raise RosArgumentsError(
            f'--params-file {path}: give a mapping of node names to ros__parameters')
    entries: dict[str, dict[str, object]] = {}
    for key, section in document.items():
        _sections(str(key), section, path, entries, str(key))
    return entries


def _sections(key: str, section: object, path: str, entries: dict[str, dict[str, object]],
              top: str) -> None:
    """The node-name entries under `key`: its ros__parameters, or namespaces nested in it."""
    if not isinstance(section, dict) or not section:
        raise RosArgumentsError(
            f"--params-file {path}: {top!r} has no 'ros__parameters' mapping")
    if 'ros__parameters' in section:
        entries[key] = _flattened(section['ros__parameters'] or {}, path)
        return
    for name, nested in section.items():  # namespace: node: ros__parameters (as rcl reads)
        _sections(f'{key.rstrip("/")}/{name}', nested, path, entries, top)


def _flattened(values: object, path: str, prefix: str = '') -> dict[str, object]:
    if not isinstance(values, dict):
        raise RosArgumentsError(
            f'--params-file {path}: ros__parameters{" of " + prefix if prefix else ""} must '
            'be a mapping of names to values')
    flat: dict[str, object] = {}
    for key, value in values.items():
        name = f'{prefix}.{key}' if prefix else str(key)
        if isinstance(value, dict):
            flat.update(_flattened(value, path, name))
        else:
            flat[name] = value
    return flat


def _remap(parsed: RosArguments, rule: str, default_node_name: str) -> None:
    head, separator, target = rule.partition(':=')
    if not separator or not head or not target:
        raise RosArgumentsError(f'-r {rule}: give it as FROM:=TO (or NODE:FROM:=TO)')
    node, _, source = head.rpartition(':')
    node = node or None
    if source in ('__node', '__name', '__ns'):
        # A node's name and namespace rules name the node as it was before any (rcl's).
        if node not in (None, default_node_name):
            return
        if source == '__ns':
            parsed.namespace = target if target.startswith('/') else '/' + target
        else:
            parsed.node_name = target
    else:
        parsed.remaps.append((node, source, target))
