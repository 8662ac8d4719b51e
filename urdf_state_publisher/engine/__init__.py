"""The engine/ layer: joint values in, what to publish out, with health.

It imports the root's base modules (BASE in test/test_layers.py), description/, kinematics/, wire/
and its own modules, nothing above (test/test_layers.py). It imports no ROS package (rclpy, launch,
message packages), not even lazily.
"""
