"""How to install an optional extra (rosbags, distributed) for the Python that runs the command.

The bag command needs rosbags, and a batch on a cluster distributed; neither is a ROS package.
Where one is missing, the command prints the one line that installs it here.
"""

from __future__ import annotations

from pathlib import Path
import sys

__all__ = ['install_command', 'this_python']


def install_command(python: str, in_virtual_environment: bool, externally_managed: bool,
                    package: str = 'rosbags') -> str:
    """The command that installs `package` for `python`, as the Recorded data page gives it.

    A virtual environment's own pip; else the user's site-packages, which a distribution that
    manages its Python (PEP 668: Ubuntu 24.04, Debian 12) is told is meant.
    """
    if in_virtual_environment:
        return f'{python} -m pip install {package}'
    flag = ' --break-system-packages' if externally_managed else ''
    return f'{python} -m pip install --user{flag} {package}'


def this_python() -> tuple[str, bool, bool]:
    """This interpreter; whether it is a virtual environment's; whether it is managed.

    Managed by the distribution: its standard library has an EXTERNALLY-MANAGED file (PEP 668).
    """
    import sysconfig

    marker = Path(sysconfig.get_path('stdlib')) / 'EXTERNALLY-MANAGED'
    return sys.executable, sys.prefix != sys.base_prefix, marker.exists()
