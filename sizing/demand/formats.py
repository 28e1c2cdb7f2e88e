"""NGINX ``log_format`` strings compiled into one regular expression per format.

A format is literal text and variables (``$status``, ``${msec}``). Each variable becomes a
group that matches up to the next literal character, never across a line; only the
variables the demand reads are captured (the others are matched and dropped). NGINX writes
a variable's ``"`` and control bytes escaped (``\\x22`` by default, ``\\"`` with
``escape=json``), so a quoted field ends at the next ``"``.

The format is also read from ``nginx.conf`` (``--nginx-conf PATH --log-name NAME``): the
``log_format NAME [escape=...] '...' '...';`` directive, its quoted parts joined.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from pathlib import Path

from sizing.demand.reader import check_input
from sizing.errors import UsageError

COMBINED = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent"'
)
DEFAULT_NAME = "the combined format"  # the format read when none is given
# The stock formats tried, in turn, when the default does not match a file's first lines:
# NGINX's ``main`` (the log_format of the stock nginx.conf) and Apache's common and
# combined (``%h %l %u %t "%r" %>s %b``; Apache escapes a quote in ``%r`` as ``\"``, and
# writes ``-`` for an empty body, read as 0 bytes).
MAIN = COMBINED + ' "$http_x_forwarded_for"'
APACHE_COMMON = (
    '$remote_addr $remote_ident $remote_user [$time_local] "$request" $status $body_bytes_sent'
)
APACHE_COMBINED = APACHE_COMMON + ' "$http_referer" "$http_user_agent"'
STOCK = (
    ("NGINX's main format", MAIN, "default"),
    ("Apache's combined format", APACHE_COMBINED, "json"),
    ("Apache's common format", APACHE_COMMON, "json"),
)

# What each variable the demand reads is captured as (one or two groups, in this order).
_CAPTURES: dict[str, tuple[str, tuple[str, ...]]] = {
    "time_local": (r"([^\]\n\"]+)", ("time_local",)),
    "time_iso8601": (r"([0-9T:+\-Z]+)", ("time_iso8601",)),
    "msec": (r"([0-9]+)\.([0-9]+)", ("msec_s", "msec_ms")),
    "request_time": (r"([0-9.]+)", ("request_time",)),
    "status": (r"([0-9])[0-9]*", ("status",)),
    # Apache's %b writes "-" for an empty body: 0 bytes
    "bytes_sent": (r"([0-9]+|-)", ("bytes",)),
    "body_bytes_sent": (r"([0-9]+|-)", ("bytes",)),
    # the number; and "1" alone when it is the connection's first request, else empty
    "connection_requests": (r"((1)(?![0-9])|[0-9]*)", ("conn", "first")),
    "ssl_session_reused": (r"([r.\-]?)", ("reused",)),
}
_TIME_VARS = ("msec", "time_iso8601", "time_local")
_VAR = re.compile(r"\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")


@dataclass(frozen=True)
class LogFormat:
    """A compiled format: the pattern (bytes, one line per match, multiline anchors), the
    names of its groups in order, the variables it logs and its escaping."""

    text: str
    pattern: re.Pattern[bytes]
    groups: tuple[str, ...]
    variables: frozenset[str]
    escape: str = "default"
    name: str = ""
    # (variable, the pattern up to the literal after it): which field a bad line fails at
    steps: tuple[tuple[str, str], ...] = ()
    # every line, one match each: the format's groups and an empty one when it is in the
    # format, else its text as the last group (the bad lines found in the same pass)
    scanner: re.Pattern[bytes] | None = None
    # the same match as ops for the compiled reader (sizing.demand.fastscan), or None when
    # a field could end inside the text that follows it (the regular expression reads it)
    program: bytes | None = None

    @property
    def time_field(self) -> str:
        """The variable the arrival second is read from (the most precise logged)."""
        return next(v for v in _TIME_VARS if v in self.variables)

    def has(self, *names: str) -> bool:
        return all(n in self.variables for n in names)

    def failing_field(self, line: bytes) -> str:
        """The first field of the format a line does not match (``$status``), or
        ``the end of the line`` when every field does and something follows: what a
        skipped line is reported by, instead of its content."""
        for var, source in self.steps:
            if _prefix(source).match(line) is None:
                return f"${var}"
        return "the end of the line"


@functools.lru_cache(maxsize=256)
def _prefix(source: str) -> re.Pattern[bytes]:
    return re.compile(source.encode())


def _any_until(stop: str, escape: str) -> str:
    """A variable no demand figure reads: anything up to the literal that follows.
    Possessive (``*+``): its class excludes that literal, so giving back a byte can never
    make the match succeed, and the engine never tries (no backtracking)."""
    if stop == '"' and escape == "json":
        return r'[^"\\\n]*+(?:\\.[^"\\\n]*+)*+'  # unrolled: a run, then escape and run
    if not stop:
        return r"[^\n]*+"
    return "[^" + re.escape(stop) + r"\n]*+"


def compile_format(text: str, *, escape: str = "default", name: str = "") -> LogFormat:
    """The format's pattern; a format without a time variable is refused (no second to
    bin a request in), and so is one where a variable the demand reads touches another
    (``$status$bytes_sent``: nothing tells where one ends). Variables side by side that
    the demand does not read (``$host$request_uri``) are matched together, up to the
    literal after the last of them, without backtracking: matching is linear in a line's
    length whatever the format."""
    parts = []
    steps: list[tuple[str, str]] = []
    groups: list[str] = []
    matches = list(_VAR.finditer(text))
    variables = [m.group(1) or m.group(2) for m in matches]
    captured: list[bool] = []
    taken: set[str] = set()
    for var in variables:
        want = set(_CAPTURES[var][1]) if var in _CAPTURES else set()
        captured.append(bool(want) and not want & taken)
        taken |= want if captured[-1] else set()
    touching = [matches[i].end() == matches[i + 1].start() for i in range(len(matches) - 1)]
    for i, touch in enumerate(touching):
        if touch and (captured[i] or captured[i + 1]):
            read = variables[i] if captured[i] else variables[i + 1]
            raise UsageError(
                f"the log format has ${variables[i]}${variables[i + 1]} with nothing between"
                f" them: the demand reads ${read} and cannot tell where it ends; log them"
                " with a space or another character between them"
            )
    pos = 0
    program: list[bytes] | None = []
    for i, m in enumerate(matches):
        parts.append(re.escape(text[pos : m.start()]))
        program = _op(program, "L", "", text[pos : m.start()])
        var = variables[i]
        last = i
        while last < len(touching) and touching[last]:
            last += 1  # side by side: each matches up to the literal after the last
        end = matches[last + 1].start() if last + 1 < len(matches) else len(text)
        stop = text[matches[last].end() : end][:1]
        if captured[i]:
            rx, names = _CAPTURES[var]
            if var == "time_local":
                rx = "([^" + re.escape(stop or "\n") + r"\n]+)" if stop else rx
            parts.append(rx)
            groups.extend(names)
            program = _op(program, _OPS[var], stop)
        else:
            parts.append(_any_until(stop, escape))
            program = _op(program, "J" if stop == '"' and escape == "json" else "X", stop)
        steps.append((var, "^" + "".join(parts) + re.escape(stop)))
        pos = m.end()
    parts.append(re.escape(text[pos:]))
    program = _op(program, "L", "", text[pos:])
    if not any(v in variables for v in _TIME_VARS):
        raise UsageError(
            "the log format logs no time ($msec, $time_iso8601 or $time_local): "
            "no second to count a request in"
        )
    source = "^" + "".join(parts) + r"[ \t\r]*()$"  # () keeps findall's rows tuples
    pattern = re.compile(source.encode(), re.MULTILINE)
    every = "^(?:" + "".join(parts) + r"[ \t\r]*()|(.*+))$"
    scanner = re.compile(every.encode(), re.MULTILINE)
    fmt = LogFormat(
        text, pattern, tuple(groups), frozenset(variables), escape, name, tuple(steps), scanner
    )
    if program is not None and fmt.time_field in ("msec", "time_local"):
        return replace(fmt, program=b"".join(program))
    return fmt


# The compiled reader's op for each variable read, and the bytes its class holds: a field
# followed by one of them could end earlier than its longest run (the regular expression
# backtracks), so such a format is read by the regular expression alone.
_OPS = {
    "time_local": "T",
    "time_iso8601": "I",
    "msec": "M",
    "request_time": "R",
    "status": "S",
    "bytes_sent": "B",
    "body_bytes_sent": "B",
    "connection_requests": "N",
    "ssl_session_reused": "U",
}
_HOLDS = {"I": "0123456789T:+-Z", "M": "0123456789", "R": "0123456789.", "S": "0123456789"}
_HOLDS |= {"B": "0123456789", "N": "0123456789", "U": "r.-"}


def _op(program: list[bytes] | None, op: str, stop: str, literal: str = "") -> list[bytes] | None:
    """``program`` with one op added (sizing/demand/_fastscan.c reads them), or None when
    the compiled reader cannot match what the regular expression does."""
    lit = literal.encode()
    if program is None or "\n" in literal or len(lit) > 0xFFFF:
        return None
    if stop and (not stop.isascii() or stop in _HOLDS.get(op, "") or stop in "\n\0"):
        return None
    if op == "L" and not lit:
        return program
    return [*program, op.encode() + (stop.encode() or b"\0") + len(lit).to_bytes(2) + lit]


# Possessive (``*+``, ``++``): a bare word is matched whole, never split in two, so a
# directive without its ``;`` fails in time linear in its length (with ``+`` a 28-letter
# word after ``log_format main`` took the engine past 20 s: each split was tried).
_DIRECTIVE = re.compile(
    r"(?:^|[;{}\s])log_format\s++(\S++)\s++((?:escape=\S++\s++)?)"
    r"((?:'[^']*+'\s*+|\"[^\"]*+\"\s*+|[^;'\"\s]++\s*+)++);",
    re.S,
)
# An nginx.conf is a few kilobytes; the cap keeps a wrong path (a log, an image) bounded.
MAX_CONF_BYTES = 4 << 20


def format_from_conf(conf: Path, name: str) -> LogFormat:
    """The ``log_format NAME`` of an nginx.conf (its ``include``s are not followed: give
    the file that holds the directive). ``combined`` is built in."""
    text = _read_conf(conf)
    text = re.sub(r"#[^\n]*", "", text)
    found = []
    for m in _DIRECTIVE.finditer(text):
        found.append(m.group(1))
        if m.group(1) == name:
            escape = m.group(2).strip().partition("=")[2] or "default"
            pieces = re.findall(r"'([^']*)'|\"([^\"]*)\"|([^\s'\"]+)", m.group(3))
            fmt = "".join(a or b or c for a, b, c in pieces)
            return compile_format(fmt, escape=escape, name=name)
    if name == "combined":
        return compile_format(COMBINED, name="combined")
    listed = ", ".join(found) or "none"
    raise UsageError(f"{conf}: no log_format {name!r} (found: {listed})")


def _read_conf(conf: Path) -> str:
    """The nginx.conf's text: a regular file (a FIFO or ``/dev/zero`` never ends), at
    most :data:`MAX_CONF_BYTES`; else one UsageError naming the file."""
    check_input(conf, "an nginx.conf")
    try:
        with conf.open("rb") as f:
            raw = f.read(MAX_CONF_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{conf}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_CONF_BYTES:
        raise UsageError(
            f"{conf}: over the {MAX_CONF_BYTES:,} bytes an nginx.conf may hold: give the file"
            " that holds the log_format directive"
        )
    return raw.decode("utf-8", "replace")
