"""User strings are escaped for their output format (issue 16): the Markdown guide turns
Markdown and HTML specials into text, the terminal drops control characters."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from sizing.cli import app

runner = CliRunner()

HOSTILE = "<script>alert(1)</script> *bold* _it_ [x](javascript:y) | `c` \\ ~s~\n# Heading"


def test_markdown_guide_escapes_the_customer(tmp_path: Path) -> None:
    out = tmp_path / "g.md"
    res = runner.invoke(
        app, ["guide", "--source", "reference", "--customer", HOSTILE, "--out", str(out)]
    )
    assert res.exit_code == 0, res.stderr
    md = out.read_text(encoding="utf-8")
    [line] = [ln for ln in md.splitlines() if ln.startswith("**Prepared for:**")]
    assert "<script>" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in line
    for raw in ("*bold*", "_it_", "[x]", "| `c`", "~s~"):
        assert raw not in line, raw
    assert r"\*bold\* \_it\_ \[x\](javascript:y) \| \`c\` \\ \~s\~" in line
    assert r"\# Heading" in line  # the newline is gone: nothing starts a line of its own
    assert not any(ln.startswith("# Heading") for ln in md.splitlines())
    # The template's own Markdown is untouched.
    assert md.startswith("# ") and "## 1. Executive summary" in md


def test_html_guide_escapes_the_customer(tmp_path: Path) -> None:
    out = tmp_path / "g.html"
    res = runner.invoke(
        app, ["guide", "--source", "reference", "--customer", HOSTILE, "--out", str(out)]
    )
    assert res.exit_code == 0, res.stderr
    html = out.read_text(encoding="utf-8")
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)" in html
