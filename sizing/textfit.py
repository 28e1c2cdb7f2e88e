"""Text folded to a terminal's width (issue 62: every line sizing writes fits 100 columns).

Lines are broken at spaces and never through a word that fits a line. A word longer than a
whole line (a path, a URL's path, a token) is wrapped, never cut: it is broken just after
a separator (``/``, ``.``, ``,``, ``:``, ``-`` ...) where one falls within the line, else
at the width. Every piece is printed: joining the pieces gives the word back.
"""

from __future__ import annotations

import textwrap

__all__ = ["WIDTH", "fold", "fold_lines"]

# where a word too long for any line is broken: just after one of these, a path's "/" first
SEPARATORS = ("/", ".,;:-_=&?@")
# a piece shorter than this is not worth starting a long word on the current line: the
# word goes on the next line instead
MIN_PIECE = 10
WIDTH = 100  # the terminal's text fits at most this many columns (without --verbose)


class _Folder(textwrap.TextWrapper):
    def _handle_long_word(
        self, reversed_chunks: list[str], cur_line: list[str], cur_len: int, width: int
    ) -> None:
        # textwrap cuts a long word at the width (or keeps it whole, too wide): break it
        # after a separator instead, and start it on a line of its own when little room is left
        room = max(width - cur_len, 1)
        chunk = reversed_chunks[-1]
        cut = 0
        for seps in SEPARATORS:
            cut = max(chunk.rfind(s, 0, room) for s in seps) + 1
            if cut >= MIN_PIECE:
                break
        if cur_line and cut < MIN_PIECE:
            return  # nothing taken: the word starts the next line
        end = cut if cut > 0 else room
        cur_line.append(chunk[:end])
        reversed_chunks[-1] = chunk[end:]


def fold(text: str, width: int = 100, *, indent: str = "", subsequent: str = "  ") -> list[str]:
    """``text`` (one paragraph) as lines of at most ``width`` columns: the first starts with
    ``indent``, the others with ``subsequent``. An empty text is one empty line."""
    return _Folder(
        width=width,
        initial_indent=indent,
        subsequent_indent=subsequent,
        break_on_hyphens=False,
        break_long_words=True,
    ).wrap(text) or [indent.rstrip()]


def fold_lines(text: str, width: int = 100, *, more: int = 4) -> str:
    """Every line of ``text`` wider than ``width`` folded, its continuations indented
    ``more`` columns deeper than the line itself; lines that fit are left as they are."""
    out: list[str] = []
    for line in text.splitlines() or [""]:
        if len(line) <= width:
            out.append(line)
            continue
        lead = " " * (len(line) - len(line.lstrip()))
        out += fold(line.lstrip(), width, indent=lead, subsequent=lead + " " * more)
    return "\n".join(out)
