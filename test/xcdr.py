"""sensor_msgs/JointState serialized by hand in the encodings of OMG DDS-XTypes 1.3 (ROS-free).

rclpy's serializer writes one of them only: plain CDR (XCDR version 1), little-endian. The
tests need the others a DDS writer may send, so this module writes them out, following the
specification's rules (XTypes 1.3, 7.4.3 and 7.6.3; the identifiers of DDSI-RTPS 2.5, 10.5):

- The encapsulation, two bytes then two option bytes: 00 00 / 00 01 PLAIN_CDR big- and
  little-endian (version 1); for version 2, 00 06 / 00 07 PLAIN_CDR2 for a FINAL type and
  00 08 / 00 09 DELIMIT_CDR2 for an APPENDABLE one.
- Every number is aligned to its size counted from the end of the encapsulation, but in
  version 2 to 4 at most: a float64 that version 1 puts at a multiple of 8 may sit at a
  multiple of 4 in version 2.
- Version 2 puts a DHEADER, a uint32 holding the size in bytes of what follows it, before
  every APPENDABLE struct (also a nested one) and before every sequence whose elements are not
  primitive (a sequence of strings: yes; of float64: no).

Which extensibility a ROS message has is not written down by ROS: its .idl files carry no
annotation, and XTypes 1.3 makes a struct without one APPENDABLE; other DDS tools map ROS
messages as @final (Cyclone DDS's idlc default) or @appendable (the mapping RTI publishes).
A DDS writer outside ROS may therefore send either of the two XCDR2 forms, and the tests feed
both. The six forms written here (plain CDR, PLAIN_CDR2 and DELIMIT_CDR2, both byte orders)
were once compared byte for byte with what pycdr2 1.0.0, Cyclone DDS's Python CDR, writes for
the same structs: identical (not part of the suite, which installs no second serializer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import struct

__all__ = ['APPENDABLE', 'FINAL', 'joint_state_bytes']

FINAL, APPENDABLE = 'final', 'appendable'
ENCAPSULATION = {(1, FINAL): 0x00, (1, APPENDABLE): 0x00,  # PLAIN_CDR (BE; +1: LE)
                 (2, FINAL): 0x06, (2, APPENDABLE): 0x08}  # PLAIN_CDR2, DELIMIT_CDR2


class _Writer:
    def __init__(self, order: str, version: int, extensibility: str):
        self.order = order
        self.version = version
        self.extensibility = extensibility
        self.body = bytearray()  # after the encapsulation: alignment counts from its start

    def align(self, size: int) -> None:
        size = min(size, 8 if self.version == 1 else 4)
        self.body.extend(b'\x00' * (-len(self.body) % size))

    def pack(self, code: str, *values) -> None:
        self.align(struct.calcsize(code[-1]))  # a run of one type: 'iI' is two of 4 bytes
        self.body.extend(struct.pack(self.order + code, *values))

    def string(self, text: str) -> None:
        raw = text.encode() + b'\x00'
        self.pack('I', len(raw))
        self.body.extend(raw)

    def delimited(self, write: Callable[[], None], needed: bool) -> None:
        """`write()`, preceded in version 2 by its DHEADER when `needed`."""
        if self.version == 1 or not needed:
            write()
            return
        self.pack('I', 0)
        start = len(self.body)
        write()
        struct.pack_into(self.order + 'I', self.body, start - 4, len(self.body) - start)

    def struct(self, write: Callable[[], None]) -> None:
        self.delimited(write, self.extensibility == APPENDABLE)

    def doubles(self, values: Sequence[float]) -> None:
        self.pack('I', len(values))  # a sequence of a primitive type: never a DHEADER
        if values:
            self.pack(f'{len(values)}d', *values)

    def strings(self, values: Sequence[str]) -> None:
        def write() -> None:
            self.pack('I', len(values))
            for value in values:
                self.string(value)

        self.delimited(write, needed=True)


def joint_state_bytes(sec: int, nanosec: int, frame_id: str, names: Sequence[str],
                      position: Sequence[float], velocity: Sequence[float] = (),
                      effort: Sequence[float] = (), *, big_endian: bool = False,
                      version: int = 1, extensibility: str = FINAL) -> bytes:
    """A JointState in XCDR `version` (1 or 2), with the structs' `extensibility`."""
    writer = _Writer('>' if big_endian else '<', version, extensibility)

    def header() -> None:
        writer.struct(lambda: writer.pack('iI', sec, nanosec))  # builtin_interfaces/Time
        writer.string(frame_id)

    def joint_state() -> None:
        writer.struct(header)  # std_msgs/Header
        writer.strings(names)
        writer.doubles(position)
        writer.doubles(velocity)
        writer.doubles(effort)

    writer.struct(joint_state)
    kind = ENCAPSULATION[(version, extensibility)] + (0 if big_endian else 1)
    return bytes([0, kind, 0, 0]) + bytes(writer.body)
