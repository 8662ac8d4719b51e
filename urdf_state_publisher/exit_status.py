"""The exit statuses of the package's commands, one meaning each, for scripts to read alike.

    0  OK        the work is done (inspect: the description is usable)
    1  FAILED    bad input or an error (one line on stderr says which)
    2  UNFIT     done, but the description and the recording do not fit (the bag command)
    3  FINDINGS  done, but with --strict: the node would have warned (inspect: warnings)
    64 USAGE     the command line is wrong: nothing was done (EX_USAGE of sysexits.h)

A usage error has a status of its own, apart from every outcome: argparse's default, 2, would
read as "does not fit". `ArgumentParser` is argparse's, with that status and one line. Nothing
here imports ROS.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

__all__ = ['ArgumentParser', 'FAILED', 'FINDINGS', 'OK', 'UNFIT', 'USAGE']

OK, FAILED, UNFIT, FINDINGS = 0, 1, 2, 3
USAGE = 64


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors exit with USAGE after one line on stderr.

    The line names what is wrong (argparse's message: the option, the value, the choices) and
    where the usage is; the usage itself is --help's.
    """

    def print_help(self, file=None) -> None:
        """--help on stdout, a closed pipe raised to the caller (cli.quiet_pipe: SIGPIPE).

        argparse drops the error from Python 3.11 on and raises it before: the same end on
        every Python, the one every command has.
        """
        (file or sys.stdout).write(self.format_help())

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f'{self.prog}: {message} (usage: {self.prog} --help)\n')
        sys.exit(USAGE)
