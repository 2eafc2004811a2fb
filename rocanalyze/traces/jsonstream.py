"""Streaming the event array of a large JSON trace in decoded batches, without holding the file.

The array (`traceEvents` of a Chrome/Kineto trace, or a top-level array) is cut into blocks of
whole elements. A cut is guessed cheaply: the last `}` `,` `{` in the block (bytes.rfind speed).
The guess is proven by decoding `[` + block + `]`: a cut inside a string or a nested object
leaves the text unterminated, which the decoder rejects; then the exact cut is found with a numpy
pass over the block (quote parity with escapes, brace depth). Everything outside the array is
kept (`rest`: the document with the array emptied) for the trace-level metadata.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
import numpy as np

from rocanalyze.errors import UserError

# msgspec up to 0.22 raises UnicodeDecodeError (not DecodeError) for invalid UTF-8 inside a string: both mean a
# corrupt file
JSON_ERRORS = (msgspec.DecodeError, UnicodeDecodeError)

BLOCK = 16 << 20          # bytes read per step: big enough for numpy/msgspec, small next to 1.5 GB
_WINDOW = 1 << 20         # where the cheap cut is looked for, from the block's end
_CUT = re.compile(rb"\}\s*,\s*\{")
_FIRST = re.compile(rb"[^\s,]")


def _unescaped_quotes(a: np.ndarray) -> np.ndarray:
    """Positions of `"` that delimit strings (a quote after an odd run of backslashes is content)."""
    q = np.flatnonzero(a == 34)
    if not len(q):
        return q
    suspects = q[(q > 0) & (a[np.maximum(q - 1, 0)] == 92)]
    escaped = []
    for pos in suspects.tolist():
        run = 1
        while pos - run - 1 >= 0 and a[pos - run - 1] == 92:
            run += 1
        if run % 2:
            escaped.append(pos)
    return np.setdiff1d(q, np.asarray(escaped, dtype=q.dtype), assume_unique=True) if escaped else q


def structure(buf: bytes | bytearray | memoryview, depth0: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Brackets outside strings: (positions, bytes, depth after each), from depth0, not in a string."""
    a = np.frombuffer(buf, np.uint8)
    q = _unescaped_quotes(a)
    s = np.flatnonzero((a == 123) | (a == 125) | (a == 91) | (a == 93))
    s = s[(np.searchsorted(q, s) & 1) == 0]
    c = a[s]
    depth = depth0 + np.cumsum(np.where((c == 123) | (c == 91), 1, -1))
    return s, c, depth


def _array_start(data: bytearray, key: bytes) -> int | None:
    """Index just after the `[` opening the events array, or None when not (yet) in `data`."""
    first = data.lstrip()[:1]
    if first == b"[":
        return data.index(b"[") + 1
    if first != b"{":
        raise ValueError("not a JSON object or array")
    pos, chars, depth = structure(data)
    opens = pos[(chars == 91) & (depth == 2)]
    pattern = re.compile(rb'"' + re.escape(key) + rb'"\s*:\s*$')
    for p in opens.tolist():
        if pattern.search(data, max(0, p - len(key) - 64), p):
            return p + 1
    return None


def _buffer(size: int) -> bytearray:
    """A bytearray of `size` bytes with one byte of spare capacity (for the `_unshared` probe)."""
    buf = bytearray(size + 1)
    del buf[-1:]
    return buf


def _unshared(buf: bytearray) -> bool:
    """True when nothing exports buf's memory (a one-byte resize is refused while anything does)."""
    try:
        buf.append(0)
    except BufferError:
        return False
    buf.pop()
    return True


def _first_invalid_utf8(data: bytearray, lo: int, hi: int) -> int:
    """Index in `data` of the first byte in data[lo:hi] that is not valid UTF-8 (lo when none is found)."""
    try:
        bytes(data[lo:hi]).decode("utf-8")
    except UnicodeDecodeError as exc:
        return lo + exc.start
    return lo


class EventArray:
    """Iterate decoded batches of the events array; afterwards `rest` holds the other keys' JSON."""

    def __init__(self, stream: BinaryIO, path: Path, decode: Callable[[bytes], list[Any]],
                 key: bytes = b"traceEvents", block: int = BLOCK) -> None:
        self.stream, self.path, self.decode, self.key, self.block = stream, path, decode, key, block
        self.rest = b""
        self.found = False

    def _fail(self, what: str, offset: int) -> UserError:
        return UserError(f"{what} near byte {offset}: not a complete JSON trace; re-capture or re-copy it",
                         self.path)

    def _decode(self, data: bytearray, cut: int, skip: int) -> list[Any]:
        """Decode the elements in data[skip:cut] in place: `[` and `]` written around them (no copy)."""
        first = _FIRST.search(data, skip, cut)
        if first is None:
            return []
        lo = first.start() - 1  # data[0] is the array's `[` or a separator: lo >= 0
        saved = data[lo], data[cut]  # callers keep cut < len(data): the buffer is never resized
        data[lo], data[cut] = 91, 93
        try:
            with memoryview(data) as view:
                return self.decode(view[lo:cut + 1])
        finally:
            data[lo], data[cut] = saved

    def _decode_or_fail(self, data: bytearray, cut: int, skip: int, offset: int) -> list[Any]:
        try:
            return self._decode(data, cut, skip)
        except JSON_ERRORS as exc:
            # msgspec up to 0.22 raises UnicodeDecodeError for invalid UTF-8 in a string, 0.23 a DecodeError;
            # either way its position counts from the start of the string: find the byte in the file
            if isinstance(exc, UnicodeDecodeError) or "UTF-8" in str(exc):
                at = _first_invalid_utf8(data, skip, cut)
                raise UserError(f"invalid UTF-8 (byte 0x{data[at]:02x}) at byte {offset + at} of the JSON text: "
                                "the file is corrupt; re-capture or re-copy it", self.path) from None
            raise self._fail(f"corrupt JSON ({exc})", offset) from None

    def __iter__(self) -> Iterator[list[Any]]:
        data = bytearray()
        start = None
        while start is None:
            chunk = self.stream.read(self.block)
            data += chunk
            try:
                start = _array_start(data, self.key)
            except ValueError:
                raise UserError("not JSON (expected an object or an array)", self.path) from None
            if start is None and not chunk:
                self.rest = bytes(data)
                return
        self.found = True
        prefix = bytes(data[:start])
        # one buffer for the whole file (fresh 16 MB buffers per block cost page faults): buf[0] is
        # the array's `[` (skipped), later the byte after the last cut, so every block has a byte
        # before its first element, where `[` is written for decoding
        n = len(data) - start + 1
        buf = _buffer(n + 2 * self.block)
        buf[:n] = data[start - 1:]
        del data
        offset, skip = start - 1, 1
        while True:
            if len(buf) - n < self.block:  # an element longer than a block: room for more
                grown = _buffer(n + 2 * self.block)
                grown[:n] = buf[:n]
                buf = grown
            with memoryview(buf) as view, view[n:n + self.block] as room:
                got = self.stream.readinto(room)
            if not got:
                break
            n += got
            cut = self._guess(buf, n)
            if cut is None:
                continue
            try:
                batch = self._decode(buf, cut, skip)
            except JSON_ERRORS:
                cut = self._exact_cut(buf, skip, n)
                if cut is None:
                    continue
                batch = self._decode_or_fail(buf, cut, skip, offset)
            yield batch
            del batch
            # move the rest to the front, unless decoded values (msgspec.Raw) still point into buf
            if _unshared(buf):
                buf[:n - cut] = buf[cut:n]
            else:
                fresh = _buffer(len(buf))
                fresh[:n - cut] = buf[cut:n]
                buf = fresh
            n, offset, skip = n - cut, offset + cut, 0
        pos, chars, depth = structure(memoryview(buf)[skip:n])
        closes = np.flatnonzero((chars == 93) & (depth == -1))
        if not len(closes):
            raise self._fail("truncated or corrupt JSON (the event array never closes)", offset + n)
        close = int(pos[closes[0]]) + skip
        yield self._decode_or_fail(buf, close, skip, offset)
        self.rest = prefix + bytes(buf[close:n])

    @staticmethod
    def _guess(data: bytearray, n: int) -> int | None:
        """Position just after the last `}` in data[:n] that precedes `, {` (probably an element's end)."""
        lo = max(0, n - _WINDOW)
        while True:
            last = deque(_CUT.finditer(data, lo, n), maxlen=1)
            if last:
                return last[0].start() + 1
            if lo == 0:
                return None
            lo = 0

    def _exact_cut(self, data: bytearray, skip: int, n: int) -> int | None:
        """Position of the byte after the last complete element in data[:n] (numpy pass)."""
        pos, chars, depth = structure(memoryview(data)[skip:n])
        pos = pos + skip
        bad = np.flatnonzero(depth < 0)
        if len(bad):  # the array closes inside this block: cut before it, the end handles the rest
            pos, chars, depth = pos[: bad[0]], chars[: bad[0]], depth[: bad[0]]
        ends = np.flatnonzero((chars == 125) & (depth == 0) & (pos + 1 < n))
        return int(pos[ends[-1]]) + 1 if len(ends) else None
