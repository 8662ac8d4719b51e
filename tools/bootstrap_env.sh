#!/usr/bin/env bash
# The environment for a machine without a ROS install: a virtual environment with ROS 2 from
# PyPI, the interface packages PyPI lacks (tf2_msgs, composition_interfaces) generated from
# interfaces/, this package (editable) and, for the tests, its test tools. A ROS 2 workspace
# uses colcon instead (README).
#
#   tools/bootstrap_env.sh [--for LEVEL]              create or refresh the environment
#   tools/bootstrap_env.sh [--for LEVEL] run CMD ...  the same, then run CMD inside it
#   tools/bootstrap_env.sh path                       print the environment's folder
#
# LEVEL is how much is installed, each level all of the one before:
#   demo      what `make demo` runs: ROS 2, tf2_msgs, this package with its 'view' extra
#             (viser, about 64 MB: the demo shows the robot in a browser too)
#   commands  what every command of the package runs (`make shell`): also
#             composition_interfaces (the container) and the 'bag' extra (rosbags)
#   tests     (the default) also the test, lint, documentation and release tools
#             (requirements/dev.txt)
# A level's steps are added to the same environment: going up installs only what is missing.
#
# Chosen by two variables, one environment per combination under .venv/, so switching
# rebuilds nothing:
#   ROS_DISTRO  jazzy (default, the LTS) or kilted: which ROS 2 wheels (requirements/ros2-*.txt);
#               none: no ROS at all, for the ROS-free layer and its tests on any Python >= 3.10
#   PYTHON      the interpreter: a command, a path or a version such as 3.12 (default python3);
#               the ROS 2 wheels exist for CPython 3.10, 3.11 and 3.12
#
# Idempotent: each step records a stamp holding the hash of the files it depends on, and is
# skipped while that hash is unchanged, so a second run costs a few hashes.
set -Eeuo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
distro=${ROS_DISTRO:-jazzy}
current_step=checks
level=tests
if [[ ${1:-} == --for ]]; then
  level=${2:-}
  shift 2 || true
fi

# log, show_progress: what the steps say while they work.
source "$repo/tools/bootstrap_progress.sh"

# Stops with what failed and what to do about it.
fail() {
  log "FAILED: $1"
  log "what to do: $2"
  exit 1
}

advice() {
  case $current_step in
    checks) echo 'see the message above' ;;
    venv) echo "make sure '$python -m venv' works (Debian/Ubuntu: apt install python3-venv," \
      "or the python3.X-venv package of that version), or choose another PYTHON" ;;
    ros) echo "pip could not install requirements/ros2-$distro.txt (output above): check that" \
      'PyPI is reachable; the ROS 2 wheels exist for CPython 3.10-3.12 on Linux x86_64' ;;
    tf2_msgs | composition_interfaces) echo "generating $current_step failed (log above, build" \
      "folder $venv/build/$current_step): remove $venv and run again; if it fails again," \
      'report the log' ;;
    dev) echo 'pip could not install requirements/dev.txt (output above): check that PyPI is' \
      'reachable' ;;
    package) echo "pip could not install this package in editable mode (output above): check" \
      'setup.py and setup.cfg' ;;
    bag) echo "pip could not install this package's 'bag' extra (output above): check that" \
      'PyPI is reachable' ;;
  esac
}

on_error() {
  fail "step '$current_step' (exit status $1 at ${BASH_SOURCE[0]}:$2)" "$(advice)"
}
trap 'on_error $? $LINENO' ERR

case $level in
  demo | commands | tests) ;;
  *) fail "--for '$level': not a level" 'use --for demo, --for commands or --for tests' ;;
esac

case $distro in
  jazzy | kilted | none) ;;
  *) fail "ROS_DISTRO=$distro: this recipe installs jazzy or kilted from PyPI (or none)" \
       'run with ROS_DISTRO=jazzy (the default) or ROS_DISTRO=kilted; on a machine with a ROS 2
       install, build and test with colcon instead (README, "In a ROS 2 workspace")' ;;
esac

python=$(tools/find_python.sh "${PYTHON:-python3}") \
  || fail "no interpreter for PYTHON=${PYTHON:-python3}" 'see the message above'
py_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [[ $distro == none ]]; then
  [[ $py_version =~ ^3\.(1[0-9]|[2-9][0-9])$ ]] \
    || fail "Python $py_version is too old" 'use Python 3.10 or newer'
else
  [[ $py_version =~ ^3\.1[0-2]$ ]] \
    || fail "no ROS 2 $distro wheels for Python $py_version ($python)" \
      'use Python 3.10, 3.11 or 3.12 (PYTHON=3.12 finds a pyenv-installed one), or
       ROS_DISTRO=none for the ROS-free tests only'
fi
venv=${VENV:-$repo/.venv/$distro-py$py_version}

if [[ ${1:-} == path ]]; then
  echo "$venv"
  exit 0
fi

# pip, its progress shown as it goes (show_progress) and its whole output only when it fails
# (this machine's pip configuration names local wheel folders that may not exist, and pip warns
# about each of them on every run).
pip_install() {
  local output_log
  output_log=$(mktemp)
  if ! "$venv/bin/python" -m pip install --progress-bar off "$@" 2>&1 \
      | show_progress "$current_step" "$output_log"; then
    grep -v '^WARNING: Location' "$output_log" >&2
    rm -f "$output_log"
    return 1
  fi
  rm -f "$output_log"
}

hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# Runs step NAME (a shell function) unless its stamp matches HASH.
step() {
  local name=$1 hash=$2
  local stamp="$venv/.stamp-$name"
  if [[ -f $stamp && $(<"$stamp") == "$hash" ]]; then
    return 0
  fi
  current_step=$name
  local start=$SECONDS
  log "$name ($distro, Python $py_version): $(step_says "$name") ..."
  "step_$name"
  echo "$hash" > "$stamp"
  log "$name: done in $((SECONDS - start)) s"
}

# What step NAME does, in a few words, for its start line.
step_says() {
  case $1 in
    venv) echo "creating the virtual environment $venv" ;;
    ros) echo "installing the ROS 2 wheels of requirements/ros2-$distro.txt (about a minute" \
      'the first time)' ;;
    tf2_msgs | composition_interfaces) echo "generating and building the $1 interfaces" \
      '(cmake, make)' ;;
    dev) echo 'installing the test, lint and documentation tools (requirements/dev.txt)' ;;
    package) echo "installing this package, editable, with the view's optional dependencies" \
      '(viser)' ;;
    bag) echo "installing the bag command's optional dependencies (rosbags)" ;;
  esac
}

step_venv() {
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
  pip_install --upgrade pip
}

step_ros() {
  pip_install -r "requirements/ros2-$distro.txt"
  rewrite_builder_paths
  link_identical_libraries
}

# The ROS 2 wheels carry some shared libraries several times over: libfastrtps.so, .so.2.14 and
# .so.2.14.5 are three copies (a wheel has no symbolic links), and each wheel's .libs folder has
# its own copy of libcrypto and libssl. One file and hard links to it for the others: about
# 60 MB less on disk, and nothing changes for the loader, which finds each by the same names.
link_identical_libraries() {
  local hash path
  local -A first=()
  while read -r hash path; do
    if [[ -n ${first[$hash]:-} ]]; then
      ln -f "${first[$hash]}" "$path"
    else
      first[$hash]=$path
    fi
  done < <(find "$venv" -type f -name '*.so*' -size +100k -print0 | xargs -0 -r sha256sum)
}

# The generators' CMake files carry the wheel builder's absolute paths to the Python and numpy
# headers, /opt/python/cpXY-cpXY/..., with XY the wheel's Python version: point them at this
# interpreter's, whatever the version.
rewrite_builder_paths() {
  local py_include np_include files left
  py_include=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  np_include=$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')
  files=$(grep -rlE --include='*.cmake' '/opt/python/cp3[0-9]+-cp3[0-9]+/' "$venv/share" || true)
  for f in $files; do
    sed -i -E \
      -e "s#/opt/python/cp3[0-9]+-cp3[0-9]+/lib/python3\.[0-9]+/site-packages/numpy/_core/include#$np_include#g" \
      -e "s#/opt/python/cp3[0-9]+-cp3[0-9]+/include/python3\.[0-9]+#$py_include#g" \
      "$f"
  done
  left=$(grep -rlE --include='*.cmake' '/opt/python/' "$venv/share" || true)
  if [[ -n $left ]]; then
    current_step=ros
    fail "builder paths this recipe does not know are left in: $left" \
      'extend rewrite_builder_paths in tools/bootstrap_env.sh to the new path'
  fi
}

# Generates and installs the interface package interfaces/NAME into the environment.
generate_interfaces() {
  local name=$1
  local build="$venv/build/$name"
  rm -rf "$build"
  mkdir -p "$build"
  (
    cd "$build"
    export CMAKE_PREFIX_PATH="$venv" AMENT_PREFIX_PATH="$venv"
    log "$name: configuring (cmake)"
    cmake "$repo/interfaces/$name" \
      -DCMAKE_INSTALL_PREFIX="$venv" \
      -DPython3_EXECUTABLE="$venv/bin/python" \
      -DBUILD_TESTING=OFF > cmake.log 2>&1 || { cat cmake.log >&2; exit 1; }
    log "$name: building (make -j$(nproc))"
    make -j"$(nproc)" install 2>&1 | show_progress "$name" make.log \
      || { tail -50 make.log >&2; exit 1; }
  )
  rm -rf "$build"  # kept only when the build fails, for its logs
}

step_tf2_msgs() {
  generate_interfaces tf2_msgs
  "$venv/bin/python" -c 'from tf2_msgs.msg import TFMessage; TFMessage()'
}

# The services of a component container (urdf_state_publisher_container serves them).
step_composition_interfaces() {
  generate_interfaces composition_interfaces
  "$venv/bin/python" -c 'from composition_interfaces.srv import LoadNode; LoadNode.Request()'
}

step_dev() {
  pip_install -r requirements/dev.txt
  pip_install --no-deps yourdfpy
}

# The package and urdf_state_publisher_view's optional dependencies: the demo shows its view.
step_package() {
  pip_install -e '.[view]'
}

# The optional dependencies of urdf_state_publisher_bag, as setup.py lists them.
step_bag() {
  pip_install -e '.[bag]'
}

if [[ $distro != none ]]; then
  # The tools that build tf2_msgs; a bare Debian machine may lack them.
  for tool in cmake make g++; do
    if ! command -v "$tool" > /dev/null; then
      current_step="installing the C/C++ build tools (missing: $tool)"
      log "$current_step ..."
      apt-get update -qq && apt-get install -y -qq cmake make g++ > /dev/null \
        || fail "$current_step" 'install cmake, make and g++ with your package manager'
      break
    fi
  done
fi

step venv "$(hash_of <(echo "$python"; "$python" --version))"
if [[ $distro != none ]]; then
  step ros "$(hash_of "requirements/ros2-$distro.txt")"
fi
# pip installs the package, mostly waiting on the network, while tf2_msgs compiles.
step package "$(hash_of setup.py setup.cfg package.xml)" &
package_job=$!
if [[ $distro != none ]]; then
  step tf2_msgs "$(hash_of "requirements/ros2-$distro.txt" interfaces/tf2_msgs/msg/*.msg \
    interfaces/tf2_msgs/CMakeLists.txt interfaces/tf2_msgs/package.xml)"
fi
wait "$package_job" || exit 1  # its failure is reported by the step itself
if [[ $level != demo ]]; then
  if [[ $distro != none ]]; then
    step composition_interfaces "$(hash_of "requirements/ros2-$distro.txt" \
      interfaces/composition_interfaces/srv/*.srv \
      interfaces/composition_interfaces/CMakeLists.txt \
      interfaces/composition_interfaces/package.xml)"
  fi
  step bag "$(hash_of setup.py)"
fi
if [[ $level == tests ]]; then
  step dev "$(hash_of requirements/dev.txt)"
fi

if [[ ${1:-} == run ]]; then
  shift
  export VIRTUAL_ENV=$venv PATH="$venv/bin:$PATH"
  exec "$@"
fi
log "ready: $venv ($distro, Python $py_version); run commands in it with" \
  "'tools/bootstrap_env.sh run CMD' or $venv/bin/python"
