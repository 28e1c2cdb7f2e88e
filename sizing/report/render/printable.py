"""Strings from users' files shown as text: control characters escaped.

A catalog's server name, an inventory's host name, a label may hold a control character
(BEL, ESC, a carriage return) or an invisible formatting one (U+202E RIGHT-TO-LEFT
OVERRIDE, a zero-width space) that would act on a terminal or hide or reorder text in the
guide. Every rendering shows them escaped, as Python writes them (``\\x07``, ``\\u202e``):
the CLI's output streams (:mod:`sizing.cli.app`), the guide's templates and its charts
(:mod:`sizing.report.render.html`, :mod:`sizing.report.render.chartkit`). JSON needs
nothing more: its encoder escapes them (``ensure_ascii``).
"""

from __future__ import annotations

import re

__all__ = ["printable"]

# C0 and C1 controls and DEL; Unicode's format characters (category Cf: bidi overrides
# and isolates, zero-width characters, the byte order mark, tags), the line and
# paragraph separators and lone surrogates (undecodable bytes).
_UNSHOWN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]"
)


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    if c < 0x100:
        return f"\\x{c:02x}"
    return f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


def printable(text: str, keep: str = "\n\t") -> str:
    """``text`` with every control and invisible formatting character escaped, but those
    of ``keep`` (the line breaks and tabs of a multi-line text, by default)."""
    if not _UNSHOWN.search(text):
        return text
    return _UNSHOWN.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)
