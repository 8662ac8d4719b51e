"""Publish a robot's description and state on tf2; the kinematic model as a Python API.

The model layer imports no ROS package::

    from urdf_state_publisher import RobotModel
    model = RobotModel.from_file('robot.urdf.xacro', xacro_args=['prefix:=left_'])
    model.frame_pose('tool0', {'elbow_joint': 0.5})
"""

from urdf_state_publisher.description import (
    Description,
    Joint,
    JointType,
    Limits,
    Mimic,
    Origin,
    parse_description,
    read_description_file,
    Sensor,
    SoftLimits,
)
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.geometry import Pose
from urdf_state_publisher.model import FrameTransform, JointUpdate, RobotModel, UpdatePlan

__all__ = [
    'Description', 'DescriptionError', 'FrameTransform', 'Joint', 'JointType', 'JointUpdate',
    'Limits', 'Mimic', 'Origin', 'Pose', 'RobotModel', 'Sensor', 'SoftLimits', 'UpdatePlan',
    'parse_description', 'read_description_file',
]
