"""The one result type of the load generators (:class:`sizing.load.result.LoadResult`):
every registered tool's parser returns it on its recorded outputs (``tests/data``), no
generator's module imports another generator's, closed or open loop is the tool's
capability, and the figures that add up do (recorded reports and generated ones)."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizing.errors import UsageError
from sizing.load import oha, vegeta
from sizing.load.result import LoadResult
from sizing.load.tools import TOOLS, closed_loop_parse
from sizing.loadproto import CommandOutput

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
LOAD = ROOT / "sizing" / "load"


def _out(stdout: str = "", then: tuple[str, ...] = ()) -> CommandOutput:
    return CommandOutput([], 0, stdout, "", [CommandOutput([], 0, t, "") for t in then])


def _wrk() -> list[CommandOutput]:
    paths = sorted((DATA / "wrk").glob("*.txt"))
    ok = [
        p for p in paths if "error" not in json.loads(p.with_suffix(".expected.json").read_text())
    ]
    return [_out(p.read_text()) for p in ok]


def _h2load() -> list[CommandOutput]:
    return [
        _out((DATA / "h2load" / f).read_text()) for f in ("clean_4c_2s.txt", "not_found_1s.txt")
    ]


def _oha() -> list[CommandOutput]:
    d = DATA / "oha"
    return [
        _out((d / f"{n}.json").read_text(), ((d / f"{n}.hist.json").read_text(),))
        for n in ("steady_2000rps_2s", "refused_100rps_1s")
    ]


def _vegeta() -> list[CommandOutput]:
    d = DATA / "vegeta"
    return [
        _out("", ((d / f"{n}.json").read_text(), (d / f"{n}.hdrplot").read_text()))
        for n in ("steady_500rps_2s", "refused_100rps_1s")
    ]


def _replay() -> list[CommandOutput]:
    d = DATA / "vegeta"
    return [_out("", ((d / f"{n}.json").read_text(),)) for n in ("steady_500rps_2s",)]


# Every registered generator's recorded outputs, as its window's command gives them.
RECORDED = {
    "wrk": _wrk,
    "h2load": _h2load,
    "oha": _oha,
    "vegeta": _vegeta,
    "vegeta-replay": _replay,
}


def test_every_registered_tool_has_recorded_outputs() -> None:
    assert set(RECORDED) == set(TOOLS), "a generator without recorded outputs here"


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_tool_parses_its_recorded_outputs_into_a_load_result(name: str) -> None:
    outputs = RECORDED[name]()
    assert outputs
    for out in outputs:
        got = TOOLS[name].parse(out)
        assert type(got) is LoadResult
        _check_sums(got)
        if TOOLS[name].capabilities.open_loop:
            with pytest.raises(UsageError, match="does not measure closed-loop windows"):
                closed_loop_parse(name, out)
        else:
            assert closed_loop_parse(name, out) == got


def _check_sums(r: LoadResult) -> None:
    """What every result's figures must satisfy, whichever tool gave them."""
    assert r.failed == r.non_2xx_3xx + r.total_errors == r.non_2xx_3xx + sum(r.errors.values())
    assert r.error_ratio == pytest.approx(r.failed / max(r.requests, 1))
    assert r.rps == r.rate and r.requests >= 0 and r.duration_s > 0
    assert 0.0 <= r.throughput and math.isfinite(r.throughput)
    assert all(n >= 0 for n in (*r.errors.values(), *r.status_codes.values()))
    report = r.latency_report()
    assert report.requests == r.requests and report.errors == r.failed
    assert [p for p, _ in report.cdf] == sorted(p for p, _ in report.cdf)


# --- no generator's module imports another's -------------------------------------------------

TOOL_MODULES = {type(t).__module__ for t in TOOLS.values()}


def imported_modules(source: str) -> set[str]:
    """Every module ``source`` imports, ``from sizing.load import x`` as ``sizing.load.x``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def foreign_tools(module: str, source: str) -> set[str]:
    """The other generators' modules that ``module``'s ``source`` imports."""
    return (imported_modules(source) & TOOL_MODULES) - {module}


def test_the_import_check_sees_an_import_of_another_tool() -> None:
    assert foreign_tools("sizing.load.h2load", "from sizing.load.wrk import parse\n") == {
        "sizing.load.wrk"
    }
    assert foreign_tools("sizing.load.replay", "from sizing.load import vegeta\n") == {
        "sizing.load.vegeta"
    }
    assert foreign_tools("sizing.load.oha", "import sizing.load.wrk as w\n") == {"sizing.load.wrk"}
    assert foreign_tools("sizing.load.wrk", "from sizing.load.result import LoadResult\n") == set()


def test_every_tool_is_its_own_module_under_sizing_load() -> None:
    assert len(TOOL_MODULES) == len(TOOLS)
    assert all(m.startswith("sizing.load.") for m in TOOL_MODULES)


@pytest.mark.parametrize("module", sorted(TOOL_MODULES))
def test_no_tool_module_imports_another_tools(module: str) -> None:
    path = LOAD / f"{module.rsplit('.', 1)[1]}.py"
    assert foreign_tools(module, path.read_text()) == set()


# --- generated reports: the figures add up -----------------------------------------------------

codes = st.dictionaries(
    st.sampled_from(["0", "200", "204", "301", "404", "429", "500", "503"]),
    st.integers(min_value=0, max_value=10**6),
    max_size=6,
)


@given(codes, st.integers(1, 10**11), st.integers(0, 10**10))
def test_vegeta_failed_is_every_code_outside_2xx_3xx(
    status: dict[str, int], duration_ns: int, wait_ns: int
) -> None:
    requests = sum(status.values())
    doc = {
        "latencies": dict.fromkeys(("mean", "max", "min", "50th", "90th", "95th", "99th"), 1000),
        "requests": requests,
        "rate": requests / (duration_ns / 1e9),
        "throughput": 0.0,
        "duration": duration_ns,
        "wait": wait_ns,
        "status_codes": status,
    }
    r = vegeta.parse(json.dumps(doc))
    bad = sum(n for c, n in status.items() if not c.startswith(("2", "3")))
    assert r.failed == bad and r.total_errors == status.get("0", 0)
    assert r.requests == sum(r.status_codes.values()) == r.latency_report().count
    replayed = TOOLS["vegeta-replay"].parse(_out("", (json.dumps(doc),)))
    assert replayed.requests == requests - status.get("0", 0)
    assert replayed.failed == bad and replayed.duration_s == pytest.approx(
        (duration_ns + wait_ns) / 1e9
    )


@given(
    codes.filter(lambda c: sum(c.values()) > 0),
    st.dictionaries(st.sampled_from(["refused", "timeout"]), st.integers(0, 10**5), max_size=2),
    st.floats(0.01, 1000.0),
)
def test_oha_answered_throughput_is_its_successes_over_the_run(
    status: dict[str, int], errors: dict[str, int], total_s: float
) -> None:
    requests = sum(status.values()) + sum(errors.values())
    pct = {f"p{p}": 0.001 for p in ("50", "90", "95", "99")}
    doc = {
        "summary": {"total": total_s, "requestsPerSec": requests / total_s, "successRate": 1.0}
        | dict.fromkeys(("fastest", "average", "slowest"), 0.001),
        "latencyPercentiles": pct,
        "statusCodeDistribution": status,
        "errorDistribution": errors,
    }
    r = oha.parse(json.dumps(doc))
    ok = sum(n for c, n in status.items() if c.startswith(("2", "3")))
    assert r.requests == requests and r.requests - r.failed == ok
    assert r.throughput * r.duration_s == pytest.approx(ok)
    assert r.error_messages == tuple(errors) and r.total_errors == sum(errors.values())
    assert r.latency_report().count == ok
