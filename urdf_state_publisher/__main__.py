"""`python -m urdf_state_publisher`: run the node."""

import sys

from urdf_state_publisher.ros.process import main

sys.exit(main())
