"""The terminal: drawing whole frames and reading keys, without blocking trio.

Drawing is clear-and-print: each frame moves the cursor home and rewrites every line (clearing each
line's tail), so there is no partial state for tmux or a slow terminal to get wrong. On a terminal we
use the alternate screen and cbreak mode (keys arrive one by one, not echoed; the prompt line shows
what is typed, so a redraw never wipes half a word), Ctrl-C read as a key rather than a signal.
Without a terminal (a pipe, a test) stdin is read line by line and frames are printed plainly, one
after another.

Keys are read in a worker thread that waits at most `POLL` seconds per call (select, then read), so
cancelling the reader never leaves a thread blocked forever.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import sys
import termios
import threading
import tty
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from io import StringIO
from typing import IO

import trio
from rich.console import Console, Group
from rich.text import Text

POLL = 0.25
ENTER = "\n"
BACKSPACE = "\x7f"
CTRL_C = "\x03"
CTRL_D = "\x04"
CTRL_U = "\x15"
ESC = "\x1b"


@dataclass(frozen=True, slots=True)
class Key:
    """One key press: a printable character, or ENTER/BACKSPACE/CTRL_D/CTRL_U."""

    char: str


@dataclass(frozen=True, slots=True)
class Line:
    """A whole line (the non-terminal fallback reads lines, not keys)."""

    text: str


class Terminal:
    """One terminal (or a pipe standing in for one)."""

    def __init__(self, out: IO[str] | None = None, inp: IO[str] | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.inp = inp if inp is not None else sys.stdin
        try:
            self.in_fd: int | None = self.inp.fileno()
        except (AttributeError, OSError, ValueError):
            self.in_fd = None  # a stream with no file behind it (a test runner's input)
        self.interactive = self.in_fd is not None and self.out.isatty() and os.isatty(self.in_fd)
        self.no_color = bool(os.environ.get("NO_COLOR"))
        self._saved: list[object] | None = None
        # Set while no key reader runs. A reader is abandoned when the screen closes and could
        # still take the next key typed, meant for what comes after (`spades play`'s question):
        # leaving the screen waits for it, which takes at most `POLL`.
        self._reader_idle = threading.Event()
        self._reader_idle.set()

    def size(self) -> tuple[int, int]:
        try:
            columns, lines = os.get_terminal_size(self.out.fileno())
        except (OSError, ValueError):
            return 80, 24
        return columns, lines

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Alternate screen and cbreak mode for the duration; always restored, even on errors."""
        if not self.interactive or self.in_fd is None:
            yield
            return
        self._saved = termios.tcgetattr(self.in_fd)
        try:
            tty.setcbreak(self.in_fd, termios.TCSANOW)  # keep keys typed while starting up
            # Ctrl-C is a key here (it leaves the screen like /quit), not SIGINT: a signal would
            # reach `make play` too, which then reports the game's end as an error.
            attrs = termios.tcgetattr(self.in_fd)
            attrs[3] &= ~termios.ISIG
            termios.tcsetattr(self.in_fd, termios.TCSANOW, attrs)
            self.out.write("\x1b[?1049h\x1b[H\x1b[2J")
            self.out.flush()
            yield
        finally:
            self._reader_idle.wait(timeout=4 * POLL)  # bounded: one `_read_ready` call
            termios.tcsetattr(self.in_fd, termios.TCSADRAIN, self._saved)  # type: ignore[arg-type]
            self.out.write("\x1b[?1049l")
            self.out.flush()

    def frame_text(self, frame: Group, width: int) -> str:
        """The frame as terminal text: ANSI styles on a terminal unless NO_COLOR, plain otherwise."""
        buffer = StringIO()
        console = Console(
            file=buffer,
            width=width,
            force_terminal=self.interactive,
            color_system="standard" if self.interactive and not self.no_color else None,
            no_color=self.no_color,
            highlight=False,
            emoji=False,
        )
        rows: list[str] = []
        for line in frame.renderables:
            assert isinstance(line, Text)
            with console.capture() as capture:
                console.print(line, end="", crop=True, soft_wrap=True, overflow="crop")
            rows.append(
                capture.get().rstrip("\n").rstrip() if not self.interactive else capture.get()
            )
        return _compose(rows, self.interactive)

    def draw(self, frame: Group, width: int) -> None:
        self.out.write(self.frame_text(frame, width))
        self.out.flush()

    async def keys(self) -> AsyncIterator[Key | Line]:
        """Keys (terminal) or lines (pipe) until end of input."""
        if self.interactive:
            async for key in self._raw_keys():
                yield key
        else:
            async for line in self._lines():
                yield line

    async def _raw_keys(self) -> AsyncIterator[Key]:
        assert self.in_fd is not None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        escape = ""
        while True:
            data = await self._read()
            if data is None:
                continue
            if data == b"":
                yield Key(CTRL_D)
                return
            for char in decoder.decode(data):
                if escape:
                    # Skip escape sequences (arrow keys, ...): ESC [ params final-byte.
                    escape += char
                    if len(escape) > 1 and (char.isalpha() or char == "~" or len(escape) > 8):
                        escape = ""
                    continue
                if char == ESC:
                    escape = char
                    continue
                if char in "\r\n":
                    yield Key(ENTER)
                elif char in ("\x7f", "\x08"):
                    yield Key(BACKSPACE)
                elif char in (CTRL_D, CTRL_U, CTRL_C) or char.isprintable():
                    yield Key(char)

    async def _read(self) -> bytes | None:
        """One `_read_ready` in a worker thread, marked as running until it returns (even when
        this task is cancelled and the thread abandoned)."""
        assert self.in_fd is not None
        fd, idle = self.in_fd, self._reader_idle

        def read() -> bytes | None:
            try:
                return _read_ready(fd)
            finally:
                idle.set()

        idle.clear()
        return await trio.to_thread.run_sync(read, abandon_on_cancel=True)

    async def _lines(self) -> AsyncIterator[Line]:
        if self.in_fd is None:
            while True:
                text = await trio.to_thread.run_sync(self.inp.readline, abandon_on_cancel=True)
                if not text:
                    return
                yield Line(text.rstrip("\r\n"))
        pending = b""
        while True:
            data = await trio.to_thread.run_sync(_read_ready, self.in_fd, abandon_on_cancel=True)
            if data is None:
                continue
            if data == b"":
                if pending:
                    yield Line(pending.decode("utf-8", "replace"))
                return
            pending += data
            while b"\n" in pending:
                raw, pending = pending.split(b"\n", 1)
                yield Line(raw.decode("utf-8", "replace").rstrip("\r"))


def read_key(prompt: str, out: IO[str] | None = None, inp: IO[str] | None = None) -> str:
    """Show `prompt` and return the one key pressed, lower case (`""` for Enter), without waiting
    for Enter: the replay's `q` stops at once, and no key is left over for the next question.
    Ctrl-C raises KeyboardInterrupt and Ctrl-D EOFError, as `input()` would. For a terminal."""
    out = out if out is not None else sys.stdout
    inp = inp if inp is not None else sys.stdin
    out.write(prompt)
    out.flush()
    fd = inp.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        data = os.read(fd, 16)  # one key (an arrow key's escape sequence arrives whole)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    out.write("\n")
    char = data.decode("utf-8", "replace")[:1]
    if char == CTRL_C:
        raise KeyboardInterrupt
    if char == CTRL_D or not data:
        raise EOFError
    return "" if char in ("\r", ENTER) else char.lower()


def _read_ready(fd: int) -> bytes | None:
    """Up to 1 KiB from `fd` if it becomes readable within POLL seconds; None if it does not."""
    ready, _, _ = select.select([fd], [], [], POLL)
    if not ready:
        return None
    try:
        return os.read(fd, 1024)
    except OSError:
        return b""


def _compose(rows: list[str], interactive: bool) -> str:
    if not interactive:
        return "\n".join(rows) + "\n" + "-" * 20 + "\n"
    # Home, then each line followed by erase-to-end-of-line; erase below; the cursor ends on the prompt.
    body = "\x1b[K\r\n".join(rows)
    return "\x1b[?25l\x1b[H" + body + "\x1b[K\x1b[J\x1b[?25h"
