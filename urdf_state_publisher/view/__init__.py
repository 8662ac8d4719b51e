"""urdf_state_publisher_view: the robot in a browser, posed from /tf, with joint sliders.

A shell like the node and the bag command: `command` parses the command line and runs the page
(viser), `ros_link` holds the rclpy subscriptions and the sliders' publisher. `scene` (what to
draw and where) and `sliders` (ranges, mimic following, center and randomize) are pure.
"""
