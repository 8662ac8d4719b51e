# Development commands for a machine without a ROS 2 install (ROS 2 comes from PyPI).
# In a ROS 2 workspace, use colcon instead (see README).
#
# One environment per combination, under .venv/ (tools/bootstrap_env.sh); `make demo` installs
# in it only what the demo runs, `make shell` what every command runs, the others everything:
#   ROS_DISTRO=jazzy (default) | kilted     the ROS 2 wheels
#   ROS_DISTRO=none                         no ROS: only the tests of the ROS-free layer
#   PYTHON=python3 (default) | 3.10 | 3.12 | /path/to/python
ROS_DISTRO ?= jazzy
PYTHON ?= python3
export ROS_DISTRO PYTHON
IN_ENV := bash tools/bootstrap_env.sh run
IN_DEMO_ENV := bash tools/bootstrap_env.sh --for demo run
IN_COMMANDS_ENV := bash tools/bootstrap_env.sh --for commands run
# Without ROS only the modules marked ros_free are collected: the others import rclpy.
ROS_FREE_ONLY := $(if $(filter none,$(ROS_DISTRO)),-m ros_free $(shell grep -rl --include='test_*.py' '^pytestmark = pytest.mark.ros_free' test))
# test/ros_install needs launch_testing, which only a ROS 2 install has: `colcon test` runs it.
# A missing test oracle is an error here (--require-oracles, test/pytest_oracles.py); a ROS
# workspace's plain `colcon test` skips and lists the tests whose oracle rosdep does not install.
SUITE := --require-oracles --ignore=test/ros_install $(ROS_FREE_ONLY)
PYTEST_ARGS ?=
DEMO_ARGS ?=
BENCH_ARGS ?=

.PHONY: env test test-long release-check recordings-check demo shell bench lint clean

env:  ## create or refresh the environment (fast when nothing changed)
	@bash tools/bootstrap_env.sh

test:  ## lint and the whole test suite, in a random order (the seed is printed)
	@$(IN_ENV) python -m pytest $(SUITE) $(PYTEST_ARGS)

test-long:  ## also the long fuzzing and soak-style runs
	@$(IN_ENV) python -m pytest --run-slow $(SUITE) $(PYTEST_ARGS)

# Offline with a snapshot of the ros/rosdistro repository: ROSDISTRO_SNAPSHOT=DIR.
ROSDISTRO_SNAPSHOT ?=

release-check:  ## every key of package.xml resolves to apt with rosdep, on each released distro
	@$(IN_ENV) python tools/release_check.py $(if $(ROSDISTRO_SNAPSHOT),--rosdistro $(ROSDISTRO_SNAPSHOT))

# Recordings of other people's robots (ROS 1 bags with their URDFs): RECORDINGS=DIR.
RECORDINGS ?=

recordings-check:  ## urdf_state_publisher_bag on real recordings, against what they recorded
	@$(IN_ENV) python tools/recordings_check.py $(RECORDINGS)

demo:  ## the node on the sample robot, with a live view in the terminal
	@$(IN_DEMO_ENV) urdf_state_publisher_demo $(DEMO_ARGS)

shell:  ## a shell with the package's commands on PATH (exit to leave)
	@$(IN_COMMANDS_ENV) bash --rcfile tools/shellrc

bench:  ## the performance benchmark
	@$(IN_ENV) python bench/benchmark.py $(BENCH_ARGS)

lint:
	@$(IN_ENV) ruff check .

clean:
	rm -rf .venv build install log
