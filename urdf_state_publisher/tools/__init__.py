"""The tools/ layer: the demo and the inspection command (they may run the node).

It imports the root's base modules (BASE in test/test_layers.py), description/, kinematics/, wire/,
engine/, ros/, recorded/, view/ and its own modules, nothing above (test/test_layers.py).
"""
