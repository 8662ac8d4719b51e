# Development commands for a machine without a ROS 2 install (ROS 2 comes from PyPI).
# In a ROS 2 workspace, use colcon instead (see README).

VENV ?= .venv
PYTHON := $(VENV)/bin/python
PYTEST_ARGS ?=
DEMO_ARGS ?=
BENCH_ARGS ?=

.PHONY: env test test-long demo bench lint clean

env:  ## create or refresh the virtual environment (fast when nothing changed)
	@bash tools/bootstrap_env.sh

test: env  ## lint and the whole test suite
	$(PYTHON) -m pytest $(PYTEST_ARGS)

test-long: env  ## also the long fuzzing and soak-style runs
	$(PYTHON) -m pytest --run-slow $(PYTEST_ARGS)

demo: env  ## the node on the sample robot, with a live view in the terminal
	$(PYTHON) -m urdf_state_publisher.demo $(DEMO_ARGS)

bench: env  ## the performance benchmark
	$(PYTHON) bench/benchmark.py $(BENCH_ARGS)

lint: env
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) build install log
