#!/usr/bin/env bash
# Create or refresh .venv: ROS 2 from PyPI, a generated tf2_msgs, this package (editable) and
# its test tools. For machines with no ROS install; a ROS 2 workspace uses colcon instead.
#
# Idempotent: each step records a stamp holding the hash of the files it depends on, and is
# skipped while that hash is unchanged, so a second run costs a few hashes.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${VENV:-$repo/.venv}
python=${PYTHON:-python3}
cd "$repo"

log() { printf '[bootstrap] %s\n' "$*" >&2; }

# pip, with its output shown only when it fails (this machine's pip configuration names
# local wheel folders that may not exist, and pip warns about each of them on every run).
pip_install() {
  local out
  if ! out=$("$venv/bin/python" -m pip install -q "$@" 2>&1); then
    grep -v '^WARNING: Location' <<<"$out" >&2
    return 1
  fi
}

hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# Runs step NAME (a shell function) unless its stamp matches HASH.
step() {
  local name=$1 hash=$2
  local stamp="$venv/.stamp-$name"
  if [[ -f $stamp && $(<"$stamp") == "$hash" ]]; then
    return 0
  fi
  log "$name ..."
  "step_$name"
  echo "$hash" > "$stamp"
}

step_venv() {
  rm -rf "$venv"
  "$python" -m venv "$venv"
  pip_install --upgrade pip
}

step_ros() {
  pip_install -r requirements/ros2-pypi.txt
  # The generators' CMake files carry the wheel builder's absolute paths to the Python and
  # numpy headers; point them at this interpreter's.
  local py_include np_include
  py_include=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  np_include=$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')
  grep -rl --include='*.cmake' '/opt/python/cp311-cp311' "$venv/share" | while read -r f; do
    sed -i \
      -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#$np_include#g" \
      -e "s#/opt/python/cp311-cp311/include/python3.11#$py_include#g" \
      "$f"
  done
}

step_tf2_msgs() {
  local build="$venv/build/tf2_msgs"
  rm -rf "$build"
  mkdir -p "$build"
  (
    cd "$build"
    export CMAKE_PREFIX_PATH="$venv" AMENT_PREFIX_PATH="$venv"
    cmake "$repo/interfaces/tf2_msgs" \
      -DCMAKE_INSTALL_PREFIX="$venv" \
      -DPython3_EXECUTABLE="$venv/bin/python" \
      -DBUILD_TESTING=OFF > cmake.log 2>&1 || { cat cmake.log >&2; exit 1; }
    make -j"$(nproc)" install > make.log 2>&1 || { tail -50 make.log >&2; exit 1; }
  )
  "$venv/bin/python" -c 'from tf2_msgs.msg import TFMessage; TFMessage()'
}

step_dev() {
  pip_install -r requirements/dev.txt
  pip_install --no-deps yourdfpy
}

step_package() {
  pip_install -e .
}

# The tools that build tf2_msgs; a bare Debian machine may lack them.
for tool in cmake make g++; do
  if ! command -v "$tool" > /dev/null; then
    log "installing the C/C++ build tools (missing: $tool) ..."
    apt-get update -qq && apt-get install -y -qq cmake make g++ > /dev/null
    break
  fi
done

step venv "$(hash_of <(command -v "$python"; "$python" --version))"
step ros "$(hash_of requirements/ros2-pypi.txt)"
step tf2_msgs "$(hash_of requirements/ros2-pypi.txt interfaces/tf2_msgs/msg/*.msg \
  interfaces/tf2_msgs/CMakeLists.txt interfaces/tf2_msgs/package.xml)"
step dev "$(hash_of requirements/dev.txt)"
step package "$(hash_of setup.py setup.cfg package.xml)"
