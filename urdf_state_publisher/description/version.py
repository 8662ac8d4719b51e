"""The URDF version a <robot> declares, by the rules of urdfdom's URDFVersion."""

from __future__ import annotations

import re

from urdf_state_publisher.description.records import URDF_1_0, URDF_1_1, URDF_1_2
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.quoting import quoted

__all__ = ['SUPPORTED_VERSIONS', 'read_version']

SUPPORTED_VERSIONS = (URDF_1_0, URDF_1_1, URDF_1_2)
_NAMES = [f'{major}.{minor}' for major, minor in SUPPORTED_VERSIONS]
_READ_TEXT = ', '.join(_NAMES[:-1]) + ' and ' + _NAMES[-1]
_SUPPORTED_TEXT = ', '.join(f'"{name}"' for name in _NAMES[:-1]) + f' or "{_NAMES[-1]}"'
_ADVICE = f'write version={_SUPPORTED_TEXT}, or leave version out for 1.0'


def _field(text: str, version: str) -> int:
    """One number of `major.minor`: digits only, as urdfdom's strToUnsigned would have it."""
    if re.fullmatch(r'[0-9]+', text):
        return int(text)
    if not text:
        reason = 'one of its numbers is blank'
    elif re.fullmatch(r'-[0-9]+', text):
        reason = 'version numbers cannot be negative'
    elif re.match(r'[0-9]', text):
        reason = f'{quoted(text)} has characters after the number'
    else:
        reason = f'{quoted(text)} is not a whole number'
    raise DescriptionError(f'<robot version={quoted(version)}>: {reason}; {_ADVICE}')


def read_version(text: str | None) -> tuple[int, int]:
    """(major, minor) of a <robot version>, (1, 0) when absent; DescriptionError if unsupported."""
    if text is None:
        return URDF_1_0
    parts = text.split('.')
    # urdfdom drops an empty piece after the last dot: "1." has one number, not a blank one.
    if parts and parts[-1] == '' and len(parts) > 1:
        parts.pop()
    if len(parts) != 2:
        raise DescriptionError(
            f'<robot version={quoted(text)}>: a version has the form "major.minor"; {_ADVICE}')
    version = (_field(parts[0], text), _field(parts[1], text))
    if version not in SUPPORTED_VERSIONS:
        raise DescriptionError(
            f'<robot version={quoted(text)}>: URDF {version[0]}.{version[1]} is not supported '
            f'(this node reads URDF {_READ_TEXT}); {_ADVICE}')
    return version
