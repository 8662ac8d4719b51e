"""A Dask cluster on this machine, as the bag command's cluster tests and benchmark use one.

A `dask scheduler` and `dask worker` processes, each a process of its own as on a cluster, on
127.0.0.1 only: the scheduler picks its port and writes it in its scheduler file, which the
workers and the client read. Each worker runs under its nanny (Dask's default), which starts a
new worker when one dies, as a cluster's job does. Everything is ended, by its process group,
when the `with` block ends, whatever happened in it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

# How long a scheduler, a worker or a stopped process is waited for, loaded machine included.
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0


def client(address: str):
    """A distributed Client of the scheduler at `address`, not the process's default."""
    from distributed import Client

    return Client(address, timeout=START_TIMEOUT_S, set_as_default=False)


class DaskCluster:
    """`with DaskCluster(folder, workers=2) as cluster:` a scheduler and its workers."""

    def __init__(self, folder: Path, workers: int):
        self.folder, self.workers = folder, workers
        self.scheduler_file = folder / 'scheduler.json'
        self.processes: list[subprocess.Popen] = []
        self.address = ''
        self.client = None

    def __enter__(self) -> DaskCluster:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._spawn('scheduler', ['scheduler', '--host', '127.0.0.1', '--port', '0',
                                  '--dashboard-address', '127.0.0.1:0', '--scheduler-file',
                                  str(self.scheduler_file)])
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.address:
            if time.monotonic() > deadline or self.processes[0].poll() is not None:
                raise RuntimeError(f'the Dask scheduler did not start: {self._log("scheduler")}')
            try:
                self.address = json.loads(self.scheduler_file.read_text())['address']
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        for k in range(self.workers):
            self.start_worker(f'worker-{k}')
        self.client = client(self.address)
        self.wait_for_workers(self.workers)

    def start_worker(self, name: str) -> None:
        """One more worker, one thread, under its nanny."""
        self._spawn(name, ['worker', '--scheduler-file', str(self.scheduler_file),
                           '--nthreads', '1', '--host', '127.0.0.1', '--no-dashboard',
                           '--local-directory', str(self.folder / name), '--name', name])

    def wait_for_workers(self, count: int) -> None:
        """Until `count` workers are connected (the nannies' restarts included)."""
        self.client.wait_for_workers(count, timeout=START_TIMEOUT_S)

    def worker_pids(self) -> dict[str, int]:
        """Each worker's process, by the worker's address."""
        return self.client.run(os.getpid)

    def _spawn(self, name: str, arguments: list[str]) -> None:
        log = open(self.folder / f'{name}.log', 'wb')
        with log:
            self.processes.append(subprocess.Popen(
                [sys.executable, '-m', 'dask', *arguments], stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))

    def _log(self, name: str) -> str:
        return (self.folder / f'{name}.log').read_text(errors='replace')[-2000:]

    def close(self) -> None:
        """The client closed; every process group started ended, workers first."""
        if self.client is not None:
            self.client.close()
            self.client = None
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.processes = []
