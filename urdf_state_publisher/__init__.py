"""Publish a robot's description and state on tf2; the kinematic model as a Python API.

The model layer imports no ROS package::

    from urdf_state_publisher import RobotModel
    model = RobotModel.from_file('robot.urdf.xacro', xacro_args=['prefix:=left_'])
    model.frame_pose('tool0', {'elbow_joint': 0.5})

`__version__` is the version of the installed package (one version: package.xml, setup.py).
The names below are imported on first use: the node's entry point (`ros.process.main`) must be
able to install its signal handlers before numpy or rclpy are loaded.
"""

import importlib

_MODULE_OF = {
    'Description': 'description', 'DescriptionText': 'description', 'Extension': 'description',
    'Extensions': 'description', 'Joint': 'description', 'JointType': 'description',
    'Limits': 'description', 'Mimic': 'description', 'Origin': 'description',
    'parse_description': 'description', 'read_description_file': 'description',
    'Sensor': 'description', 'SoftLimits': 'description',
    'DescriptionError': 'errors',
    'Pose': 'geometry',
    'FrameTransform': 'kinematics.model', 'JointUpdate': 'kinematics.model',
    'RobotModel': 'kinematics.model', 'UpdatePlan': 'kinematics.model',
    'tree_text': 'tools.inspect',
}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name == '__version__':  # package.xml's and setup.py's, as the installed metadata has it
        from importlib.metadata import version

        return version(__name__)
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = getattr(importlib.import_module(f'{__name__}.{module}'), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
