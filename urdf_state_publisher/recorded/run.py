"""One run of urdf_state_publisher_bag: a plain function call, paths and settings in, a summary.

`run_bag(input, output, options)` reads one recording, feeds the node's engine its messages in
log-time order with the bag's log time as its clock, and writes the output bag (see
recorded/command.py for
what it holds). It shares nothing with another run, so that runs can go to a pool of processes
(recorded/command.py's batch) or to a distributed engine that calls the same function elsewhere. It
raises
only KeyboardInterrupt; everything else is in the summary's status:

- EXIT_OK (0): the output was written and /tf computed for the recording;
- EXIT_FAILED (1): bad input or an error, nothing written (`error` says why, in one line);
- EXIT_UNFIT (2): written, but the description and the recording do not fit (`unfit` says
  which joints): no /tf at all, or moving joints the recording never names;
- EXIT_FINDINGS (3): written and fitting, but the node would have warned (with `strict`).

A run has two parts: its plan (recorded.plan), made from names without numpy, and the engine fed
the recording (recorded.feed), imported once a run with a second process (recorded.writer) has it
copying. This module carries them out, the output written under a temporary name and renamed
when it is complete.
"""

from __future__ import annotations

import os
from pathlib import Path
import secrets
import shutil
import sqlite3
import time
from typing import Any

from urdf_state_publisher.recorded.folders import SplitRecording
from urdf_state_publisher.recorded.input import BagInputError
from urdf_state_publisher.recorded.output import (
    BagOutputError,
    error_text,
    finish_output,
    OutputBag,
)
from urdf_state_publisher.recorded.plan import (
    BagError,
    EXIT_FAILED,
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNFIT,
    Finding,
    NameTally,
    plan_run,
    RunOptions,
    RunPlan,
    RunSummary,
)
from urdf_state_publisher.recorded.stops import begin, done, stops_deferred

# What a run is asked and answers are defined with its plan, and named here too, beside run_bag.
__all__ = ['EXIT_FAILED', 'EXIT_FINDINGS', 'EXIT_OK', 'EXIT_UNFIT', 'Finding', 'NameTally',
           'run_bag', 'RunOptions', 'RunSummary']


def run_bag(input_path: Path | SplitRecording, output: Path, options: RunOptions
            ) -> RunSummary:
    """Process one recording into `output`; the summary says how it went (module docstring).

    `input_path`: a recording's path, or the pieces of a split ROS 1 recording (recorded.folders).
    """
    begin()
    try:
        source = input_path if isinstance(input_path, SplitRecording) else Path(input_path)
        return _run(plan_run(source, Path(output), options))
    except (BagError, BagInputError, BagOutputError) as error:
        if isinstance(error, BagOutputError):
            error = f'{output}: cannot write it ({error}); nothing is written'
        # One line, whatever a library's message holds (YAML errors quote the text).
        return RunSummary(input=str(input_path), output=None, status=EXIT_FAILED,
                          error=' '.join(str(error).split()))


def _run(plan: RunPlan) -> RunSummary:
    """The plan carried out: the output written under a temporary name, then renamed."""
    started = time.monotonic()
    output = plan.output.resolve()
    # Named apart from any other attempt's: on a cluster's shared filesystem a process of the
    # same pid on another host, or a killed attempt's folder left behind (recorded.table), is
    # there.
    staging = output.parent / f'.{output.name}.partial-{os.getpid()}-{secrets.token_hex(4)}'
    # Folders above OUTPUT that do not exist are made, and go again if the run does not
    # complete.
    made = next((folder for folder in reversed(output.parents) if not folder.exists()), None)
    # An output that --overwrite replaces is set aside here until the new one is in place, and
    # put back if the run stops in between.
    replaced = staging / f'{output.name}.replaced'
    writer: Any = None
    complete = False
    try:
        try:
            staging.mkdir(parents=True)
        except OSError as error:
            raise BagOutputError(error_text(error)) from None
        if plan.options.writer_process:
            from urdf_state_publisher.recorded.writer import WriterProcess

            writer = WriterProcess(staging / output.name, plan.output_format, plan.connections,
                                   plan.input_path, plan.copies)
        else:
            writer = OutputBag(staging / output.name, plan.output_format, plan.connections)
        # The engine's modules, imported while a writer process copies.
        from urdf_state_publisher.recorded.feed import BagFeed

        feed = BagFeed(plan, writer)
        feed.run()
        copied = writer.close()
        elapsed = time.monotonic() - started
        try:
            finish_output(staging / output.name, plan.output_format)
            if output.exists():
                output.rename(replaced)
            with stops_deferred():  # a stop as the output moves in comes after it: it is done
                (staging / output.name).rename(output)
                done()
        except (OSError, sqlite3.Error) as error:  # a full disk while compressing, ...
            raise BagOutputError(error_text(error)) from None
        complete = True
    finally:
        with stops_deferred():  # a second Ctrl-C does not cut the clean-up in half
            if not complete:
                if writer is not None:
                    writer.abort()  # before its files go
                if replaced.exists():  # the old output back, the new one gone if it was moved
                    if output.exists():
                        shutil.rmtree(output) if output.is_dir() else output.unlink()
                    replaced.rename(output)
            plan.input.close()
            shutil.rmtree(staging if complete or made is None else made, ignore_errors=True)
    return feed.summary(output, copied, elapsed)
