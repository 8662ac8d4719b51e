"""The batches a run hands its writer process: records framed in one buffer, through a pipe.

A batch is what the run writes between two hand-overs, records of (output connection, log
time, bytes). Pickled (multiprocessing's Connection), each batch cost the run a new buffer of a
megabyte whose pages the system maps afresh, a copy into it, and, at each write the pipe took
only in part, a copy of the rest: with every message published, that was a third of the run's
time. Here the run frames each record into one buffer that lasts as long as the pipe, and the
pipe takes views of it; the writer reads each batch into a buffer of its own and hands out views
of it, valid until it reads the next (rosbags copies what it writes at once).

On the pipe: a batch is its record count and size in bytes (u32 each; both 0 for the end), then
each record: its connection (u32), log time in ns (u64), size (u32) and bytes, little-endian.
"""

from __future__ import annotations

import os
import select
import struct

__all__ = ['BatchReceiver', 'BatchSender']

_BATCH = struct.Struct('<II')
_RECORD = struct.Struct('<IQI')


class BatchSender:
    """The run's end: `add` frames a record, `send` hands the batch over.

    A batch is at most `capacity` bytes on the pipe (but for one larger record alone): the
    pipe's size, so that a batch handed over while the writer has read the last one goes in
    at once, without waiting for the writer to read part of it.
    """

    def __init__(self, fd: int, capacity: int):
        self._fd = fd
        self._capacity = capacity
        self._buffer = bytearray(capacity)
        self._end = _BATCH.size
        self._count = 0

    def fits(self, size: int) -> bool:
        """Whether a record of `size` bytes goes into this batch (into an empty one, always)."""
        return not self._count or self._end + _RECORD.size + size <= self._capacity

    def add(self, handle: int, log_ns: int, data: bytes) -> None:
        """Frame one record into the batch (`fits` first)."""
        start = self._end + _RECORD.size
        end = start + len(data)
        if end > len(self._buffer):  # one record larger than a batch: a buffer that holds it
            self._buffer = bytearray(end)
        _RECORD.pack_into(self._buffer, self._end, handle, log_ns, len(data))
        self._buffer[start:end] = data
        self._end = end
        self._count += 1

    def send(self) -> None:
        """Hand the batch over, waiting while the pipe is full; BrokenPipeError if none reads."""
        if self._count:
            _BATCH.pack_into(self._buffer, 0, self._count, self._end - _BATCH.size)
            _write_all(self._fd, memoryview(self._buffer)[:self._end])
            self._end, self._count = _BATCH.size, 0

    def end(self) -> None:
        """Say that no batch follows (after `send`)."""
        _write_all(self._fd, _BATCH.pack(0, 0))


class BatchReceiver:
    """The writer's end: `receive` reads a batch, `wait` until one comes."""

    def __init__(self, fd: int):
        self._file = open(fd, 'rb', buffering=0)  # noqa: SIM115 - closed by close()
        self._header = bytearray(_BATCH.size)
        self._buffer = bytearray(0)
        # poll, not select: any descriptor number (the fork inherits the run's).
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def ready(self) -> bool:
        """Whether a batch (or the end, or EOF) can be read without waiting."""
        return bool(self._poll.poll(0))

    def wait(self) -> None:
        self._poll.poll()

    def close(self) -> None:
        self._file.close()

    def receive(self) -> list[tuple[int, int, memoryview]] | None:
        """The next batch's records, None at its end; EOFError when the run's process went.

        The bytes are views of this receiver's buffer: valid until the next call.
        """
        self._read_into(memoryview(self._header))
        count, size = _BATCH.unpack(self._header)
        if not count:
            return None
        if size > len(self._buffer):
            # A new buffer, not a resized one: the views of the last batch may still exist.
            self._buffer = bytearray(size)
        view = memoryview(self._buffer)[:size]
        self._read_into(view)
        records = []
        at = 0
        for _ in range(count):
            handle, log_ns, length = _RECORD.unpack_from(view, at)
            at += _RECORD.size
            records.append((handle, log_ns, view[at:at + length]))
            at += length
        return records

    def _read_into(self, view: memoryview) -> None:
        while view:
            read = self._file.readinto(view)
            if not read:
                raise EOFError('the run closed the batches before their end')
            view = view[read:]


def _write_all(fd: int, view: memoryview) -> None:
    while view:
        view = view[os.write(fd, view):]
