"""Gateway helpers: HS256 tokens, the curl driver and the gateway verdict (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sizing.errors import UsageError
from sizing.load import curl
from sizing.measure import gateway
from sizing.plan import jwt, loadspec
from sizing.profiles import load


def test_token_round_trip_and_bad_signature() -> None:
    token = jwt.make_token(now=1_700_000_000)
    assert jwt.verify_token(token, now=1_700_000_100)
    assert not jwt.verify_token(jwt.bad_token(token), now=1_700_000_100)
    assert not jwt.verify_token(token, now=1_700_000_000 + 86400 + 1)  # expired
    assert not jwt.verify_token(token, "another-secret", now=1_700_000_100)
    assert not jwt.verify_token("not.a.jwt")
    head, payload, _ = token.split(".")
    assert jwt.bad_token(token).split(".")[:2] == [head, payload]


def test_request_headers_carry_the_jwt_only_for_api_jwt() -> None:
    assert loadspec.request_headers(load("proxy")) == ()
    (auth,) = loadspec.request_headers(load("api-jwt"), "abc")
    assert auth == "Authorization: Bearer abc"


def test_curl_golden_output(data_dir: Path) -> None:
    timings = curl.parse((data_dir / "curl" / "two_transfers.txt").read_text())
    assert [t.label for t in timings] == ["direct", "via"]
    assert timings[0].code == 200
    assert timings[0].ms["total"] == pytest.approx(0.689)
    assert timings[0].ms["connect"] == pytest.approx(0.560)
    assert curl.summary(timings, "via")["total"] == pytest.approx(0.081)
    with pytest.raises(curl.CurlParseError):
        curl.parse("curl: (7) Failed to connect\n")
    with pytest.raises(curl.CurlParseError):
        curl.summary(timings, "missing")


def test_curl_argv_one_fresh_connection_per_transfer() -> None:
    argv = curl.build_argv(
        [
            curl.Transfer("a", "http://127.0.0.1/x"),
            curl.Transfer("b", "https://127.0.0.1/y", ("X-A: 1",), True),
        ]
    )
    assert argv.count("--next") == 1 and argv.count("Connection: close") == 2
    assert argv.count("-o") == 1  # only the first body is discarded
    assert "X-A: 1" in argv
    for bad in (
        curl.Transfer("a b", "http://x/"),
        curl.Transfer("a", "ftp://x/"),
        curl.Transfer("a", "http://x/", ("bad",)),
    ):
        with pytest.raises(UsageError):
            curl.build_argv([bad])


def _line(label: str, code: int, total: float) -> str:
    return (
        f"sizing_curl label={label} code={code} namelookup=0.000010 connect=0.000100 "
        f"appconnect=0.000000 pretransfer=0.000120 starttransfer={total * 0.9:.6f} "
        f"total={total:.6f}\n"
    )


def test_judge_gateway_added_latency_and_jwt_verdict() -> None:
    prof = load("api-jwt")
    out = "".join(_line("direct", 200, 0.0005) for _ in range(5))
    out += "".join(_line("proxy", 200, 0.0008) for _ in range(5))
    out += _line("bad_jwt", 401, 0.0002) + _line("no_jwt", 401, 0.0002)
    good = _line("good_jwt", 200, 0.0009)
    log = _line("probe_log", 200, 0.0001)
    verdict = gateway.judge_gateway(prof, out + good + "good-n1 200\n" + log, "n1")
    assert (verdict.added_latency_ms or {})["total"] == pytest.approx(0.3)
    assert verdict.jwt_check is not None and verdict.jwt_check.ok
    leaked = gateway.judge_gateway(
        prof, out + good + "good-n1 200\nbad-n1 401\n" + _line("probe_log", 200, 0.0001), "n1"
    )
    assert leaked.jwt_check is not None
    assert not leaked.jwt_check.ok and leaked.jwt_check.rejected_reached_upstream
    accepted = out.replace("label=bad_jwt code=401", "label=bad_jwt code=200")
    judged = gateway.judge_gateway(prof, accepted + good + "good-n1 200\n", "n1")
    assert judged.jwt_check is not None and not judged.jwt_check.ok
    assert gateway.judge_gateway(load("proxy"), out, "n1").jwt_check is None


def test_gateway_transfers_for_api_jwt() -> None:
    token = jwt.make_token()
    t = gateway.gateway_transfers(
        load("api-jwt"), "http://u/1k", "http://p/api/1k", "http://u/sizing-probe-log", token, "n1"
    )
    labels = [x.label for x in t]
    assert labels.count("direct") == labels.count("proxy") == gateway.SINGLE_REQUESTS
    assert labels[-4:] == ["bad_jwt", "no_jwt", "good_jwt", "probe_log"]
    bad = t[-4]
    assert f"Authorization: Bearer {jwt.bad_token(token)}" in bad.headers
