"""The load generators' registry (:mod:`sizing.load.tools`): every generator a profile may
name is registered, a fixed-rate profile's tool is chosen by capability, the tools build the
window commands from a tool-neutral request and parse their outputs, and no module outside
the registry compares a generator's name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sizing import profiles
from sizing.inventory import Inventory, load_inventory
from sizing.load import oha, vegeta
from sizing.load.tools import (
    OHA,
    OPEN_LOOP,
    TOOLS,
    VEGETA,
    WRK,
    client_installs,
    open_loop_tool,
    tool,
)
from sizing.loadproto import CommandOutput
from sizing.model import Ht
from sizing.plan import PlannedPoint, build_plan
from sizing.plan.dryrun import _point as plan_point
from sizing.plan.dryrun import open_loop_plan_argv
from sizing.plan.loadspec import client_request, closed_request, generator_problem
from sizing.plan.settings import MeasureSettings, Schedule
from sizing.topology import Topology, cpulist

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
REGISTRY = ROOT / "sizing" / "load" / "tools.py"
LOAD = ROOT / "sizing" / "load"
NAMES = "|".join(sorted(TOOLS))
# `x == "oha"`, `"wrk" != x`, `x in ("oha", ...)`, `x not in {"vegeta"}`
NAME_CHECK = re.compile(
    rf"""(==|!=)\s*["']({NAMES})["']|["']({NAMES})["']\s*(==|!=)"""
    rf"""|\bin\s*[(\[{{]\s*["']({NAMES})["']"""
)


def name_checks(text: str) -> list[str]:
    """The lines of ``text`` that compare a generator's name."""
    return [line.strip() for line in text.splitlines() if NAME_CHECK.search(line)]


def test_the_check_sees_a_name_check() -> None:
    bad = (
        'if point.profile.generator == "oha":\n'
        "    x = 1\n"
        "tool = 'vegeta' if 'wrk' != gen else gen\n"
        'if generator in ("oha", "vegeta"):\n'
        'BUILD_TIME = {"oha": "about 4 to 6 minutes"}\n'
    )
    assert name_checks(bad) == [
        'if point.profile.generator == "oha":',
        "tool = 'vegeta' if 'wrk' != gen else gen",
        'if generator in ("oha", "vegeta"):',
    ]


def test_no_generator_name_check_outside_the_registry() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {line}"
        for path in sorted((ROOT / "sizing").rglob("*.py"))
        if path != REGISTRY
        for line in name_checks(path.read_text(encoding="utf-8"))
    ]
    assert found == []


# A generator's name as a word of its own in any text: code, strings, comments, docstrings
# (``_`` separates words here, so a host's ``wrk_version`` is the name too).
NAME_WORD = re.compile(
    rf"(?<![A-Za-z0-9])({'|'.join(re.escape(n) for n in sorted(TOOLS))})(?![A-Za-z0-9])",
    re.IGNORECASE,
)
HOST_SCRIPTS = ROOT / "playbooks" / "files"


def name_words(text: str) -> list[str]:
    """The lines of ``text`` that name a registered generator."""
    return [line.strip() for line in text.splitlines() if NAME_WORD.search(line)]


def test_the_grep_sees_a_generator_name() -> None:
    text = (
        "wrk_version: str | None = None\n"
        "# offered by vegeta\n"
        'x = "OHA"\n'
        "frameworks, ohana, h2loader, vegetables\n"
    )
    assert name_words(text) == [
        "wrk_version: str | None = None",
        "# offered by vegeta",
        'x = "OHA"',
    ]


def test_no_generator_name_outside_sizing_load() -> None:
    """Issue 60: no generator's name outside ``sizing/load/`` (its module and its registry
    line) and the profiles' data, with no allowance: not in the rest of ``sizing/``, nor in
    the host scripts but a generator's own (a file a module of ``sizing/load/`` names, such
    as the report script it ships), nor in the templates (nginx's, the guide's)."""
    load_text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(LOAD.glob("*.py")))
    own = {p for p in HOST_SCRIPTS.iterdir() if p.is_file() and p.name in load_text}
    scanned = [p for p in sorted((ROOT / "sizing").rglob("*.py")) if LOAD not in p.parents]
    scanned += [p for p in sorted(HOST_SCRIPTS.glob("*.py")) if p not in own]
    scanned += [p for p in sorted((ROOT / "templates").rglob("*")) if p.is_file()]
    found = [
        f"{path.relative_to(ROOT)}: {line}"
        for path in scanned
        for line in name_words(path.read_text(encoding="utf-8"))
    ]
    assert found == []
    assert len(scanned) > 100  # the walk saw the package


def test_no_tool_module_is_imported_outside_sizing_load() -> None:
    """The rest of sizing reaches a generator through the registry only: no module outside
    ``sizing/load/`` imports a tool's own module (wrk's argv or its report parser)."""
    tool_modules = "|".join(sorted(TOOLS))
    imports = re.compile(
        rf"from sizing\.load import .*\b({tool_modules})\b|from sizing\.load\.({tool_modules}) "
    )
    found = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in sorted((ROOT / "sizing").rglob("*.py"))
        if LOAD not in path.parents
        for line in path.read_text(encoding="utf-8").splitlines()
        if imports.search(line)
    ]
    assert found == []


def test_every_generator_a_profile_names_is_registered() -> None:
    named = {profiles.load(n).generator for n in profiles.available()}
    assert named <= set(TOOLS)
    assert set(TOOLS) >= {"wrk", "oha", "vegeta"}
    assert set(OPEN_LOOP) == {n for n, t in TOOLS.items() if t.capabilities.open_loop}
    assert not WRK.capabilities.open_loop
    assert WRK.capabilities.full_handshakes and OHA.capabilities.full_handshakes
    # a tool installed by the clients' playbook names its command and packages; one that
    # sizing builds and copies (oha, vegeta) none
    assert OHA.install is None and VEGETA.install is None
    assert client_installs([]) == (["wrk"], ["wrk"])


def test_the_default_generator_is_registered() -> None:
    """``sizing.load.DEFAULT_GENERATOR`` lives beside no driver (the store's readers name
    it without importing them): it is the registry's wrk, and importing it loads no driver."""
    import subprocess
    import sys

    from sizing.load import DEFAULT_GENERATOR

    assert tool(DEFAULT_GENERATOR) is WRK
    code = (
        "import sys; from sizing.load import DEFAULT_GENERATOR; "
        "print(sorted(m for m in sys.modules if m.startswith('sizing.load.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_profile_its_generator_cannot_measure_is_one_line() -> None:
    tps = profiles.load("tps")
    assert generator_problem(tps) == ""
    assert "generator: unknown load generator 'no-such-tool'" in generator_problem(
        tps.model_copy(update={"generator": "no-such-tool"})
    )
    no_close = [n for n, t in TOOLS.items() if not t.capabilities.full_handshakes]
    for name in no_close:  # a TPS profile needs a new connection per request
        why = generator_problem(tps.model_copy(update={"generator": name}))
        assert why.startswith("profile tps: generator: ") and "keepalive" in why


def test_a_fixed_rate_profile_naming_wrk_is_offered_its_rates_by_vegeta() -> None:
    assert open_loop_tool("oha") is OHA
    assert open_loop_tool("vegeta") is VEGETA
    assert open_loop_tool("wrk") is VEGETA
    with pytest.raises(Exception, match="unknown load generator 'no-such-tool'"):
        tool("no-such-tool")


@pytest.fixture
def inv() -> Inventory:
    return load_inventory(DATA / "inventories" / "multihost_lab.yml")


def _point(inv: Inventory, name: str, generator: str) -> PlannedPoint:
    def topo(f: str) -> Topology:
        return Topology.from_lscpu((DATA / "lscpu" / f).read_text())

    topos = {
        "web1": topo("poweredge_r640_2x8c_ht.txt"),
        "load1": topo("epyc_7502p_1x32c_ht.txt"),
        "load2": topo("default_columns_i7_4c8t.txt"),
    }
    prof = profiles.load(name).model_copy(update={"generator": generator})
    return next(p for p in build_plan(inv, topos, (1,), (Ht.OFF,), [prof]) if not p.skipped)


def test_oha_window_writes_raw_latencies_and_buckets_them(inv: Inventory) -> None:
    point = _point(inv, "latency-http", "oha")
    client = point.clients[0]
    req = client_request(point, client, "http://web1:8080/x", 1000 * len(point.clients), 40.0)
    assert req.rate == 1000 and req.connections >= 1
    cmd = OHA.command(req)
    assert cmd.argv[cmd.argv.index("-t") + 1] == "30000ms"  # the window's timeout, capped
    assert cmd.argv[cmd.argv.index("--db-url") + 1] == f"{req.tool_dir}/oha-results.db"
    assert cmd.then == [
        ["python3", f"{req.tool_dir}/latency_hist.py", f"{req.tool_dir}/oha-results.db"]
    ]
    settings = MeasureSettings()
    dry = open_loop_plan_argv(Schedule.of(settings, point.profile), point, client, req.url, 40.0)
    assert isinstance(dry, list) and "--db-url" not in dry and f"{req.tool_dir}/oha" in dry


def test_a_single_threaded_generator_is_pinned_to_one_cpu(
    inv: Inventory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool that declares itself single-threaded (ApacheBench) gets one CPU of its
    client's set: in its request, in the plan's line and in the client ceiling; the
    others keep the whole set."""
    import dataclasses

    from sizing.load import tools as registry
    from sizing.plan.loadspec import client_ceiling

    one = dataclasses.replace(
        WRK,
        name="one-thread",
        capabilities=dataclasses.replace(WRK.capabilities, single_threaded=True),
    )
    monkeypatch.setitem(registry.TOOLS, one.name, one)
    whole = _point(inv, "rps", "wrk")
    single = _point(inv, "rps", "one-thread")
    client = single.clients[0]
    cpus = single.client_cpus[client.name]
    assert len(cpus) > 1  # the lab's client has many: the check can fail
    assert closed_request(single, client, "http://web1/x", 8, 10.0).cpus == cpus[:1]
    assert closed_request(whole, client, "http://web1/x", 8, 10.0).cpus == cpus
    run = plan_point(MeasureSettings(), single, ()).run
    assert run is not None and run.clients[0].cpus == cpulist(cpus[:1])
    # an open-loop tool that says so is counted on one core a client
    open_one = dataclasses.replace(
        VEGETA,
        name="one-rate",
        capabilities=dataclasses.replace(VEGETA.capabilities, single_threaded=True),
    )
    monkeypatch.setitem(registry.TOOLS, open_one.name, open_one)
    monkeypatch.setitem(registry.OPEN_LOOP, open_one.name, open_one)
    rated = _point(inv, "proxy-cpu", "one-rate")
    assert client_ceiling(rated)[1] == len(rated.clients)
    assert client_ceiling(_point(inv, "proxy-cpu", "vegeta"))[1] > len(rated.clients)


def test_vegeta_window_reads_its_targets_and_reports_twice(inv: Inventory) -> None:
    point = _point(inv, "proxy-cpu", "vegeta")
    client = point.clients[0]
    cmd = VEGETA.command(client_request(point, client, "http://web1:8080/x", 500, 10.0))
    assert "attack" in cmd.argv and cmd.stdin is not None and "http://web1:8080/x" in cmd.stdin
    assert len(cmd.then) == 2 and all("report" in argv for argv in cmd.then)


def test_the_wrk_spec_is_the_registry_s(inv: Inventory) -> None:
    point = _point(inv, "tps", "wrk")
    client = point.clients[0]
    req = closed_request(point, client, "https://web1:8443/x", 3, 10.0)
    spec = WRK.spec(req)
    assert spec.headers[:1] == ("Connection: close",)  # tps: a full handshake per request
    assert spec.threads == req.threads
    assert spec.threads == min(3, max(1, len(point.client_cpus.get(client.name, ()))))
    assert spec.script is not None and spec.script.endswith("/wrk_report.lua")
    # a window's command reads the version of the wrk that ran; the plan's argv does not
    assert WRK.command(req).then == [["wrk", "-v"]]
    assert WRK.summary(req) == WRK.command(req).argv
    out = CommandOutput(
        argv=[], rc=0, then=[CommandOutput(argv=[], rc=1, stdout="wrk debian/4.1.0-3+b2 [epoll]")]
    )
    assert WRK.read_version(out) == "debian/4.1.0-3+b2"


def test_the_tools_parse_their_outputs_or_say_what_did_not_run() -> None:
    with pytest.raises(oha.OhaParseError, match="latency_hist.py did not run"):
        OHA.parse(CommandOutput(argv=["oha"], rc=0, stdout="{}"))
    with pytest.raises(vegeta.VegetaParseError, match="reports did not run"):
        VEGETA.parse(CommandOutput(argv=["vegeta"], rc=0, then=[]))
    stem = DATA / "oha" / "steady_2000rps_2s"
    got = OHA.parse(
        CommandOutput(
            argv=["oha"],
            rc=0,
            stdout=(stem.with_suffix(".json")).read_text(),
            then=[
                CommandOutput(argv=["python3"], rc=0, stdout=Path(f"{stem}.hist.json").read_text())
            ],
        )
    )
    assert got == oha.parse(
        stem.with_suffix(".json").read_text(), Path(f"{stem}.hist.json").read_text()
    )
