#!/usr/bin/env bash
# Prints the path of a working Python interpreter, given a command, a path or a version:
#   tools/find_python.sh python3        the command on PATH
#   tools/find_python.sh 3.12           python3.12 on PATH, else a pyenv-installed 3.12.x
#   tools/find_python.sh python3.12     the same
# Fails with a message saying how to get one when none is found.
set -euo pipefail

want=${1:?usage: tools/find_python.sh COMMAND|PATH|VERSION}

# Runs: a pyenv shim for a version that is installed but not selected is on PATH and fails.
runs() { "$1" -c 'import sys' > /dev/null 2>&1; }

if [[ $want != [0-9]* ]] && command -v "$want" > /dev/null && runs "$want"; then
  command -v "$want"
  exit 0
fi

version=${want#python}
if [[ ! $version =~ ^3\.[0-9]+$ ]]; then
  echo "find_python: '$want' is neither a working command nor a version like 3.12" >&2
  exit 1
fi
if command -v "python$version" > /dev/null && runs "python$version"; then
  command -v "python$version"
  exit 0
fi

# pyenv keeps interpreters off PATH unless selected; look where it installs them.
roots=()
if command -v pyenv > /dev/null; then
  roots+=("$(pyenv root)")
fi
roots+=("${PYENV_ROOT:-}" "$HOME/.pyenv")
for root in "${roots[@]}"; do
  [[ -n $root && -d $root/versions ]] || continue
  # The newest patch release of that version.
  found=$(find "$root/versions" -mindepth 3 -maxdepth 3 \
    -path "*/versions/$version.*/bin/python$version" | sort -V | tail -n 1)
  if [[ -n $found ]] && runs "$found"; then
    echo "$found"
    exit 0
  fi
done

echo "find_python: no working Python $version found (not on PATH as python$version, not in" \
  "pyenv). Install it (pyenv install $version, or your distribution's python$version package)" \
  "or give its path: PYTHON=/path/to/python$version" >&2
exit 1
