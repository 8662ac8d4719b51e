"""A run's output written by a process of its own: the second core of a lone run.

Copying a bag is half reading, half writing, and a run also computes. On a machine with a core
that no other run uses (a lone run; a batch fills every core with runs of its own), the run
hands what it writes, in batches, to a process that holds the rosbags Writer, and reads and
computes the next messages while that one writes. The output is the same, message for message
and in the same order, as with the Writer in the run's own process.

The batches go through a pipe, which blocks the run when the writer is a batch behind: memory
stays flat. The writer process ignores SIGINT (the run decides what an interrupt leaves) and
ends when the run closes or aborts it, or when the run's process goes.
"""

from __future__ import annotations

from pathlib import Path
import signal
from typing import Any

from urdf_state_publisher.bag_output import open_writer

__all__ = ['WriterProcess']

# What the run gathers before handing it over: large enough that a batch costs one pipe
# transfer among thousands of messages, small enough to keep both processes busy.
BATCH_BYTES = 1 << 20


class WriterProcess:
    """A rosbags Writer of `path` in another process, with the calls a run makes of one.

    `add_connection` returns the connection's handle for `write`; the writer's errors are
    raised by the call that hands over the batch they came from, or by `close`.
    """

    def __init__(self, path: Path, distro: str, storage: str):
        import multiprocessing  # imported by the run that uses it: a batch's runs do not

        # A fork: the writer needs nothing this process has not imported already.
        context = multiprocessing.get_context('fork')
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_serve,
                                        args=(child, self._pipe, path, distro, storage),
                                        name='urdf_state_publisher_bag writer', daemon=True)
        self._process.start()
        child.close()
        self._batch: list[tuple] = []
        self._size = 0
        self._handles = 0

    def add_connection(self, topic: str, msgtype: str, *, typestore: Any = None,
                       msgdef: str | None = None, rihs01: str | None = None,
                       **settings: Any) -> int:
        # The definition made here, as rosbags makes it from a typestore, which does not cross
        # processes.
        if msgdef is None or rihs01 is None:
            msgdef, _ = typestore.generate_msgdef(msgtype, ros_version=2)
            rihs01 = typestore.hash_rihs01(msgtype)
        self._handles += 1
        self._batch.append((self._handles, topic, msgtype, msgdef, rihs01, settings))
        return self._handles

    def write(self, handle: int, log_ns: int, data: bytes) -> None:
        self._batch.append((handle, log_ns, data))
        self._size += len(data)
        if self._size >= BATCH_BYTES:
            self._hand_over()

    def close(self) -> None:
        """Write what is left and close the bag; raise what the writer raised."""
        self._hand_over()
        self._send(None)
        try:
            error = self._pipe.recv()
        except EOFError:  # killed (out of memory, a signal) before it could say anything
            error = RuntimeError('the output writer process ended before closing the bag')
        self._process.join()
        if error is not None:
            raise error

    def abort(self) -> None:
        """Stop writing at once (the run is given up and its output removed)."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join()

    def _hand_over(self) -> None:
        if self._batch:
            self._send(self._batch)
            self._batch, self._size = [], 0

    def _send(self, batch: list[tuple] | None) -> None:
        try:
            self._pipe.send(batch)
            return
        except (BrokenPipeError, ConnectionResetError):
            pass
        # The writer stopped: it sent why before it went. Raised out of the handler, so that the
        # failed send's frames are not kept as the error's context: they hold a view of the
        # pickled batch's buffer, and Python 3.12 crashes at exit freeing the two out of order.
        error = self._pipe.recv() if self._pipe.poll() else None
        self._process.join()
        raise error or RuntimeError('the output writer process ended')


def _serve(pipe: Any, runs_end: Any, path: Path, distro: str, storage: str) -> None:
    """The writer process: batches in, one reply when closed (None, or what it raised)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The run's end of the pipe, which the fork copied: closed, so that the pipe ends (and this
    # process with it) when the run's process goes, however it goes.
    runs_end.close()
    try:
        writer = open_writer(path, distro, storage)
        connections = {}
        while (batch := pipe.recv()) is not None:
            for item in batch:
                if len(item) == 3:  # a message: handle, log time, bytes
                    writer.write(connections[item[0]], item[1], item[2])
                else:  # a connection: handle, then add_connection's arguments
                    handle, topic, msgtype, msgdef, rihs01, settings = item
                    connections[handle] = writer.add_connection(
                        topic, msgtype, msgdef=msgdef, rihs01=rihs01, **settings)
        writer.close()
    except EOFError:
        return  # the run's process went: nobody to tell
    except Exception as error:  # noqa: BLE001 - the run raises it, whatever it is
        _reply(pipe, error)
        return
    _reply(pipe, None)


def _reply(pipe: Any, error: Exception | None) -> None:
    try:
        pipe.send(error)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the run's process went
    except Exception:  # noqa: BLE001 - an error that does not pickle: its text does
        pipe.send(RuntimeError(f'{type(error).__name__}: {error}'))
