"""A batch of urdf_state_publisher_bag on the workers of an existing Dask cluster.

`urdf_state_publisher_bag ... --cluster tcp://host:8786` (or Dask's own DASK_SCHEDULER_ADDRESS)
sends each run of a batch to the workers of the Dask scheduler at that address; each worker
calls run_bag, reading and writing paths that every worker sees (a cluster's shared
filesystem). The inputs, the outputs and runs.csv (recorded.table) are as a local batch's.

A worker that dies (killed, its node pre-empted or lost) takes its run with it: the scheduler
runs it again on another worker, up to Dask's `distributed.scheduler.allowed-failures` times
(the scheduler's setting, 3 by default), then reports it lost (KilledWorker), and the run is
reported failed. A run writes its output under a temporary name and renames it into place
once whole (recorded.run), so a killed attempt leaves no output, only its staging folder, removed
once the run reports (recorded.table). A run that fails on its input returns status 1, which is a
result, not an error: it is reported, not retried. `distributed` is imported only here.
"""

from __future__ import annotations

from dataclasses import replace
import os
from pathlib import Path
import sys
import time
from typing import Any
import uuid

from urdf_state_publisher.recorded.folders import Recording, SplitRecording
from urdf_state_publisher.recorded.input import BagInputError, recording_bytes
from urdf_state_publisher.recorded.memory_reuse import memory_kept_for_reuse
from urdf_state_publisher.recorded.progress import BatchProgress, BatchState
from urdf_state_publisher.recorded.run import EXIT_FAILED, EXIT_OK, RunOptions, RunSummary
from urdf_state_publisher.recorded.stops import done
from urdf_state_publisher.recorded.table import is_complete, recorded_run, RunRecord, RunsTable
from urdf_state_publisher.words import counted

__all__ = ['ADDRESS_VARIABLE', 'cluster_address', 'run_on_cluster']

# Dask's own variable for the scheduler a client connects to.
ADDRESS_VARIABLE = 'DASK_SCHEDULER_ADDRESS'
# How long a scheduler that does not answer is waited for.
CONNECT_TIMEOUT_S = 30


def cluster_address(given: str | None) -> str | None:
    """The scheduler: --cluster, else DASK_SCHEDULER_ADDRESS; None for the local pool."""
    return given or os.environ.get(ADDRESS_VARIABLE) or None


def run_on_cluster(address: str, runs: list[tuple[Recording, Path]], to_do: list[int],
                   options: RunOptions, table: RunsTable) -> dict[int, RunSummary]:
    """Runs `to_do` of `runs` on the cluster at `address`; each one's summary, by index.

    Each run's row goes into `table` as it reports. Raises BagInputError (one line) if
    distributed is not installed or no scheduler answers, KeyboardInterrupt on a stop.
    """
    try:
        from distributed import Client
    except ImportError:
        from urdf_state_publisher.recorded.extras import install_command, this_python

        raise BagInputError(
            f'--cluster needs the distributed package (Dask); for this Python: '
            f'{install_command(*this_python(), package="distributed")} '
            '(doc/recorded-data.md, "On a cluster")') from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        raise BagInputError(f'--cluster {address}: no Dask scheduler answers there '
                            f'({" ".join(str(error).split())}); start one (dask scheduler) '
                            'or give its address') from None
    try:
        with client.as_current():  # the client that distributed.wait uses
            return _run_all(client, *_for_workers(runs, options), to_do, table)
    finally:
        client.close()


def _for_workers(runs: list[tuple[Recording, Path]], options: RunOptions
                 ) -> tuple[list[tuple[Recording, Path]], RunOptions]:
    """The runs and options with every path absolute: a worker's own folder is another.

    The recordings, the outputs, the description and the --params-file files; the rest of
    the words are the node's and xacro's own.
    """
    def absolute(recording: Recording) -> Recording:
        if isinstance(recording, SplitRecording):
            return replace(recording, pieces=tuple(p.absolute() for p in recording.pieces))
        return recording.absolute()

    words = list(options.ros_args)
    for k, word in enumerate(words[:-1]):
        if word == '--params-file':
            words[k + 1] = str(Path(words[k + 1]).absolute())
    description = options.description
    if description:
        description = (str(Path(description[0]).absolute()), *description[1:])
    return ([(absolute(source), target.absolute()) for source, target in runs],
            replace(options, description=description, ros_args=tuple(words)))


def _run_all(client: Any, runs: list[tuple[Recording, Path]], options: RunOptions,
             to_do: list[int], table: RunsTable) -> dict[int, RunSummary]:
    from distributed import wait
    from distributed.client import TimeoutError as WaitTimeout

    batch = uuid.uuid4().hex[:8]
    # The longest runs first, as on the local pool: the scheduler takes higher priorities first.
    longest_first = sorted(to_do, key=lambda k: -recording_bytes(runs[k][0]))
    # No retries: Dask retries a task that raises, and a run raises nothing (its failures are
    # its status, which another attempt would only repeat); a run whose worker dies is run
    # again by the scheduler itself (allowed-failures).
    futures = {
        client.submit(_cluster_run, *runs[k], options, key=f'bag-{runs[k][1].name}-{batch}',
                      pure=False, retries=0, priority=len(longest_first) - rank): k
        for rank, k in enumerate(longest_first)}
    progress = _Progress(client, len(to_do), set(f.key for f in futures))
    progress.start()
    summaries: dict[int, RunSummary] = {}
    pending = set(futures)
    try:
        while pending:
            try:
                finished = wait(pending, timeout=progress.every, return_when='FIRST_COMPLETED'
                                ).done
            except WaitTimeout:
                finished = set()
            for future in finished:
                k = futures[future]
                record = _record_of(future, runs[k][0])
                future.release()
                table.record(runs[k][1], record)
                summaries[k] = record.summary
                progress.reported(record.summary)
            pending -= finished
            progress.show()
        done()  # every run has reported: a stop from here on ends the batch after its table
    except KeyboardInterrupt:
        client.cancel(list(pending))
        progress.end()
        raise KeyboardInterrupt(
            f'{len(runs) - len(to_do) + progress.written} of {len(runs)} outputs written '
            'before it; a run under way on a worker goes on there, and writes its whole output '
            'or nothing') from None
    progress.end()
    return summaries


def _cluster_run(source: Recording, target: Path, options: RunOptions) -> RunRecord:
    """A run on a Dask worker, the worker named by its address.

    Its output was not complete when the batch sent it: complete now (without --overwrite),
    an attempt of this run wrote it and its worker was lost before the batch had its report
    (the scheduler then runs it again). The output is kept; what the run found is not known.
    """
    from distributed import get_worker

    worker = get_worker().address
    if not options.overwrite and is_complete(target):
        return RunRecord(RunSummary(
            input=str(source), output=str(target), status=EXIT_OK,
            error='written by an earlier attempt, whose worker was lost before it reported'),
            worker, 0.0)
    with memory_kept_for_reuse():  # a nanny's worker unmaps every large buffer it frees
        return recorded_run(source, target, options, worker)


def _record_of(future: Any, source: Recording) -> RunRecord:
    """A finished future's record; a run lost with its workers, or that raised, as failed."""
    from distributed import KilledWorker

    if future.status == 'finished':
        return future.result()
    error = future.exception() if future.status == 'error' else None
    if error is None:  # cancelled: the scheduler went, or restarted
        why = f'{source}: lost with the Dask scheduler; run the command again to do it'
        worker = ''
    elif isinstance(error, KilledWorker):
        why = (f'{source}: its worker died each of the {error.allowed_failures + 1} times it '
               'ran (distributed.scheduler.allowed-failures); nothing written')
        worker = getattr(error.last_worker, 'address', '')
    else:
        why = f'{source}: on its Dask worker: {type(error).__name__}: {error}'
        worker = ''
    summary = RunSummary(input=str(source), output=None, status=EXIT_FAILED,
                         error=' '.join(why.split()))
    return RunRecord(summary, worker, 0.0)


class _Progress:
    """The batch's progress (recorded.progress), the runs counted running as the scheduler does.

    First, one line: where the runs go, how many workers there are, the Dask dashboard.
    """

    def __init__(self, client: Any, total: int, keys: set[str]):
        from urdf_state_publisher.recorded.progress import PROGRESS_PERIOD_S

        self.client, self.total, self.keys = client, total, keys
        self.every = PROGRESS_PERIOD_S
        terminal = sys.stderr.isatty()
        self.progress = BatchProgress(
            sys.stderr, terminal, time.monotonic(),
            os.get_terminal_size(sys.stderr.fileno()).columns if terminal else 0)
        self.summaries: list[RunSummary] = []

    @property
    def written(self) -> int:
        return sum(1 for summary in self.summaries if summary.output is not None)

    def start(self) -> None:
        link = self.client.dashboard_link
        print(f'{counted(self.total, "run")} on the Dask cluster at '
              f'{self.client.scheduler.address}: {counted(len(self.client.nthreads()), "worker")} '
              'now' + (f', dashboard {link}' if link else ''), file=sys.stderr, flush=True)

    def reported(self, summary: RunSummary) -> None:
        self.summaries.append(summary)

    def show(self) -> None:
        # A worker is sent a few more runs than it has threads (Dask's worker-saturation): the
        # rest wait there, and are counted left, not running.
        threads = self.client.nthreads()
        running = sum(min(sum(1 for key in keys if key in self.keys), threads.get(worker, 0))
                      for worker, keys in self.client.processing().items())
        self.progress.show(BatchState(
            total=self.total, done=len(self.summaries), running=running,
            not_ok=sum(s.status != EXIT_OK for s in self.summaries),
            recorded_seconds=sum(s.bag_seconds for s in self.summaries)), time.monotonic())

    def end(self) -> None:
        self.progress.clear()
