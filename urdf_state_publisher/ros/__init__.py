"""The ros/ layer: the ROS shell: the node, its process, the container, launch support.

It imports the root's base modules (BASE in test/test_layers.py), description/, kinematics/, wire/,
engine/ and its own modules, nothing above (test/test_layers.py).
"""
