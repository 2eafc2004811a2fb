"""Opening trace files: gzip by magic bytes (not extension), the head for sniffing, byte progress."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from rocanalyze.errors import UserError

GZIP_MAGIC = b"\x1f\x8b"
HEAD_BYTES = 64 * 1024
UTF8_BOM = b"\xef\xbb\xbf"  # some Windows editors and shells write it before JSON/CSV text: skipped


def is_gzip(path: Path) -> bool:
    """True when the file starts with the gzip magic number."""
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first `size` bytes of the (decompressed) content; a broken gzip header is a UserError."""
    try:
        with open(path, "rb") as raw:
            magic = raw.read(2)
            raw.seek(0)
            if magic != GZIP_MAGIC:
                return raw.read(size).removeprefix(UTF8_BOM)
            # a truncated gzip still gives its first bytes: decompress what is there, no CRC check
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw.read(size), size).removeprefix(UTF8_BOM)
    except zlib.error as exc:
        raise UserError(f"corrupt gzip data ({exc}); re-copy the file", path) from exc
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", path) from exc


class _Counting:
    """Wraps the raw file so progress can follow the bytes read from disk (compressed or not)."""

    def __init__(self, raw: BinaryIO, advance: object) -> None:
        self.raw = raw
        self.advance = advance

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        if self.advance is not None and data:
            self.advance(len(data))  # type: ignore[operator]
        return data

    def readinto(self, buffer: memoryview) -> int:
        n = self.raw.readinto(buffer)
        if self.advance is not None and n:
            self.advance(n)  # type: ignore[operator]
        return n

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.raw.close()


@contextmanager
def open_stream(path: Path, progress: bool = False, label: str = "reading") -> Iterator[BinaryIO]:
    """A binary stream of the decompressed content; with progress, a rich bar by bytes on disk."""
    size = path.stat().st_size
    bar = None
    advance = None
    if progress:
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(TextColumn(f"{label} {path.name}"), BarColumn(), DownloadColumn(),
                       TimeRemainingColumn(), transient=True)
        task = bar.add_task(label, total=size)
        bar.start()

        def advance(n: int) -> None:
            bar.update(task, advance=n)
    raw = _Counting(open(path, "rb"), advance)
    try:
        if is_gzip(path):
            with gzip.GzipFile(fileobj=raw, mode="rb") as gz:  # type: ignore[arg-type]
                if gz.peek(len(UTF8_BOM)).startswith(UTF8_BOM):
                    gz.read(len(UTF8_BOM))
                yield gz  # type: ignore[misc]
        else:
            if raw.raw.read(len(UTF8_BOM)) != UTF8_BOM:
                raw.raw.seek(0)
            yield raw  # type: ignore[misc]
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise UserError(f"truncated or corrupt gzip data ({exc}); re-copy or re-capture the trace",
                        path) from exc
    finally:
        raw.close()
        if bar is not None:
            bar.stop()
