"""The replay generator's inputs, pure: a workload's files and weighted targets
(sizing.plan.replay), vegeta's target list and argv (sizing.load.replay), its report."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizing.errors import UsageError
from sizing.load.base import LoadRequest
from sizing.load.replay import LIST_LENGTH, REPLAY, ReplayTarget, target_list
from sizing.load.tools import tool
from sizing.loadproto import CommandOutput
from sizing.plan.replay import HEADER_BYTES, ReplayPorts, body_size, replay_plan
from sizing.workload import Role, WorkloadMix

DATA = Path(__file__).resolve().parents[1] / "data" / "vegeta"
PORTS = ReplayPorts("127.0.0.1", 8080, 8443, 8444)
MIX = WorkloadMix(
    role=Role.STATIC,
    sizes=((0, 1024, 0.5), (1025, 16384, 0.3), (16385, None, 0.2)),
    size_field="bytes_sent",
    requests_per_connection=8.0,
    tls_share=0.6,
    resumption_share=0.4,
    status=(("2xx", 0.97), ("3xx", 0.03)),
)


def entries(text: str) -> list[tuple[str, tuple[str, ...]]]:
    out = []
    for block in text.strip().split("\n\n"):
        first, *headers = block.split("\n")
        assert first.startswith("GET ")
        out.append((first[4:], tuple(headers)))
    return out


def test_the_list_carries_the_mix_in_its_proportions() -> None:
    plan = replay_plan(MIX, PORTS)
    got = entries(plan.target_list())
    # each target rounds to whole entries: a share is off by at most half an entry a target
    slack = len(plan.targets) / 2 / LIST_LENGTH
    assert len(got) == LIST_LENGTH
    closes = sum("Connection: close" in h for _, h in got)
    assert closes == round(LIST_LENGTH / 8)  # exact, whatever the targets
    https = [u for u, _ in got if u.startswith("https://")]
    assert abs(len(https) / LIST_LENGTH - 0.6) <= slack
    resumed = [u for u in https if ":8444/" in u]
    assert abs(len(resumed) / len(https) - 0.4) <= 0.01
    # every listener has the mix's close share: its connections split as its requests do
    for port in (":8080/", ":8443/", ":8444/"):
        mine = [h for u, h in got if port in u]
        share = sum("Connection: close" in h for h in mine) / len(mine)
        assert abs(share - 1 / 8) <= 1 / len(mine), port
    redirects = [u for u, _ in got if u.endswith("/mix-redirect")]
    assert abs(len(redirects) / LIST_LENGTH - 0.03) <= slack
    by_file = Counter(u.rsplit("/", 1)[1] for u, _ in got if "redirect" not in u)
    small = f"mix-{body_size(0, 1024, 'bytes_sent')}b"
    assert abs(by_file[small] / LIST_LENGTH - 0.5 * 0.97) <= slack
    assert set(by_file) == set(plan.files)


def test_the_same_mix_gives_the_same_list() -> None:
    assert replay_plan(MIX, PORTS).target_list() == replay_plan(MIX, PORTS).target_list()


def test_a_wrong_replay_closes_every_connection() -> None:
    got = entries(replay_plan(MIX, PORTS, close_share=1.0).target_list())
    assert all("Connection: close" in h for _, h in got)


def test_role_headers_go_on_every_target() -> None:
    jwt = WorkloadMix(
        role=Role.API_JWT, sizes=((0, None, 1.0),), requests_per_connection=2, tls_share=0.0
    )
    got = entries(replay_plan(jwt, PORTS, headers=("Authorization: x",)).target_list())
    assert all("Authorization: x" in h for _, h in got)
    assert all("/api/mix-" in u for u, _ in got)


def test_a_mix_without_sizes_or_requests_per_connection_is_refused() -> None:
    with pytest.raises(UsageError, match="sizes"):
        replay_plan(WorkloadMix(requests_per_connection=2), PORTS)
    with pytest.raises(UsageError, match="requests-per-connection"):
        replay_plan(WorkloadMix(sizes=((0, None, 1.0),), tls_share=0.0), PORTS)
    with pytest.raises(UsageError, match="tls-share"):
        replay_plan(WorkloadMix(sizes=((0, None, 1.0),), requests_per_connection=2), PORTS)
    tls = WorkloadMix(sizes=((0, None, 1.0),), requests_per_connection=2, tls_share=0.5)
    with pytest.raises(UsageError, match="resumption-share"):
        replay_plan(tls, PORTS)


@given(st.integers(0, 10**7), st.one_of(st.none(), st.integers(0, 10**7)))
def test_a_class_file_answers_within_its_class_when_headers_allow(
    low: int, span: int | None
) -> None:
    high = None if span is None else low + span
    body = body_size(low, high, "body_bytes_sent")
    assert body >= low and (high is None or body <= high)
    whole = body_size(low, high, "bytes_sent")
    assert whole >= 0
    if low >= HEADER_BYTES:
        assert whole + HEADER_BYTES >= low and (high is None or whole + HEADER_BYTES <= high)


@given(
    st.lists(st.floats(0.001, 1.0), min_size=1, max_size=8),
    st.integers(10, 3000),
)
def test_every_entry_is_a_target_and_shares_round_by_less_than_one(
    shares: list[float], n: int
) -> None:
    targets = [ReplayTarget(f"http://127.0.0.1:1/{i}", s) for i, s in enumerate(shares)]
    got = Counter(u for u, _ in entries(target_list(targets, n)))
    assert sum(got.values()) == n
    for i, s in enumerate(shares):
        assert abs(got.get(f"http://127.0.0.1:1/{i}", 0) - s / sum(shares) * n) < 1


@given(st.floats(0.0, 1.0), st.integers(1, 3000))
def test_the_close_share_is_exact_to_one_entry(share: float, n: int) -> None:
    got = entries(target_list([ReplayTarget("http://a/", 1.0)], n, close_share=share))
    closes = sum("Connection: close" in h for _, h in got)
    assert closes == (max(1, round(share * n)) if share > 0 else 0)


def test_the_list_fits_the_window_runners_argument_with_room_to_spare() -> None:
    # the spec travels as one argument (Linux: 128 KiB): the longest URLs a replay makes
    ports = ReplayPorts("255.255.255.255", 65535, 65534, 65535)
    text = replay_plan(MIX, ports, close_share=1.0).target_list()
    assert len(json.dumps(text)) < 20 * 1024


def test_a_header_or_url_that_would_split_a_target_is_refused() -> None:
    with pytest.raises(UsageError):
        target_list([ReplayTarget("http://a/\nGET http://b/", 1.0)])
    with pytest.raises(UsageError):
        target_list([ReplayTarget("http://a/", 1.0, ("X: y\r\nZ: w",))])


def test_the_registry_knows_the_replay_generator_and_its_argv_is_closed_loop() -> None:
    assert tool("vegeta-replay") is REPLAY
    req = LoadRequest(
        url="", duration_s=5, connections=40, tool_dir="/t", cpus=(1,), targets="GET http://a/\n"
    )
    cmd = REPLAY.command(replace(req, headers=("Authorization: Bearer t",)))
    assert cmd.argv[:3] == ["taskset", "-c", "1"]
    assert "-header=Authorization: Bearer t" in cmd.argv
    for flag in ("-rate=0", "-max-workers=40", "-session-tickets", "-keepalive=true"):
        assert flag in cmd.argv
    assert cmd.stdin == "GET http://a/\n" and cmd.then[0][1:3] == ["report", "-type=json"]
    with pytest.raises(UsageError, match="target list"):
        REPLAY.command(LoadRequest(url="", duration_s=5, connections=4, tool_dir="/t"))


def test_its_report_reads_as_closed_loop_figures() -> None:
    text = (DATA / "steady_500rps_2s.json").read_text()
    out = CommandOutput(argv=[], rc=0, stdout="", stderr="", then=[CommandOutput([], 0, text, "")])
    got = REPLAY.parse(out)
    assert got.requests > 0 and got.rps == pytest.approx(got.requests / got.duration_s)
    assert got.error_ratio == 0
