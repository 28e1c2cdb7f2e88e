"""sizing.textfit: text folded to the width, never cut (issue 62's width rule): generated
texts of words, paths and tokens, and the invariants every folding keeps."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sizing.textfit import fold, fold_lines

WORD = st.text(st.sampled_from("abcxyz0189/.:-_,"), min_size=1, max_size=240)
TEXT = st.lists(WORD, min_size=1, max_size=30).map(" ".join)
WIDTHS = st.integers(min_value=20, max_value=120)


@given(TEXT, WIDTHS)
def test_every_line_fits_and_nothing_is_lost(text: str, width: int) -> None:
    lines = fold(text, width, indent="", subsequent="  ")
    assert all(len(x) <= width for x in lines)
    # the pieces, joined, give every character back in order: wrapped, never cut
    assert "".join("".join(x.split()) for x in lines) == "".join(text.split())


@given(TEXT, WIDTHS)
def test_a_word_that_fits_a_line_is_never_broken(text: str, width: int) -> None:
    lines = fold(text, width)
    pieces = {p for x in lines for p in x.split()}
    for word in text.split():
        if len(word) <= width - 2:  # fits a continuation line
            assert word in pieces


def test_a_long_path_breaks_after_a_slash() -> None:
    path = "/srv/logs/" + "edge-proxy-cluster-frankfurt-az2/" * 4 + "access.log"
    lines = fold(f"note: first at {path}:38: not in the given format", 60)
    assert all(len(x) <= 60 for x in lines)
    assert all(x.rstrip().endswith(("/", "format")) or ":38:" in x for x in lines)


def test_lines_that_fit_are_left_alone() -> None:
    text = "short line\n" + "  - " + "word " * 40
    out = fold_lines(text, 50).splitlines()
    assert out[0] == "short line"
    assert all(len(x) <= 50 for x in out)
    assert all(x.startswith("      ") for x in out[2:])  # continuations 4 deeper
