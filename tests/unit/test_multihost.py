"""Multi-host verdicts and merges: latency mixtures, network-bound, clients needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.load.latency import merge_latency
from sizing.load.wrk import LatencyReport, WrkParseError, WrkSpec, build_argv, parse_report
from sizing.loadproto import CommandOutput, WindowOutput, WindowSpec
from sizing.measure.multihost import (
    NetRate,
    busiest_interface,
    link_bytes_per_s,
    multihost_extras,
    net_rates,
    network_verdict,
)
from sizing.records import HostRecord
from sizing.store import Store

DATA = Path(__file__).parent.parent / "data"


def uniform(lo_ms: float, hi_ms: float, count: int) -> LatencyReport:
    """A client whose latencies are spread evenly over [lo, hi]."""
    cdf = tuple((float(p), lo_ms + (hi_ms - lo_ms) * p / 100) for p in range(1, 100))
    return LatencyReport(count, lo_ms, hi_ms, (lo_ms + hi_ms) / 2, cdf, requests=count)


# -- the wrk report script -----------------------------------------------------------------


def test_parse_report_of_a_real_wrk_run() -> None:
    r = parse_report((DATA / "wrk" / "report_script_keepalive.txt").read_text())
    assert r.count == r.requests == 55000
    assert r.errors == 0
    cdf = dict(r.cdf)
    assert cdf[50.0] == pytest.approx(0.166)  # wrk's own 50% line says 166.00us
    assert cdf[99.0] == pytest.approx(2.202)  # and 2.20ms at 99%
    assert r.min_ms <= cdf[0.1] <= cdf[50.0] <= cdf[99.99] <= r.max_ms
    assert len(r.cdf) == 104


def test_parse_report_missing_or_malformed() -> None:
    with pytest.raises(WrkParseError, match="wrk_report.lua did not run"):
        parse_report("Requests/sec: 1.0\n")
    with pytest.raises(WrkParseError, match="malformed"):
        parse_report('{"sizing_wrk_report":1,"requests":3}\n')


def test_argv_carries_the_script_before_the_url() -> None:
    argv = build_argv(WrkSpec("http://h/", 1, 2, 3.0, script="/var/tmp/sizing/wrk_report.lua"))
    assert argv[-3:] == ["-s", "/var/tmp/sizing/wrk_report.lua", "http://h/"]


# -- merging latency -----------------------------------------------------------------------


def test_merging_one_distribution_gives_it_back() -> None:
    r = parse_report((DATA / "wrk" / "report_script_keepalive.txt").read_text())
    m = merge_latency([r])
    assert m is not None
    assert m.percentiles_ms[50.0] == pytest.approx(dict(r.cdf)[50.0])
    assert m.percentiles_ms[99.0] == pytest.approx(dict(r.cdf)[99.0])
    assert (m.count, m.min_ms, m.max_ms, m.mean_ms) == (r.count, r.min_ms, r.max_ms, r.mean_ms)


def test_two_equal_clients_merge_to_the_same_distribution() -> None:
    a = uniform(1.0, 3.0, 1000)
    m = merge_latency([a, a])
    assert m is not None and m.count == 2000
    assert m.percentiles_ms[50.0] == pytest.approx(2.0)
    assert m.percentiles_ms[90.0] == pytest.approx(2.8)


def test_disjoint_clients_weighted_by_requests_not_averaged() -> None:
    fast = uniform(1.0, 2.0, 9000)  # 90% of the requests
    slow = uniform(10.0, 20.0, 1000)  # 10% of the requests
    m = merge_latency([fast, slow], percentiles=(50.0, 90.0, 95.0, 99.0))
    assert m is not None
    # The median request is a fast one: 50% of all is 55.6% into the fast client.
    assert m.percentiles_ms[50.0] == pytest.approx(1.0 + 50 / 90, rel=1e-6)
    # p90 is the boundary between the two; p95 and p99 are inside the slow client.
    assert 2.0 <= m.percentiles_ms[90.0] <= 10.0
    assert m.percentiles_ms[95.0] == pytest.approx(15.0, rel=1e-6)
    assert m.percentiles_ms[99.0] == pytest.approx(19.0, rel=1e-6)
    # Not the average of the clients' p99s (10.9), nor their maximum (19.9).
    assert m.percentiles_ms[99.0] != pytest.approx((1.99 + 19.9) / 2)
    assert m.percentiles_ms[99.0] != pytest.approx(19.9)
    assert m.mean_ms == pytest.approx(0.9 * 1.5 + 0.1 * 15.0)
    assert (m.min_ms, m.max_ms) == (1.0, 20.0)


def test_weights_move_the_percentiles() -> None:
    few_slow = merge_latency([uniform(1, 2, 9900), uniform(10, 20, 100)])
    many_slow = merge_latency([uniform(1, 2, 5000), uniform(10, 20, 5000)])
    assert few_slow is not None and many_slow is not None
    assert few_slow.percentiles_ms[90.0] < 2.0 < 10.0 < many_slow.percentiles_ms[90.0]


def test_steps_where_many_requests_share_one_latency() -> None:
    flat = LatencyReport(100, 5.0, 5.0, 5.0, tuple((float(p), 5.0) for p in range(1, 100)))
    m = merge_latency([flat, uniform(0.0, 10.0, 100)])
    assert m is not None
    assert m.percentiles_ms[50.0] == pytest.approx(5.0)
    assert m.percentiles_ms[99.0] == pytest.approx(9.8, rel=1e-6)


def test_nothing_to_merge() -> None:
    assert merge_latency([]) is None
    assert merge_latency([LatencyReport(0, 0, 0, 0, ())]) is None


# -- network-bound -------------------------------------------------------------------------


def test_net_rates_and_the_busiest_interface() -> None:
    before = {"lo": [0, 0], "eth0": [1000, 2000], "eth1": [0, 0]}
    after = {"lo": [500, 500], "eth0": [3000, 12000], "eth1": [10, 10]}
    rates = net_rates(before, after, 2.0)
    assert rates["eth0"] == NetRate("eth0", 1000.0, 5000.0)
    busiest = busiest_interface(rates)
    assert busiest is not None and busiest.interface == "eth0"
    assert net_rates(before, after, 0) == {}


def test_link_speed_from_sysfs_or_the_inventory() -> None:
    speeds = {"eth0": 10000, "veth0": None}
    assert link_bytes_per_s("eth0", speeds) == 10000e6 / 8
    assert link_bytes_per_s("veth0", speeds) is None
    assert link_bytes_per_s("lo", speeds) is None
    assert link_bytes_per_s("eth0", speeds, nic_gbps=25) == 25e9 / 8  # inventory wins


def test_network_verdict_at_ninety_percent_of_the_link() -> None:
    link = 10e9 / 8  # 10 Gb/s
    near = NetRate("eth0", 30e6, 0.95 * link)  # the article's 100 KB file case
    reason = network_verdict(near, link)
    assert reason is not None
    assert reason.startswith("network-bound: the server sent 9.50 Gb/s on eth0, 95% of its 10")
    assert network_verdict(NetRate("eth0", 30e6, 0.5 * link), link) is None
    assert network_verdict(near, None) is None  # an unknown link speed decides nothing
    assert network_verdict(None, link) is None


def _window(idx: int, stdout: str = "", net: tuple[int, int] | None = None) -> WindowOutput:
    return WindowOutput(
        idx,
        100.0,
        102.0,
        commands=[CommandOutput([], 0, stdout)] if stdout else [],
        net_before={"eth0": [0, 0]} if net else None,
        net_after={"eth0": list(net)} if net else None,
    )


def test_multihost_extras_merge_and_flag() -> None:
    report = (DATA / "wrk" / "report_script_keepalive.txt").read_text()
    windows = [WindowSpec(i, 0.0, 2.0) for i in (0, 1, 2)]
    link = 1e9 / 8
    outputs = {
        "srv": [_window(i, net=(1000, int(2 * 0.97 * link))) for i in (0, 1, 2)],
        "c1": [_window(i, report) for i in (0, 1, 2)],
        "c2": [_window(i, report) for i in (0, 1, 2)],
    }
    ex = multihost_extras(
        ["c1", "c2"], "srv", outputs, windows, HostRecord(nic_speeds_mbps={"eth0": 1000}), None
    )
    assert ex.flags == ["network-bound"]
    assert "97%" in ex.reasons[0]
    net = ex.windows[1].server_net
    assert net is not None and net.interface == "eth0"
    assert ex.windows[1].latency.latency_count == 2 * 55000
    # the two timed windows, not the warm-up
    assert ex.point.latency.latency_count == 4 * 55000
    assert ex.point.latency.latency_p50_ms == pytest.approx(0.166)
    assert ex.point.server_net_tx_bytes_per_s == pytest.approx(0.97 * link, rel=1e-6)
    # The same traffic on a 10 Gb/s link is far from network-bound.
    ex10 = multihost_extras(
        ["c1"], "srv", outputs, windows, HostRecord(nic_speeds_mbps={"eth0": 10000}), None
    )
    assert ex10.flags == [] and ex10.reasons == []


# -- --resume and --plan at the command line --------------------------------------------------

cli = CliRunner()


def test_resume_refuses_options_that_contradict_the_run(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        store.start_run(inventory="inv.yml", argv=[], tool_version="t", options={})
    result = cli.invoke(app, ["run", "--resume", "1", "--cores", "2", "--db", str(db)])
    assert result.exit_code == 2
    assert "--resume 1 measures with that run's own inventory and options; drop --cores" in (
        result.stderr
    )


def test_resume_of_a_missing_run_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    Store(db).close()
    result = cli.invoke(app, ["run", "--resume", "7", "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"error: --resume: no run 7 in {db}"
    missing = cli.invoke(app, ["run", "--resume", "7", "--db", str(tmp_path / "none.sqlite")])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


def test_plan_document_is_json() -> None:
    # The dry run's renderer on a hand-made document (the facts need real hosts).
    from sizing.plan.document import (
        PlanClient,
        PlanDocument,
        PlanEstimate,
        PlanHost,
        PlanPlaybook,
        PlanPoint,
        PlanPointRun,
        PlanWindows,
    )
    from sizing.plan.dryrun_text import plan_text

    argv = ["taskset", "-c", "0-7", "wrk", "-t8", "-H", "Connection: close"]
    run = PlanPointRun(
        "0",
        1,
        "1",
        "http://192.0.2.10:8080/128b",
        PlanWindows(3, 10, 3),
        [PlanClient("load1", "0-7", 8, 50, argv)],
    )
    doc = PlanDocument(
        nothing_to_measure=None,
        inventory="lab.yml",
        resume_run=None,
        probed=True,
        hosts=[PlanHost("web1", ["server"], "192.0.2.10", "probed", True, None, 32, None, "Xeon")],
        points=[PlanPoint("web1", "baremetal", 1, "off", "rps", "planned", "", run)],
        servers=[],
        estimate=PlanEstimate(1, 1, 40, 80, 14),
        playbooks=[PlanPlaybook("load.yml", 1)],
        preflight=["load1: clock is 3.0 s ahead"],
        pairs=None,
        unpaired=None,
    )
    got = json.loads(json.dumps(doc.to_json()))
    (point,) = got["points"]
    assert point["server_cpus"] == "0" and point["windows"]["repetitions"] == 3
    assert "offered" not in point and "upstreams" not in point  # left out when None
    assert got["pairs"] is None and got["playbooks"] == [{"playbook": "load.yml", "runs": 1}]
    text = plan_text(doc)
    assert "load1 (CPUs 0-7): taskset -c 0-7 wrk -t8 -H 'Connection: close'" in text
    assert "  - load1: clock is 3.0 s ahead" in text


# -- Ansible plumbing a lab relies on ----------------------------------------------------------


def test_inline_vault_values_load(tmp_path: Path) -> None:
    from sizing.inventory import load_inventory

    path = tmp_path / "lab.yml"
    path.write_text(
        "all:\n"
        "  vars:\n"
        "    ansible_become_password: !vault |\n"
        "      $ANSIBLE_VAULT;1.1;AES256\n"
        "      62313365396662343061393464336163383764373764613633653634306231386433626436623361\n"
        "  children:\n"
        "    servers: {hosts: {web1: {ansible_host: 192.0.2.10}}}\n"
        "    clients: {hosts: {load1: {ansible_host: 192.0.2.21}}}\n"
    )
    # Ansible's meaning (the old reader turned it into the text "<vault-encrypted>"): an
    # encrypted value, decrypted only when read. sizing never reads it, so the inventory
    # loads without a vault password.
    from ansible.parsing.vault import EncryptedString

    inv = load_inventory(path)
    assert isinstance(inv.hosts["web1"].variables["ansible_become_password"], EncryptedString)


def test_event_times_bracket_a_task() -> None:
    from sizing.provision.ansible import event_time as _created

    assert _created({"created": "2026-01-02T03:04:05.250000+00:00"}) == pytest.approx(1767323045.25)
    assert _created({"created": "2026-01-02T03:04:05.250000"}) == pytest.approx(1767323045.25)
    assert _created({}) is None and _created({"created": "yesterday"}) is None
