"""Description text from files: .urdf read as it is, .xacro expanded by xacro."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import os
from pathlib import Path
import re
import threading

from urdf_state_publisher.description.messages import describe_exception, quoted
from urdf_state_publisher.errors import DescriptionError

__all__ = ['expand_xacro', 'read_description_file', 'xacro_mappings']

# xacro keeps its file stack and arguments in module globals.
_XACRO_LOCK = threading.Lock()


def xacro_mappings(arguments: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    """Arguments, a mapping or 'name:=value' strings, as a mapping; DescriptionError if not."""
    if isinstance(arguments, Mapping):
        return {str(name): str(value) for name, value in arguments.items()}
    if isinstance(arguments, str):
        arguments = [arguments]
    mappings = {}
    for argument in arguments:
        name, separator, value = str(argument).partition(':=')
        if not separator or not name:
            raise DescriptionError(
                f'xacro argument {quoted(argument)} is not of the form name:=value')
        mappings[name] = value
    return mappings


def expand_xacro(path: str | os.PathLike,
                 arguments: Mapping[str, str] | Sequence[str] = ()) -> str:
    """Expand a .xacro file (arguments as a mapping or 'name:=value' strings) to URDF text."""
    path_text = os.fspath(path)
    mappings = xacro_mappings(arguments)
    if not os.path.isfile(path_text):
        raise DescriptionError(f'xacro file {path_text!r} does not exist or is not a file')
    # Imported here: 1.3 MiB that a node given URDF text, the usual case, never needs.
    import xacro

    with _XACRO_LOCK:
        try:
            document = xacro.process_file(path_text, mappings=mappings)
            return document.toprettyxml(indent='  ')
        except Exception as exc:  # xacro raises its own errors, expat's, eval's, ...
            raise DescriptionError(
                f'xacro could not expand {path_text!r}: {describe_exception(exc)}') from None


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
                          arguments: Mapping[str, str] | Sequence[str] = ()) -> str:
    """Text of a .urdf file, or the expansion of a .xacro (by suffix `.xacro`).

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
    return _decode(data, path_text)
