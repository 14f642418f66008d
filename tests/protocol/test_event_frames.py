"""`EventFrames`: an event packed once, each recipient's `seq` spliced in, the bytes unchanged."""

import dataclasses
from typing import ClassVar

import msgpack
from hypothesis import given
from hypothesis import strategies as st

from protocol.messages import MESSAGE_TYPES, CardPlayed, Event, Message
from protocol.wire import EventFrames, _map_header_size, encode
from tests.protocol.strategies import struct_strategy

EVENT_TYPES = [cls for cls in MESSAGE_TYPES.values() if issubclass(cls, Event)]

# Every size class of a msgpack unsigned integer (fixint, uint8, uint16, uint32, uint64).
SEQS = st.sampled_from([0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**40])


def test_every_event_type_is_covered() -> None:
    assert len(EVENT_TYPES) >= 20
    assert CardPlayed in EVENT_TYPES


@given(
    message=st.one_of([struct_strategy(cls) for cls in EVENT_TYPES]),
    seqs=st.lists(st.one_of(SEQS, st.integers(0, 2**63 - 1)), min_size=1, max_size=4),
)
def test_the_frame_is_the_encoding_with_that_seq(message: Message, seqs: list[int]) -> None:
    assert isinstance(message, Event)
    frames = EventFrames(message)
    assert frames.message is message
    for seq in seqs:
        assert frames.frame(seq) == encode(dataclasses.replace(message, seq=seq))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Wide(Event):
    """Not a registered message: an event with more than 15 keys, for a map16 header."""

    TYPE: ClassVar[str] = "wide"
    f0: int = 0
    f1: int = 1
    f2: int = 2
    f3: int = 3
    f4: int = 4
    f5: int = 5
    f6: int = 6
    f7: int = 7
    f8: int = 8
    f9: int = 9
    f10: int = 10
    f11: int = 11
    f12: int = 12
    f13: int = 13
    f14: int = 14
    f15: str | None = None  # optional and None: left out of the map


def test_an_event_with_a_three_byte_map_header() -> None:
    message = _Wide(seq=0, f15="x")
    assert encode(message)[4] == 0xDE  # map16: 17 keys
    frames = EventFrames(message)
    for seq in (1, 300, 2**33):
        assert frames.frame(seq) == encode(dataclasses.replace(message, seq=seq))
    short = _Wide()  # f15 left out: 16 keys, still map16
    assert EventFrames(short).frame(5) == encode(dataclasses.replace(short, seq=5))


def test_the_map_header_sizes_are_msgpacks() -> None:
    packer = msgpack.Packer()
    for size in (0, 1, 15, 16, 65535, 65536, 2**20):
        assert _map_header_size(size) == len(packer.pack_map_header(size)), size
