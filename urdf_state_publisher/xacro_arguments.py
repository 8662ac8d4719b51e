"""xacro's arguments, given as 'name:=value' words or as a mapping.

The description's reader, the parameters' check and the launch files' check read them alike.
Nothing here imports beyond the standard library, so that the checks of parameters, which run
before anything is loaded, do not load the description's reader (and numpy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.quoting import quoted

__all__ = ['xacro_mappings']


def xacro_mappings(arguments: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    """The arguments for xacro (xacro_args, the API's) as a mapping; DescriptionError if not.

    Given as a mapping or as 'name:=value' strings.
    """
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
