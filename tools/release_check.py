"""The release check: every key of package.xml resolves to apt with rosdep on each released distro.

Each distro on the platform the build farm builds it on. The farm installs what the keys resolve
to and nothing else: a key that resolves to pip (a `python3-...-pip` key) or to nothing cannot
be released. rosdep reads rosdistro's data, which
lives in the ros/rosdistro repository, so this is a command of its own, not a test:

    python tools/release_check.py                      # online, as rosdep reads it by default
    python tools/release_check.py --rosdistro DIR      # offline, from a snapshot of rosdistro

Online, rosdep's default sources (the list `rosdep init` installs) and rosdistro's default
index are read. Offline, DIR holds rosdep/base.yaml, rosdep/python.yaml and index-v4.yaml with
the distribution files it names, as in the ros/rosdistro repository. Either way rosdep's cache
goes to a temporary folder: the user's own rosdep set-up is neither needed nor touched. Needs
rosdep and catkin_pkg (`make release-check` runs it in the development environment). Exit
status 0 when every key resolves to apt everywhere, 1 otherwise, 2 for unusable arguments.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile

REPO = Path(__file__).resolve().parent.parent
# The distros this package is released for, each with the platform the farm builds it on.
PLATFORMS = {'jazzy': 'ubuntu:noble', 'kilted': 'ubuntu:noble', 'lyrical': 'ubuntu:resolute'}


def package_keys(package_xml: Path) -> list[str]:
    """Every rosdep key of `package_xml`, as bloom reads it."""
    from catkin_pkg.package import parse_package

    package = parse_package(str(package_xml))
    return sorted({d.name for group in (
        package.buildtool_depends, package.build_depends, package.build_export_depends,
        package.exec_depends, package.test_depends, package.doc_depends) for d in group})


def resolved(output: str) -> dict[str, tuple[str, ...]]:
    """`rosdep resolve`'s output as key -> (installer, package, ...)."""
    table: dict[str, list[str]] = {}
    key = None
    for line in output.splitlines():
        if line.startswith('#ROSDEP['):
            key = line[len('#ROSDEP['):-1]
            table[key] = []
        elif key is not None:
            table[key].append(line.removeprefix('#'))
    return {key: tuple(value) for key, value in table.items()}


def rosdep_environment(home: Path, snapshot: Path | None) -> dict[str, str]:
    """An environment in which rosdep keeps its cache under `home` and reads `snapshot`.

    None: rosdep's default sources and rosdistro's default index, online.
    """
    sources = home / 'sources.list.d'
    sources.mkdir()
    if snapshot is None:
        from rosdep2.sources_list import DEFAULT_SOURCES_LIST_URL, download_default_sources_list

        try:
            text = download_default_sources_list()
        except OSError as error:  # urllib's URLError among them
            raise SystemExit(
                f'release_check: cannot read {DEFAULT_SOURCES_LIST_URL} ({error}); offline, '
                'give a snapshot of ros/rosdistro with --rosdistro DIR') from None
    else:
        text = ''.join(f'yaml file://{snapshot}/rosdep/{name}.yaml\n'
                       for name in ('base', 'python'))
    (sources / '20-default.list').write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith('ROS')}
    env.update(ROSDEP_SOURCE_PATH=str(sources), ROS_HOME=str(home / 'ros'))
    if snapshot is not None:
        env['ROSDISTRO_INDEX_URL'] = f'file://{snapshot}/index-v4.yaml'
    return env


def rosdep_command() -> str:
    found = (shutil.which('rosdep', path=str(Path(sys.executable).parent))
             or shutil.which('rosdep'))
    if found is None:
        raise SystemExit('release_check: rosdep is not installed: `pip install rosdep` (or run '
                         '`make release-check`, whose environment has it)')
    return found


def check(keys: list[str], env: dict[str, str], rosdep: str) -> list[str]:
    """The problems of `keys` on every distro of PLATFORMS, one line each; printed as found."""
    update = subprocess.run([rosdep, 'update'], env=env, capture_output=True, text=True)
    if update.returncode != 0:
        return [f'rosdep update failed: {update.stdout}{update.stderr}'.strip()]
    problems = []
    for distro, platform in PLATFORMS.items():
        found = len(problems)
        result = subprocess.run([rosdep, 'resolve', *keys, '--rosdistro', distro, '--os',
                                 platform], env=env, capture_output=True, text=True)
        table = resolved(result.stdout)
        print(f'{distro} ({platform}): ' + ', '.join(
            f'{key} -> {" ".join(value) or "?"}' for key, value in table.items()))
        for key in keys:
            value = table.get(key, ())
            if not value:
                problems.append(f'{distro} ({platform}): {key} does not resolve')
            elif value[0] != 'apt':
                problems.append(f'{distro} ({platform}): {key} resolves with {value[0]} '
                                f'({" ".join(value[1:])}), which the build farm cannot install')
        if result.returncode != 0 and len(problems) == found:  # none named for this distro
            problems.append(f'{distro}: rosdep resolve failed: {result.stderr.strip()}')
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog='release_check', description='Check that every key of package.xml resolves to an '
        'apt package with rosdep on ' + ', '.join(PLATFORMS) + '.')
    parser.add_argument('--rosdistro', metavar='DIR', type=Path,
                        help='a snapshot of the ros/rosdistro repository to read offline '
                             '(default: rosdep reads its default sources online)')
    args = parser.parse_args(argv)
    snapshot = args.rosdistro.resolve() if args.rosdistro is not None else None
    if snapshot is not None and not (snapshot / 'index-v4.yaml').is_file():
        parser.error(f'--rosdistro {args.rosdistro}: no index-v4.yaml there; give a folder '
                     'with the layout of the ros/rosdistro repository')
    rosdep = rosdep_command()
    keys = package_keys(REPO / 'package.xml')
    where = f'the snapshot {snapshot}' if snapshot else "rosdep's default sources (online)"
    print(f'{len(keys)} keys of package.xml, resolved with {where}')
    with tempfile.TemporaryDirectory(prefix='release_check_') as home:
        problems = check(keys, rosdep_environment(Path(home), snapshot), rosdep)
    for problem in problems:
        print(f'release_check: {problem}', file=sys.stderr)
    if problems:
        return 1
    print(f'release_check: every key resolves to apt on {", ".join(PLATFORMS)}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
