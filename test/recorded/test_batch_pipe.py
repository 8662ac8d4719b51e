"""The batches a run hands its writer process (recorded.pipe), on a real pipe.

What is sent is read back twice: by the writer's own receiver, and by a parser written here
from the format recorded.pipe's docstring states (counts, sizes and records, little-endian), so
that the two ends cannot agree on a wrong format between themselves.
"""

from __future__ import annotations

import os
import struct

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from urdf_state_publisher.recorded.pipe import BatchReceiver, BatchSender

pytestmark = pytest.mark.ros_free

CAPACITY = 96  # bytes a batch holds on the pipe: a few of the records below

records_strategy = st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1),
                                      st.binary(max_size=3 * CAPACITY)), max_size=40)


def send_all(records, capacity: int = CAPACITY) -> bytes:
    """What the sender puts on the pipe for `records`, written as the writer process does."""
    reading, writing = os.pipe()  # all of it fits a pipe's 64 KiB: read once written
    try:
        sender = BatchSender(writing, capacity)
        for handle, log_ns, data in records:
            if not sender.fits(len(data)):
                sender.send()
            sender.add(handle, log_ns, data)
        sender.send()
        sender.end()
        os.close(writing)
        writing = None
        with os.fdopen(reading, 'rb') as pipe:
            reading = None
            return pipe.read()
    finally:
        for fd in (reading, writing):
            if fd is not None:
                os.close(fd)


def parse(wire: bytes) -> list[list[tuple[int, int, bytes]]]:
    """The batches on the pipe, read by the stated format, up to the end mark."""
    batches, at = [], 0
    while True:
        count, size = struct.unpack_from('<II', wire, at)
        at += 8
        if count == 0:
            assert size == 0
            assert at == len(wire), 'bytes after the end'
            return batches
        batch, end = [], at + size
        for _ in range(count):
            handle, log_ns, length = struct.unpack_from('<IQI', wire, at)
            batch.append((handle, log_ns, wire[at + 16:at + 16 + length]))
            at += 16 + length
        assert at == end, 'the batch size is not the size of its records'
        batches.append(batch)


@settings(max_examples=200, deadline=None)
@given(records_strategy)
def test_the_pipe_carries_every_record_in_batches_no_larger_than_the_pipe(records):
    batches = parse(send_all(records))
    assert [record for batch in batches for record in batch] == records
    for batch in batches:
        size = sum(16 + len(data) for _, _, data in batch) + 8
        # No batch is empty; one larger than the capacity is a single record.
        assert batch and (size <= CAPACITY or len(batch) == 1)
    # Each batch is as full as it can be: the next one's first record did not fit it.
    for batch, following in zip(batches, batches[1:]):
        size = sum(16 + len(data) for _, _, data in batch) + 8
        assert size + 16 + len(following[0][2]) > CAPACITY


@settings(max_examples=200, deadline=None)
@given(records_strategy)
def test_the_writer_receives_what_the_run_sent(records):
    wire = send_all(records)
    reading, writing = os.pipe()
    os.write(writing, wire)
    os.close(writing)
    receiver = BatchReceiver(reading)
    received = []
    while (batch := receiver.receive()) is not None:
        # Views of the receiver's buffer, valid until the next batch: copied at once.
        received.extend((handle, log_ns, bytes(data)) for handle, log_ns, data in batch)
    receiver.close()
    assert received == records


def test_a_run_gone_mid_batch_is_an_eof():
    wire = send_all([(1, 2, bytes(50)), (3, 4, bytes(50))])
    reading, writing = os.pipe()
    os.write(writing, wire[:30])  # the first batch cut short, then the run's end closed
    os.close(writing)
    receiver = BatchReceiver(reading)
    with pytest.raises(EOFError):
        receiver.receive()
    receiver.close()
