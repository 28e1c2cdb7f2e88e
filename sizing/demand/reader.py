"""Reading a log file in chunks of whole lines, plain or gzip'd, hashing what is read.

Gzip is recognised by its magic bytes, not its name (``access.log.2.gz`` and a renamed
one alike), and decompressed here with :mod:`zlib` so that a truncated or damaged file
gives every line before the damage, and says where it stopped (``gzip`` module reads
raise and drop the last block). Several gzip members one after another (``cat a.gz b.gz``,
logrotate's ``delaycompress``) are read in turn; after a corrupt block the reader skips
to the next member's header, when there is one.

Bounded by design, whatever the file holds:

- each read is at most :data:`CHUNK` bytes, and each decompression step gives at most
  :data:`CHUNK` bytes (zlib's ``max_length``): a small gzip of a huge file is inflated a
  chunk at a time, never whole;
- a line longer than :data:`MAX_LINE` is never buffered: it is dropped as it streams by
  and stands in the chunk as :data:`LONG_LINE` (one line, so line numbers still count),
  which the scanners report as "line too long" with its file:line.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import zlib
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from sizing.errors import UsageError

CHUNK = 1 << 20  # 1 MiB of raw bytes per read: fits the CPU's caches, bounded memory
MAX_LINE = 64 << 10  # 64 KiB: no access log line is longer (NGINX's default buffer is 4k-64k)
# Lines per chunk at most: a reader keeps a few objects per line of a chunk (a skipped line's
# row and reason), so 1 MiB of empty lines (a million) took 317 MB. A real log's line is a
# few hundred bytes: its 1 MiB chunks hold a few thousand lines and are never cut.
MAX_ROWS = 32 << 10
LONG_LINE = b"\x00line too long\x00"  # stands for a dropped line: NUL is never in a log line
TOO_LONG = "line too long"
_GZIP_MAGIC = b"\x1f\x8b"
# a gzip member's header: magic, deflate, no reserved flag, a known XFL and OS byte
_MEMBER = re.compile(rb"\x1f\x8b\x08[\x00-\x1f].{4}[\x00\x02\x04][\x00-\x0d\xff]", re.S)
_FEED = 64 << 10  # compressed bytes per decompression step: where damage is, to 64 KiB


@dataclass
class ReadState:
    """What reading a file found beside its lines."""

    path: Path
    sha256: str = ""
    content_sha256: str = ""  # of the lines as read (decompressed): a log and its .gz agree
    size: int = 0
    gzip: bool = False
    damage: str = ""  # why the file's bytes stopped early (truncated or corrupt gzip)
    notes: list[str] = field(default_factory=list)
    long_lines: int = 0  # lines longer than MAX_LINE, dropped


def check_input(path: Path, wanted: str = "a log file") -> None:
    """Refuse (UsageError) what is not a regular file, naming what it is and what was
    ``wanted``: a directory, a FIFO, a device or a socket is never read (a FIFO or
    ``/dev/zero`` never ends)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None
    what = (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a character device"
        if stat.S_ISCHR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else ""
    )
    if what:
        raise UsageError(f"{path}: {what}, not {wanted}: give the files it holds or a copy")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{path}: cannot read: permission denied")


# What a file's first bytes say it is, when it is not text sizing reads (gzip it reads):
# named, instead of "binary data" or "fewer than 2 samples".
_OTHER_KINDS = (
    (b"BZh", "bzip2-compressed", "bunzip2 -k FILE, or recompress it with gzip"),
    (b"\xfd7zXZ\x00", "xz-compressed", "unxz -k FILE, or recompress it with gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "unzstd FILE, or recompress it with gzip"),
    (b"PK\x03\x04", "a zip archive", "unzip it and give the files it holds"),
    (b"\xff\xfe", "UTF-16 text", "convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"),
    (b"\xfe\xff", "UTF-16 text", "convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"),
)


def check_kind(path: Path) -> None:
    """Refuse (UsageError) a file whose first bytes say it is compressed in a way sizing
    does not read (bzip2, xz, zstd, zip) or UTF-16 text, naming what it is and the way to
    a file it reads."""
    try:
        with path.open("rb") as f:
            head = f.read(6)
    except OSError:
        return  # the reader says why
    for magic, what, how in _OTHER_KINDS:
        if head.startswith(magic) and (magic != b"BZh" or head[3:4].isdigit()):
            raise UsageError(
                f"{path}: {what}: sizing reads plain and gzip'd files; {how}".replace(
                    "FILE", str(path)
                )
            )


def chunks(path: Path, state: ReadState, size: int = CHUNK) -> Iterator[bytes]:
    """The file's bytes, decompressed, in chunks that end at a newline (the last chunk
    ends where the file does), each line at most :data:`MAX_LINE` bytes (a longer one is
    :data:`LONG_LINE`). The sha256 of the file's bytes as stored ends in ``state``."""
    digest = hashlib.sha256()
    content = hashlib.sha256()
    with path.open("rb") as raw:
        head = raw.read(2)
        raw.seek(0)
        state.gzip = head == _GZIP_MAGIC
        source = _gunzip(raw, digest, state, size) if state.gzip else _plain(raw, digest, size)
        rest = b""
        dropping = False  # inside a line longer than MAX_LINE: its bytes are dropped
        for block in source:
            state.size += len(block)
            if state.gzip:  # a plain file's content is its bytes: hashed once
                content.update(block)
            if dropping:
                nl = block.find(b"\n")
                if nl < 0:
                    continue
                dropping = False
                block = LONG_LINE + block[nl:]
            else:
                block = rest + block
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            if len(rest) > MAX_LINE:
                rest, dropping = b"", True
                state.long_lines += 1
                if not cut:
                    continue
            if not cut:
                continue
            yield from _by_rows(_cap_lines(block[:cut], state))
        if dropping:
            yield LONG_LINE
        elif rest:
            yield from _by_rows(_cap_lines(rest, state))
    state.sha256 = digest.hexdigest()
    state.content_sha256 = content.hexdigest() if state.gzip else state.sha256


def _by_rows(block: bytes, rows: int = MAX_ROWS) -> Iterator[bytes]:
    """``block`` in pieces of at most ``rows`` lines, each ending at a newline (the last
    where the block does)."""
    if block.count(b"\n") <= rows:
        yield block
        return
    import numpy as np  # deferred: only a block of very short lines is cut

    ends = np.flatnonzero(np.frombuffer(block, np.uint8) == 10)[rows - 1 :: rows] + 1
    start = 0
    for end in ends.tolist():
        yield block[start:end]
        start = end
    if start < len(block):
        yield block[start:]


def _cap_lines(block: bytes, state: ReadState) -> bytes:
    """``block`` with every line longer than MAX_LINE replaced by LONG_LINE. A line that
    long leaves a half-cap window without a newline: a few ``find`` calls per chunk rule
    them out, and only a suspect chunk is split into lines."""
    half = MAX_LINE // 2
    if len(block) <= MAX_LINE or all(
        block.find(b"\n", i, i + half) >= 0 for i in range(0, len(block) - half + 1, half)
    ):
        return block
    lines = block.split(b"\n")
    for i, line in enumerate(lines):
        if len(line) > MAX_LINE:
            lines[i] = LONG_LINE
            state.long_lines += 1
    return b"\n".join(lines)


def _plain(raw: BinaryIO, digest: hashlib._Hash, size: int) -> Iterator[bytes]:
    read = raw.read
    while block := read(size):
        digest.update(block)
        yield block


class _File:
    """Reads at an offset, hashing each byte of the file once (a resync reads back)."""

    def __init__(self, raw: BinaryIO, digest: hashlib._Hash) -> None:
        self.raw, self.digest = raw, digest
        self.hashed = 0  # bytes hashed so far: reads never skip past them
        self.at = 0  # the file's position

    def read(self, offset: int, n: int) -> bytes:
        if offset != self.at:
            self.raw.seek(offset)
        block = self.raw.read(n)
        self.at = offset + len(block)
        if self.at > self.hashed:
            self.digest.update(block[self.hashed - offset :])
            self.hashed = self.at
        return block

    def drain(self) -> None:
        """Hash the rest of the file: its hash is the file's, not the part read."""
        while self.read(self.hashed, CHUNK):
            pass


def _gunzip(raw: BinaryIO, digest: hashlib._Hash, state: ReadState, size: int) -> Iterator[bytes]:
    """Inflate member after member, at most ``size`` bytes out per step. On damage (data
    zlib refuses, or a member that never ends): the bytes before it are kept, the damage
    is said with its byte offsets, and reading resumes at the next member's header after
    the damaged member's start, when there is one (its lines are kept too)."""
    f = _File(raw, digest)
    damages: list[str] = []
    pos = 0
    while f.read(pos, 1):
        end, damage = yield from _member(f, pos, size)
        if not damage:
            pos = end
            continue
        yield b"\n"  # the partial line cut by the damage ends here (skipped: not a line)
        nxt = _find_member(f, pos + 1, size)
        if nxt < 0:
            damages.append(damage)
            break
        if damage.startswith("truncated"):
            damage = f"corrupt gzip data: the member at byte {pos:,} never ends"
        damages.append(f"{damage} (read on from the next gzip member, at byte {nxt:,})")
        pos = nxt
    f.drain()
    state.damage = "; ".join(damages)


def _member(f: _File, start: int, size: int) -> Generator[bytes, None, tuple[int, str]]:
    """Inflate the member at ``start``: its bytes, then where it ended and the damage
    found (empty when none). zlib gives nothing of a call that meets damage (a corrupt
    block, a wrong CRC in the trailer): the call is made again from a copy of the state
    before it, a few bytes at a time, so that every byte before the damage is kept (a
    whole call was lost: a small file's every line) and the damage's offset is exact."""
    inflate = zlib.decompressobj(wbits=31)
    off = start
    while True:
        piece = f.read(off, _FEED)
        if not piece:
            tail = inflate.flush()
            if tail:
                yield tail
            return off, "truncated gzip: the compressed data ends before its end-of-stream marker"
        data = piece
        while data:
            before = inflate.copy()
            try:
                out = inflate.decompress(data, size)
            except zlib.error:
                at = off + len(piece) - len(data) + (yield from _salvage(before, data, size))
                return at, f"corrupt gzip data, found at byte {at:,}"
            if out:
                yield out
            if inflate.eof:
                return off + len(piece) - len(inflate.unused_data), ""
            if not out and inflate.unconsumed_tail == data:
                break  # no progress: nothing more comes of this input
            data = inflate.unconsumed_tail
        off += len(piece)


_STEP = 512  # compressed bytes per call while salvaging (then one at a time)


def _salvage(inflate: zlib._Decompress, data: bytes, size: int) -> Generator[bytes, None, int]:
    """What ``data`` gives before the damage zlib refuses in it, fed a few bytes at a
    time from the state before the failed call; the damage's offset in ``data``."""
    pos = 0
    step = _STEP
    while pos < len(data):
        before = inflate.copy()
        try:
            out = inflate.decompress(data[pos : pos + step], size)
            while out:
                yield out
                tail = inflate.unconsumed_tail
                out = inflate.decompress(tail, size) if tail else b""
        except zlib.error:
            if step == 1:
                return pos
            inflate, step = before, 1  # again, a byte at a time: to the byte that fails
            continue
        pos += step
    return pos


def _find_member(f: _File, start: int, size: int) -> int:
    """The offset of the next member's header at or after ``start`` (-1 when none)."""
    keep = b""
    while block := f.read(start, size):
        data = keep + block
        m = _MEMBER.search(data)
        if m:
            return start - len(keep) + m.start()
        keep = data[-9:]
        start += len(block)
    return -1


_BINARY = re.compile(rb"[\x00-\x08\x0e-\x1f]")


def looks_binary(data: bytes) -> bool:
    """True for bytes no NGINX log holds: NUL and control bytes (NGINX escapes them)."""
    return _BINARY.search(data) is not None
