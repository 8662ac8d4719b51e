"""The wire/ layer: the wire formats (CDR, ROS 1) and the topics' QoS facts.

It imports the root's base modules (BASE in test/test_layers.py), description/, kinematics/ and its
own modules, nothing above (test/test_layers.py). It imports no ROS package (rclpy, launch, message
packages), not even lazily.
"""
