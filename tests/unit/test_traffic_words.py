"""The guide compares bodies with bodies (issue 62): ``$body_bytes_sent`` against the
measured 128 B body, ``$bytes_sent`` (headers included) against the measured response with
its headers; 3-byte bodies logged with their headers are not "0% 128 B or smaller"."""

from __future__ import annotations

import time
from pathlib import Path

from sizing.demand.formats import COMBINED, compile_format
from sizing.demand.logs import read_logs
from sizing.report.data.traffic import _size_words

T0 = 1_764_300_000


def _log(path: Path, size: int, fmt_bytes: str) -> Path:
    lines = []
    for s in range(30):
        ts = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(T0 + s))
        lines.append(f'127.0.0.1 - - [{ts}] "GET / HTTP/1.1" 200 {size} "-" "curl/8"\n')
    path.write_text("".join(lines))
    return path


def test_bytes_sent_with_headers_is_compared_with_the_response_with_headers(
    tmp_path: Path,
) -> None:
    fmt = compile_format(COMBINED.replace("$body_bytes_sent", "$bytes_sent"), name="x")
    d = read_logs([_log(tmp_path / "a.log", 250, "bytes_sent")], fmt, given=True)
    words = _size_words(d)
    assert words.startswith("100% of your responses are 512 B or smaller with their headers")
    assert "not an upper bound" not in words


def test_bodies_are_compared_with_the_measured_body(tmp_path: Path) -> None:
    fmt = compile_format(COMBINED, name="combined")
    small = read_logs([_log(tmp_path / "a.log", 3, "body")], fmt, given=False)
    assert _size_words(small).startswith("100% of your response bodies are 128 B or smaller")
    big = read_logs([_log(tmp_path / "b.log", 250, "body")], fmt, given=False)
    words = _size_words(big)
    assert words.startswith("0% of your response bodies are 128 B or smaller")
    assert "not an upper bound" in words and "--workload" in words
