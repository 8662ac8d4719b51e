"""Load robot-description text (URDF 1.0 or 1.1, or xacro expanded to URDF) into a Description.

A file is read by `files` into a DescriptionText: the text, and the warnings of its reading
(xacro arguments the file does not take), which its `parse` puts first in the Description's.

Every element is read once, parsed by the hardened stdlib parser of `xml_safety`: origins by
`origins`, joints by `joints`, sensors by `sensors`, <model_state> by `model_state`; checks
that span elements (mimics, the tree) live in `validation`; unknown names, near misses of known
ones or extensions for other tools, are sorted by `unknown_names`.
"""

from urdf_state_publisher.description.files import (
    DescriptionText,
    expand_xacro,
    read_description_file,
)
from urdf_state_publisher.description.parse import parse_description
from urdf_state_publisher.description.records import (
    Description,
    Extension,
    Extensions,
    Joint,
    JointType,
    Limits,
    Mimic,
    Origin,
    Sensor,
    SoftLimits,
)
from urdf_state_publisher.description.unknown_names import describe_extensions
from urdf_state_publisher.description.xml_safety import MAX_DESCRIPTION_BYTES
from urdf_state_publisher.errors import DescriptionError

__all__ = [
    'Description',
    'DescriptionError',
    'DescriptionText',
    'Extension',
    'Extensions',
    'Joint',
    'JointType',
    'Limits',
    'MAX_DESCRIPTION_BYTES',
    'Mimic',
    'Origin',
    'Sensor',
    'SoftLimits',
    'describe_extensions',
    'expand_xacro',
    'parse_description',
    'read_description_file',
]
