"""Description text from files: .urdf read as it is, .xacro expanded by xacro.

An xacro argument given that the expansion never declared (`<xacro:arg>`) nor read
(`$(arg name)`) is most likely misspelt: xacro ignores it without a word. It is a warning of
the DescriptionText, which puts it first among the Description's warnings, so every shell that
reports a description's warnings reports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
import os
from pathlib import Path
import re
import threading

from urdf_state_publisher.description.messages import describe_exception, listing
from urdf_state_publisher.description.parse import parse_description
from urdf_state_publisher.description.records import Description
from urdf_state_publisher.description.unknown_names import near_miss
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.quoting import cut
from urdf_state_publisher.xacro_arguments import xacro_mappings

__all__ = ['DescriptionText', 'expand_xacro', 'read_description_file']

# xacro keeps its file stack and arguments in module globals.
_XACRO_LOCK = threading.Lock()


@dataclass(frozen=True)
class DescriptionText:
    """A robot description's text, and the warnings of the reading that made it.

    `warnings`: what the text cannot show, such as xacro arguments the file does not take.
    """

    text: str
    warnings: tuple[str, ...] = ()

    def parse(self) -> Description:
        """parse_description of the text, these warnings first among the Description's."""
        description = parse_description(self.text)
        return replace(description, warnings=(*self.warnings, *description.warnings))


class _RecordingArguments(dict):
    """xacro's argument dict, recording the names the expansion declared or read.

    xacro keeps the `mappings` dict it is given as its arguments, not a copy: `<xacro:arg>`
    tests membership (`name in args`), then stores the default if the name is not given;
    `$(arg name)`, `$(eval ...)` and `xacro.arg(name)` look names up (`args[name]`).
    """

    def __init__(self, mappings: Mapping[str, str]):
        super().__init__(mappings)
        self.used: dict[object, None] = {}  # in the order the expansion met them

    def __contains__(self, name: object) -> bool:
        self.used[name] = None
        return super().__contains__(name)

    def __getitem__(self, name: str) -> str:
        value = super().__getitem__(name)  # a name that is not an argument stays unrecorded
        self.used[name] = None
        return value


def _unknown_arguments(mappings: Mapping[str, str], used: Sequence[str],
                       file_name: str) -> tuple[str, ...]:
    """A warning per given argument the expansion did not use, with its near miss if any."""
    warnings = []
    for name, value in mappings.items():
        if name in used:
            continue
        warning = f'{cut(f"{name}:={value}")}: not an argument of {file_name}'
        meant = near_miss(name, used)
        if meant is not None:
            warning += f'; did you mean {meant}?'
        elif used:
            warning += f' (its arguments: {listing(used)})'
        else:
            warning += ' (it has no arguments)'
        warnings.append(warning)
    return tuple(warnings)


def expand_xacro(path: str | os.PathLike,
                 arguments: Mapping[str, str] | Sequence[str] = ()) -> DescriptionText:
    """Expand a .xacro file (arguments as a mapping or 'name:=value' strings) to URDF text.

    Its warnings name each argument given that the expansion neither declared nor read.
    """
    path_text = os.fspath(path)
    mappings = xacro_mappings(arguments)
    if not os.path.isfile(path_text):
        raise DescriptionError(f'xacro file {path_text!r} does not exist or is not a file')
    # Imported here: 1.3 MiB that a node given URDF text, the usual case, never needs.
    import xacro

    recording = _RecordingArguments(mappings)
    with _XACRO_LOCK:
        try:
            document = xacro.process_file(path_text, mappings=recording)
            text = document.toprettyxml(indent='  ')
        except Exception as exc:  # xacro raises its own errors, expat's, eval's, ...
            raise DescriptionError(
                f'xacro could not expand {path_text!r}: {describe_exception(exc)}') from None
    return DescriptionText(text, _unknown_arguments(mappings, list(recording.used),
                                                    os.path.basename(path_text)))


def _decode(data: bytes, path_text: str) -> str:
    try:
        return data.decode('utf-8-sig')
    except UnicodeDecodeError:
        pass
    declared = re.match(rb'\s*<\?xml[^>]*encoding\s*=\s*["\']([A-Za-z0-9._-]+)["\']', data)
    if declared:
        try:
            return data.decode(declared.group(1).decode('ascii'))
        except (LookupError, UnicodeDecodeError):
            pass
    raise DescriptionError(
        f'robot description file {path_text!r} is not UTF-8 text (nor in the encoding its XML '
        'declaration names)')


def read_description_file(path: str | os.PathLike,
                          arguments: Mapping[str, str] | Sequence[str] = ()) -> DescriptionText:
    """Text of a .urdf file, or the expansion of a .xacro (by suffix `.xacro`) with its warnings.

    Raises DescriptionError naming the path when the file is missing or unreadable, when xacro
    fails (with xacro's message), or when arguments are given for a file that is not xacro.
    """
    path_text = os.fspath(path)
    if path_text.lower().endswith('.xacro'):
        return expand_xacro(path_text, arguments)
    if arguments:
        raise DescriptionError(
            f'arguments were given for {path_text!r}, but only .xacro files take arguments')
    try:
        data = Path(path_text).read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DescriptionError(
            f'cannot read robot description file {path_text!r}: {reason}') from None
    return DescriptionText(_decode(data, path_text))
