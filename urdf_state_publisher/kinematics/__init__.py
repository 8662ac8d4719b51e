"""The kinematics/ layer: the kinematic model: joints to frame poses.

It imports the root's base modules (BASE in test/test_layers.py), description/ and its own modules,
nothing above (test/test_layers.py). It imports no ROS package (rclpy, launch, message packages),
not even lazily.
"""
