"""A batch's table of runs, runs.csv beside its outputs, and which outputs are already complete.

A batch of urdf_state_publisher_bag (several recordings into a folder, on the local pool or a
Dask cluster) keeps `OUTPUT/runs.csv` up to date as its runs finish: one row per recording,
the columns of COLUMNS. The file is rewritten whole under a temporary name, synced and renamed
over the last one, so that a reader (or a batch cut off at any instant) sees either the table
before a run or the one after it, never half a row.

The same command run again after an interruption does only the runs whose outputs are not
complete (`runs_to_do`), and keeps the rows of the others. An output is complete when it is a
rosbag2 bag whose metadata.yaml reads and whose every file it lists is there (`is_complete`):
a run writes its output under a temporary name and renames it into place only after
metadata.yaml is final (recorded.run, recorded.output.finish_output), so an output of the command
is
either whole or absent; the check is against anything else of that name (a copy cut short, a
folder made by hand), which the run then refuses as it refuses any output that exists.
"""

from __future__ import annotations

from collections import Counter
import csv
from dataclasses import dataclass
import io
import os
from pathlib import Path
import shutil
import socket
import time

import yaml

from urdf_state_publisher.recorded.folders import Recording
from urdf_state_publisher.recorded.run import EXIT_UNFIT, run_bag, RunOptions, RunSummary
from urdf_state_publisher.recorded.stops import stops_deferred

__all__ = ['COLUMNS', 'is_complete', 'recorded_run', 'RunRecord', 'RunsTable', 'TABLE_NAME',
           'this_worker']

TABLE_NAME = 'runs.csv'
# The table's columns, in order: the recording; its output; the run's exit status
# (recorded.run's); the messages it read; the /tf messages it wrote; its findings counted by kind
# ('joints clamped: 2; unknown parameter: 1', a description's own warnings as 'description');
# the seconds the run took on its worker; the worker (host/pid, or the Dask worker's
# address); why it failed or does not fit, in one line.
COLUMNS = ('input', 'output', 'status', 'messages', 'tf_written', 'findings', 'seconds',
           'worker', 'error')


@dataclass(frozen=True)
class RunRecord:
    """A run as its worker reports it: its summary, where it ran, how long it took."""

    summary: RunSummary
    worker: str
    seconds: float


def this_worker() -> str:
    """This process, as the table names a local worker: host/pid."""
    return f'{socket.gethostname()}/{os.getpid()}'


def recorded_run(source: Recording, target: Path, options: RunOptions, worker: str
                 ) -> RunRecord:
    """run_bag, timed, with the worker it ran on."""
    started = time.monotonic()
    summary = run_bag(source, target, options)
    return RunRecord(summary, worker, time.monotonic() - started)


def is_complete(output: Path) -> bool:
    """Whether `output` is a whole rosbag2 bag: metadata.yaml read, every file it lists there."""
    try:
        document = yaml.safe_load((output / 'metadata.yaml').read_text(encoding='utf-8'))
        names = document['rosbag2_bagfile_information']['relative_file_paths']
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, TypeError):
        return False
    return bool(names) and all((output / name).is_file() for name in names)


def remove_leftovers(output: Path) -> None:
    """The staging folders of `output`'s runs whose process was killed (SIGKILL, a lost node).

    A run stages its output beside it (recorded.run) and removes the folder itself, however it
    ends, unless its process dies; once the batch has the run's report, no attempt of it is
    writing any more.
    """
    for staging in output.parent.glob(f'.{output.name}.partial-*'):
        shutil.rmtree(staging, ignore_errors=True)


class RunsTable:
    """OUTPUT/runs.csv: a row per recording, written again as each run reports."""

    def __init__(self, folder: Path):
        self.path = folder / TABLE_NAME
        # By output name: a resumed batch may spell its paths otherwise.
        self.rows: dict[str, dict[str, str]] = {}
        try:
            with self.path.open(newline='', encoding='utf-8') as file:
                for row in csv.DictReader(file):
                    if row.get('output'):  # the columns of COLUMNS, any missing one empty
                        self.rows[Path(row['output']).name] = dict.fromkeys(COLUMNS, '') | {
                            key: value or '' for key, value in row.items() if key in COLUMNS}
        except FileNotFoundError:
            pass

    def runs_to_do(self, runs: list[tuple[Recording, Path]], overwrite: bool
                   ) -> tuple[list[int], dict[int, RunSummary]]:
        """The runs to do (their indices), and the summaries of those done before.

        With `overwrite`, every run. A complete output without a row (its batch cut off
        between its rename and its row) gets one that says so.
        """
        # The rows in the order of the batch's inputs, then any of an earlier batch's others.
        self.rows = {target.name: self.rows[target.name] for _, target in runs
                     if target.name in self.rows} | self.rows
        to_do, done_before = [], {}
        for k, (source, target) in enumerate(runs):
            if overwrite or not is_complete(target):
                to_do.append(k)
                self.rows.setdefault(target.name, {})  # its place, filled as it reports
                continue
            row = self.rows.get(target.name)
            if row is None or row['status'] == '':
                row = self.rows[target.name] = dict.fromkeys(COLUMNS, '') | {
                    'input': str(source), 'output': str(target),
                    'error': 'complete before this batch; not run again'}
            done_before[k] = _summary_of_row(row)
        return to_do, done_before

    def record(self, target: Path, record: RunRecord) -> None:
        """The row of the run into `target`, replacing an earlier one; the table rewritten."""
        summary = record.summary
        self.rows[target.name] = {
            'input': summary.input, 'output': str(target), 'status': str(summary.status),
            'messages': str(summary.messages), 'tf_written': str(_tf_written(summary)),
            'findings': '; '.join(f'{kind}: {count}' for kind, count in Counter(
                finding.kind or 'description' for finding in summary.findings).items()),
            'seconds': f'{record.seconds:.3f}', 'worker': record.worker,
            'error': summary.error or summary.unfit or ''}
        remove_leftovers(target)
        self.write()

    def write(self) -> None:
        """The table whole under a temporary name, synced, then renamed over the last one."""
        text = io.StringIO()
        writer = csv.DictWriter(text, COLUMNS, extrasaction='ignore', lineterminator='\n')
        writer.writeheader()
        writer.writerows(row for row in self.rows.values() if row)
        temporary = self.path.with_name(f'.{TABLE_NAME}.{os.getpid()}')
        with stops_deferred():  # a stop comes after the table is in place, not before
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with temporary.open('w', encoding='utf-8', newline='') as file:
                file.write(text.getvalue())
                file.flush()
                os.fsync(file.fileno())
            temporary.replace(self.path)


def _tf_written(summary: RunSummary) -> int:
    return sum(count for topic, count in (summary.written or {}).items()
               if topic.endswith('/tf'))


def _summary_of_row(row: dict[str, str]) -> RunSummary:
    """A run done before, as its row tells it (its findings counted, not listed)."""
    status = int(row['status'] or 0)
    why = row['error'] or None
    return RunSummary(input=row['input'], output=row['output'], status=status,
                      error=None if status == EXIT_UNFIT else why,
                      unfit=why if status == EXIT_UNFIT else None,
                      messages=int(row['messages'] or 0),
                      written={'/tf': int(row['tf_written'] or 0)})
