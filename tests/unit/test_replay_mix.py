"""The replay's closed loop, pure: the lab log tallied (MixCounts), read back into the
customer's classes, compared, and the mix-mismatch verdict."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizing.loadproto import MixCounts
from sizing.measure.replay_mix import (
    MIX_MISMATCH,
    replay_record,
    replayed_mix,
    verdict,
)
from sizing.workload import Role, WorkloadMix

YOURS = WorkloadMix(
    role=Role.STATIC,
    sizes=((0, 1024, 0.5), (1025, 16384, 0.3), (16385, None, 0.2)),
    size_field="bytes_sent",
    per_connection=((1, 1, 0.125), (2, 5, 0.36), (6, None, 0.515)),
    requests_per_connection=8.0,
    tls_share=0.6,
    resumption_share=0.4,
    status=(("2xx", 1.0),),
)


def log_lines(connections: list[tuple[int, str]], size: int = 500, status: int = 200) -> list[str]:
    """The lab log of ``connections`` (requests, first $ssl_session_reused) in MIX_LOG_FORMAT."""
    lines = []
    for cid, (n, how) in enumerate(connections, start=1):
        for k in range(1, n + 1):
            reused = how if how != "-" else "-"
            lines.append(f"1.0 0.000 {cid} {k} {reused} {size} {size - 243} {status}")
    return lines


def tally(lines: list[str]) -> MixCounts:
    counts = MixCounts()
    for line in lines:
        counts.add_line(line)
    return counts


def test_known_connections_are_read_back_exactly() -> None:
    conns = [(1, "-")] * 2 + [(3, ".")] * 3 + [(10, "r")] * 5  # 10 connections, 61 requests
    mix = replayed_mix(tally(log_lines(conns)), YOURS)
    assert mix.requests_per_connection == 61 / 10
    assert mix.per_connection == ((1, 1, 0.2), (2, 5, 0.3), (6, None, 0.5))
    assert mix.tls_share == 0.8 and mix.resumption_share == 5 / 8
    assert mix.sizes == ((0, 1024, 1.0), (1025, 16384, 0.0), (16385, None, 0.0))
    assert mix.status == (("2xx", 1.0),)


def test_body_sizes_are_used_when_the_customer_counted_bodies() -> None:
    body = WorkloadMix(sizes=((0, 300, 0.5), (301, None, 0.5)), size_field="body_bytes_sent")
    mix = replayed_mix(tally(log_lines([(2, "-")], size=500)), body)  # body 257
    assert mix.sizes == ((0, 300, 1.0), (301, None, 0.0))


def test_lines_of_another_shape_are_counted_apart_never_raised() -> None:
    lines = ["", "garbage", "1 2 3 x - 5 6 200", "1.0 0.0 1 1 - 10 10 200 extra"]
    lines.append("1.0 0.0 1 \u00b2 - 10 10 200")  # a digit to isdigit(), not to int()
    counts = tally(lines)
    assert counts.requests == 0 and counts.unparsed == 5


def test_memory_is_bounded_by_distinct_values() -> None:
    counts = tally([f"1.0 0.0 1 {k} - {k} {k} 200" for k in range(1, 5000)])
    assert len(counts.per_conn) <= 512 and len(counts.sizes) <= 512
    assert counts.overflow > 0 and counts.requests == 4999


conn_lists = st.lists(
    st.tuples(st.integers(1, 40), st.sampled_from(["-", ".", "r"])), min_size=1, max_size=60
)


@given(conn_lists)
def test_shares_add_up_and_the_mean_is_the_lines_over_the_connections(
    conns: list[tuple[int, str]],
) -> None:
    mix = replayed_mix(tally(log_lines(conns)), YOURS)
    assert abs(sum(s for _, _, s in mix.per_connection) - 1.0) < 1e-9
    assert abs(sum(s for _, _, s in mix.sizes) - 1.0) < 1e-9
    assert mix.requests_per_connection == sum(n for n, _ in conns) / len(conns)
    tls = [h for _, h in conns if h != "-"]
    assert mix.tls_share == len(tls) / len(conns)
    if tls:
        assert mix.resumption_share == tls.count("r") / len(tls)


@given(conn_lists, conn_lists)
def test_windows_merge_into_the_tally_of_both(
    a: list[tuple[int, str]], b: list[tuple[int, str]]
) -> None:
    merged = tally(log_lines(a)).merge(tally(log_lines(b)))
    assert merged == tally(log_lines(a) + log_lines(b))
    assert MixCounts.from_json(merged.to_json()) == merged


@given(conn_lists, st.integers(0, 10_000))
def test_a_shuffled_log_reads_the_same(conns: list[tuple[int, str]], seed: int) -> None:
    lines = log_lines(conns)
    shuffled = list(lines)
    random.Random(seed).shuffle(shuffled)
    assert tally(shuffled) == tally(lines)


def geometric_connections(mean: float, n: int, tls: float, resumed: float) -> list[tuple[int, str]]:
    rnd = random.Random(1)
    out = []
    for _ in range(n):
        k = 1
        while rnd.random() > 1 / mean:
            k += 1
        r = rnd.random()
        how = "-" if r >= tls else ("r" if r < tls * resumed else ".")
        out.append((k, how))
    return out


def test_the_customers_mix_replayed_matches() -> None:
    conns = geometric_connections(8.0, 3000, 0.6, 0.4)
    lines = log_lines(conns[:1500], size=500) + log_lines(conns[1500:2400], size=4000)
    lines += log_lines(conns[2400:], size=40000)
    record = replay_record("customer-abc", YOURS, tally(lines))
    assert verdict(record) is None, record
    assert record.ok and "requests per connection" in record.words
    assert "(yours 8.0)" in record.words and "(yours 60%)" in record.words


def test_one_request_per_connection_is_a_mix_mismatch() -> None:
    conns = [(1, "-")] * 400 + [(1, ".")] * 360 + [(1, "r")] * 240
    record = replay_record("customer-abc", YOURS, tally(log_lines(conns)))
    found = verdict(record)
    assert found is not None and found.flag == MIX_MISMATCH and found.invalid
    assert "requests per connection 1.0 (yours 8.0)" in found.reason
    assert not record.ok


def test_an_empty_log_is_a_mismatch_not_a_match() -> None:
    record = replay_record("customer-abc", YOURS, MixCounts())
    found = verdict(record)
    assert found is not None and "no request" in found.reason


def test_a_mismatched_replay_makes_a_measured_point_invalid_and_keeps_its_figure() -> None:
    from sizing.measure.replay import with_replay
    from sizing.model import PointKey, PointResult, Status
    from sizing.records import PointMeta

    key = PointKey("h", "baremetal", 1, "off", "customer-abc")
    measured = PointResult(key, Status.MEASURED, "", value=5000.0, metadata=PointMeta())
    wrong = tally(log_lines([(1, "-")] * 50))
    got = with_replay(measured, "customer-abc", YOURS, wrong)
    assert got.status is Status.INVALID and MIX_MISMATCH in got.flags
    assert got.value == 5000.0 and "requests per connection 1.0 (yours 8.0)" in got.reason
    assert got.metadata.replay is not None and not got.metadata.replay.ok
    conns = geometric_connections(8.0, 3000, 0.6, 0.4)
    right = tally(
        log_lines(conns[:1500], size=500)
        + log_lines(conns[1500:2400], size=4000)
        + log_lines(conns[2400:], size=40000)
    )
    fine = with_replay(measured, "customer-abc", YOURS, right)
    assert fine.status is Status.MEASURED and fine.flags == ()
    assert fine.metadata.replay is not None and fine.metadata.replay.key == "customer-abc"
    failed = PointResult(key, Status.FAILED, "nginx died", metadata=PointMeta())
    assert with_replay(failed, "customer-abc", YOURS, wrong).status is Status.FAILED


def test_the_replay_record_survives_the_store_codec() -> None:
    from sizing.records import PointMeta

    record = replay_record("customer-abc", YOURS, tally(log_lines([(3, "r")] * 10)))
    meta = PointMeta(replay=record)
    assert PointMeta.parse(meta.to_json()) == meta


@given(
    st.integers(0, 7),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
    st.integers(1, 999),
)
def test_a_line_with_one_field_mutated_is_counted_or_set_apart_never_raised(
    field: int, value: str, k: int
) -> None:
    parts = ["1796400000.123", "0.001", "17", str(k), "r", "500", "257", "200"]
    parts[field] = value
    counts = MixCounts()
    counts.add_line(" ".join(parts))
    assert counts.requests + counts.unparsed == 1
    if counts.requests:
        assert sum(counts.status.values()) == 1 and sum(counts.per_conn.values()) == 1


def test_the_run_says_your_traffic_replayed_within_the_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    from sizing.app.run import Measured
    from sizing.cli import run_render
    from sizing.model import PointKey, PointResult, RunStatus, RunSummary, Status
    from sizing.records import PointMeta

    monkeypatch.setattr(run_render, "columns", lambda: 80)
    wrong = replay_record("customer-abc", YOURS, tally(log_lines([(1, "-")] * 50)))
    key = PointKey("h", "baremetal", 1, "off", "customer-abc")
    point = PointResult(
        key, Status.INVALID, "mix-mismatch", value=1.0, metadata=PointMeta(replay=wrong)
    )
    summary = RunSummary(1, RunStatus.COMPLETE, [point])
    run_render.render_run(Measured(summary, {}), "", Path("db"), json_out=False, verbose=False)
    out = capsys.readouterr().out
    said = out[out.index("Your traffic, replayed (h baremetal 1c ht=off customer-abc)") :]
    assert "requests per connection 1.0 (yours 8.0)" in " ".join(said.split())
    assert "[mix-mismatch: not used for sizing]" in " ".join(said.split())
    assert all(len(line) <= 80 for line in out.splitlines() if "replayed" in line)
