"""The lobby's listing in pages that fit one frame, whatever the tables (pure: no trio, no IO).

A table's options are echoed in its listing entry, and a ruleset's list options (a hand schedule,
a pass cycle) may be long, so an entry carries at most `OPTIONS_BUDGET` bytes of them: the options
that do not fit are left out and named in `options_omitted`. Every other field of an entry is
bounded by the protocol (an id, a preset name, four seats), so an entry is at most a few KiB; a
page then takes entries while they fit the frame (`Page.add` measures each one), up to the limit
the client asked for. `table_changed` carries one bounded entry, so it fits too.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from protocol.codec import pack_value
from protocol.schema import to_map
from protocol.types import TableInfo

OPTIONS_BUDGET = 1024  # bytes of packed options one listing entry may carry
LISTING_PAGE = 100  # tables in a page when `list_tables` sets no `limit`
# A generous bound on what a `tables` map holds besides its entries: the map and array headers,
# `t`, `id` (a request id up to 2**32), the keys `tables` and `next`, and a cursor of up to 32
# characters. (1 + 10 + 8 + 3 + 5 + 7 + 5 + 5 + 34 = 78; rounded up.)
PAGE_OVERHEAD = 128


def packed_size(value: Any) -> int:
    """Bytes of `value` as msgpack, as it sits inside a message's map."""
    return len(pack_value(value))


def bounded_info(info: TableInfo, budget: int = OPTIONS_BUDGET) -> TableInfo:
    """`info` with at most `budget` bytes of options: options are kept, shortest first (so the
    many small ones survive one long list), while they fit; the names of the rest go in
    `options_omitted`, in name order. `info` itself is returned when its options fit as they are."""
    options = info.options
    if not options or packed_size(options) <= budget:
        return info
    sizes = {name: packed_size(name) + packed_size(value) for name, value in options.items()}
    kept: dict[str, Any] = {}
    used = 3  # a map16 header, the most a map of at most 2**16 entries needs
    for name in sorted(options, key=lambda n: (sizes[n], n)):
        if used + sizes[name] <= budget:
            kept[name] = options[name]
            used += sizes[name]
    omitted = sorted(name[:64] for name in options if name not in kept)
    kept = {name: options[name] for name in options if name in kept}  # the table's own order
    return dataclasses.replace(info, options=kept, options_omitted=omitted[:64] or None)


class Page:
    """Entries for one `tables` reply: at most `limit`, and at most `max_bytes` in all once the
    reply is framed (`max_bytes` is the frame's body limit, `welcome.limits.max_frame_size`)."""

    def __init__(self, limit: int, max_bytes: int) -> None:
        self.limit = limit
        self.room = max_bytes - PAGE_OVERHEAD
        self.entries: list[TableInfo] = []

    def add(self, info: TableInfo) -> bool:
        """Take `info` (bounded first) if the page has room for it; False, taking nothing, when
        the page is full. An entry that would not fit even an empty page is taken without its
        options: so every table can be listed, and a page always moves the listing on."""
        if len(self.entries) >= self.limit:
            return False
        entry = bounded_info(info)
        size = packed_size(to_map(entry))
        if size > self.room and not self.entries:
            entry = bounded_info(info, budget=0)
            size = packed_size(to_map(entry))
        if size > self.room:
            return False
        self.entries.append(entry)
        self.room -= size
        return True
