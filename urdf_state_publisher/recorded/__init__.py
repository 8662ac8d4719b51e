"""The recorded/ layer: the recorded-data shell: the bag command.

It imports the root's base modules (BASE in test/test_layers.py), description/, kinematics/, wire/,
engine/ and its own modules, nothing above (test/test_layers.py).
"""
