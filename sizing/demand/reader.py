"""Reading a log file in chunks of whole lines, plain or gzip'd, hashing what is read.

Gzip is recognised by its magic bytes, not its name (``access.log.2.gz`` and a renamed
one alike), and decompressed here with :mod:`zlib` so that a truncated or damaged file
gives every line before the damage, and says where it stopped (``gzip`` module reads
raise and drop the last block). Several gzip members one after another (``cat a.gz b.gz``,
logrotate's ``delaycompress``) are read in turn.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

CHUNK = 4 << 20  # 4 MiB of raw bytes per read: a few ms of parsing, bounded memory
_GZIP_MAGIC = b"\x1f\x8b"


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


def chunks(path: Path, state: ReadState, size: int = CHUNK) -> Iterator[bytes]:
    """The file's bytes, decompressed, in chunks that end at a newline (the last chunk
    ends where the file does). The sha256 of the file's bytes as stored ends in
    ``state``."""
    digest = hashlib.sha256()
    content = hashlib.sha256()
    with path.open("rb") as raw:
        head = raw.read(2)
        raw.seek(0)
        state.gzip = head == _GZIP_MAGIC
        source = _gunzip(raw, digest, state, size) if state.gzip else _plain(raw, digest, size)
        rest = b""
        for block in source:
            state.size += len(block)
            block = rest + block
            cut = block.rfind(b"\n") + 1
            if cut == 0:
                rest = block
                continue
            rest = block[cut:]
            content.update(block[:cut])
            yield block[:cut]
        if rest:
            content.update(rest)
            yield rest
    state.sha256 = digest.hexdigest()
    state.content_sha256 = content.hexdigest()


def _plain(raw: object, digest: hashlib._Hash, size: int) -> Iterator[bytes]:
    read = raw.read  # type: ignore[attr-defined]
    while block := read(size):
        digest.update(block)
        yield block


def _gunzip(raw: object, digest: hashlib._Hash, state: ReadState, size: int) -> Iterator[bytes]:
    read = raw.read  # type: ignore[attr-defined]
    inflate = zlib.decompressobj(wbits=31)
    started = False  # the current member has had bytes: its end-of-stream is due
    offset = 0
    while block := read(size):
        digest.update(block)
        while block:
            started = True
            try:
                out = inflate.decompress(block)
            except zlib.error as exc:
                state.damage = f"corrupt gzip data near byte {offset:,} ({exc})"
                _drain(read, digest)
                return
            if out:
                yield out
            block = b""
            if inflate.eof:
                block = inflate.unused_data
                inflate = zlib.decompressobj(wbits=31)
                started = False
        offset += size
    if started:
        tail = inflate.flush()
        if tail:
            yield tail
        state.damage = "truncated gzip: the compressed data ends before its end-of-stream marker"


def _drain(read: object, digest: hashlib._Hash) -> None:
    """Hash the rest of a damaged file: its hash is the file's, not the part read."""
    while block := read(CHUNK):  # type: ignore[operator]
        digest.update(block)


_BINARY = re.compile(rb"[\x00-\x08\x0e-\x1f]")


def looks_binary(data: bytes) -> bool:
    """True for bytes no NGINX log holds: NUL and control bytes (NGINX escapes them)."""
    return _BINARY.search(data) is not None
