"""A run's output written by a process of its own, which also copies the recording.

A run copies most of a recording and computes the rest, and before its first message it loads
numpy, the description and the engine, which a copy does not. On a machine with a core that no
other run uses (a lone run; a batch fills every core with runs of its own), a second process
holds the output's rosbags Writer, forked as soon as the run knows where each recorded topic
goes (recorded.routing) and before those imports:

- it copies every recorded topic the run does not change (Role COPY and FEED), reading the
  input with files of its own, from its first message on, while the run is still loading;
- the run reads only the topics it computes from, and hands over, in batches, what it writes:
  the node's /tf, /tf_static and diagnostics, the recorded transforms it keeps;
- between a few copied messages, the writer writes the batches that have come.

Each topic is written by one of the two, in its order. The records of the two are interleaved
in the file as they came; rosbag2 and rosbags read a bag in log-time order whatever the order
of its records (MCAP: by its chunk and message indexes; sqlite3: ordered by timestamp). The
batches go through a pipe, which blocks the run when the writer is a batch behind: memory stays
flat. The writer process ignores SIGINT, SIGTERM and SIGHUP (the run decides what a stop
leaves) and ends when the run closes or aborts it, or when the run's process goes.
"""

from __future__ import annotations

from collections.abc import Sequence
import os
from pathlib import Path
import signal
from typing import Any

from urdf_state_publisher.recorded.input import BagInputError, open_bag
from urdf_state_publisher.recorded.output import (
    add_connections,
    BagOutputError,
    error_text,
    open_writer,
    OutputConnection,
    OutputFormat,
)
from urdf_state_publisher.recorded.pipe import BatchReceiver, BatchSender
from urdf_state_publisher.stop_signals import STOP_SIGNALS

__all__ = ['WriterProcess']

# What the run gathers before handing it over, and the size of the pipe: large enough that a
# batch costs one pipe transfer among thousands of messages, small enough to keep both
# processes busy.
BATCH_BYTES = 1 << 20
# How many recorded messages the writer copies between two looks at the pipe: a look is a
# system call, a copied message about twenty microseconds.
COPIES_BETWEEN_LOOKS = 32


class WriterProcess:
    """The output bag written by another process, with recorded.output.OutputBag's calls.

    `copies` maps the recorded topics this process copies from the recording at `source` (their
    input ids) to the index of their output connection. `handles[k]` is what `write` takes for
    the k-th connection. The writer's errors are raised by the call that hands over a batch
    after them, or by `close`, and again by every call after: a BagInputError when reading the
    recording failed, else a BagOutputError.
    """

    def __init__(self, path: Path, output: OutputFormat,
                 connections: Sequence[OutputConnection], source: Path,
                 copies: dict[int, int]):
        import multiprocessing  # imported by the run that uses it: a batch's runs do not

        # A fork: the writer needs nothing this process has not imported already.
        context = multiprocessing.get_context('fork')
        # Two pipes, one each way: the batches' (recorded.pipe), as large as a batch where the
        # system allows it, so that handing one over is one copy, not a wait for every 64 KiB
        # the writer reads; and the writer's one reply, pickled.
        batches_in, batches_out = os.pipe()
        _widen(batches_out)
        self._reply, reply_out = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_serve, args=(batches_in, reply_out, (batches_out, self._reply), path,
                                 output, list(connections), source, dict(copies)),
            name='urdf_state_publisher_bag writer', daemon=True)
        self._process.start()
        os.close(batches_in)
        reply_out.close()
        self._batches_fd: int | None = batches_out
        self._batches = BatchSender(batches_out, BATCH_BYTES)
        self._failure: Exception | None = None  # why the writer stopped, once known
        self.handles = list(range(len(connections)))

    def write(self, handle: int, log_ns: int, data: bytes) -> None:
        if not self._batches.fits(len(data)):
            self._send()
        self._batches.add(handle, log_ns, data)

    def close(self) -> dict[int, int]:
        """Write what is left and close the bag, the copying done.

        Return how many messages of each recorded topic it copied; raise what the writer raised.
        """
        self._send(end=True)
        try:
            error, copied = self._reply.recv()
        except EOFError:  # killed (out of memory, a signal) before it could say anything
            error = _killed()
        self._process.join()
        self._close_batches()
        if error is not None:
            self._failure = error
            raise error
        return copied

    def abort(self) -> None:
        """Stop writing at once (the run is given up and its output removed)."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._close_batches()

    def _close_batches(self) -> None:
        if self._batches_fd is not None:
            os.close(self._batches_fd)
            self._batches_fd = None

    def _send(self, end: bool = False) -> None:
        """Hand the batch over (and then the end); raise what the writer raised if it stopped."""
        if self._failure is not None:
            raise self._failure
        try:
            self._batches.send()
            if end:
                self._batches.end()
            return
        except (BrokenPipeError, ConnectionResetError):
            pass
        # The writer stopped: it sent why before it went. Raised out of the handler, so that the
        # failed send's frames are not kept as the error's context: they hold a view of the
        # batch's buffer, and Python 3.12 crashes at exit freeing the two out of order.
        try:
            error = self._reply.recv()[0] if self._reply.poll() else None
        except EOFError:  # killed before it could say anything
            error = None
        self._process.join()
        self._failure = error or _killed()
        raise self._failure


def _killed() -> BagOutputError:
    """What the run raises when its writer process went without a word."""
    return BagOutputError('its writer process ended before closing it (killed: out of memory, '
                          'or by a signal)')


def _widen(fd: int) -> None:
    """The pipe of `fd` made BATCH_BYTES large, where the system has the call (Linux)."""
    import fcntl

    if hasattr(fcntl, 'F_SETPIPE_SZ'):
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, BATCH_BYTES)
        except OSError:  # above the system's limit (/proc/sys/fs/pipe-max-size): as it is
            pass


def _serve(batches_fd: int, reply: Any, runs_ends: tuple[int, Any], path: Path,
           output: OutputFormat, connections: list[OutputConnection], source: Path,
           copies: dict[int, int]) -> None:
    """The writer process: the copies and the run's batches in, one reply when closed.

    The reply: (None, how many messages of each recorded topic it copied), or (what it raised,
    None).
    """
    for number in STOP_SIGNALS:  # the run decides what a stop leaves, and ends this process
        signal.signal(number, signal.SIG_IGN)
    # The run's ends of the pipes, which the fork copied: closed, so that the batches' pipe ends
    # (and this process with it) when the run's process goes, however it goes.
    runs_batches, runs_reply = runs_ends
    os.close(runs_batches)
    runs_reply.close()
    batches = BatchReceiver(batches_fd)
    try:
        writer = open_writer(path, output)
        handles = add_connections(writer, connections)
        run_done = False

        def take_batches() -> bool:
            """Write the run's batches that have come; whether the run has closed."""
            while batches.ready():
                batch = batches.receive()
                if batch is None:
                    return True
                for handle, log_ns, data in batch:
                    writer.write(handles[handle], log_ns, data)
            return False

        copied = dict.fromkeys(copies, 0)
        if copies:
            # Files of its own: those of the run's input, shared by the fork, have the run's
            # read positions.
            recording = open_bag(source)
            try:
                looked = 0
                for topic_id, log_ns, data in recording.messages(copies):
                    writer.write(handles[copies[topic_id]], log_ns, data)
                    copied[topic_id] += 1
                    looked += 1
                    if looked == COPIES_BETWEEN_LOOKS and not run_done:
                        looked = 0
                        run_done = take_batches()
            finally:
                recording.close()
        while not run_done:
            batches.wait()
            run_done = take_batches()
        writer.close()
    except EOFError:
        return  # the run's process went: nobody to tell
    except BagInputError as error:  # the recording, read for the copies
        _reply(reply, (error, None))
        return
    except Exception as error:  # noqa: BLE001 - whatever the storage raises
        _reply(reply, (BagOutputError(error_text(error)), None))
        return
    finally:
        batches.close()
    _reply(reply, (None, copied))


def _reply(pipe: Any, reply: tuple) -> None:
    try:
        pipe.send(reply)  # its error is one of ours, made of a line: it pickles
    except (BrokenPipeError, ConnectionResetError):
        pass  # the run's process went
