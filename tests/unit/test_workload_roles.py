"""A demand is sized on figures of its workload's role (issue 57), through the CLI in
process (Typer's CliRunner) and the guide's data, on lab databases written through the
real Store API (:mod:`tests.labdb`: load-balancing ``rps``/``tps`` and, where said, an API
gateway's ``api-jwt`` calls, about 3.7 times fewer per core; simulated figures, never shown
as measurements).

- The lab holds the role: it sizes, and every rendering names the basis and the workload.
- It holds only others: one line naming the run that measures it, or with
  ``--allow-other-workload`` the closest role's answer, flagged with the direction of the
  error on every rendering.
- ``--rps`` alone: the default workload, named, with the others listed in one line.
- Generated labs with random roles: sized on the role asked, refused or flagged; never
  silently another role.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sizing.app.guide import prepare
from sizing.app.sizing import Demand, Inputs, SizingRequest
from sizing.cli import app
from sizing.cli.sizing_opts import role_of, sizing_request
from sizing.demand.model import TrafficDemand
from sizing.engine.choice import Want
from sizing.engine.roles import DEFAULT_ROLES, WorkloadAsk
from sizing.engine.roles import role_of as basis_role
from sizing.errors import UsageError
from sizing.model import Source
from sizing.report.data.model import GuideRequest
from sizing.sources import load_bases
from sizing.store import Store
from sizing.workload import Role, WorkloadMix
from tests.labdb import build_lab

runner = CliRunner()
JWT = "r640-01/baremetal/api-jwt-1k"
LB = "r640-01/baremetal/load-balance-128b"
DEMAND = 2_000_000  # RPS: several servers on either workload's figures
TOO_SMALL = "costs more CPU per request than load balancing: this fleet is too small"


def _lab(db: Path, profiles: tuple[str, ...]) -> Path:
    build_lab(
        db,
        profiles=profiles,
        guests=False,
        ht=("off",),
        role="load-balance",
        price_usd=9000.0,
    )
    return db


@pytest.fixture()
def both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A lab database with load-balancing and API-gateway (api-jwt) figures."""
    db = _lab(tmp_path / "both.sqlite", ("rps", "tps", "api-jwt"))
    monkeypatch.setenv("SIZING_DB", str(db))
    return db


@pytest.fixture()
def lb_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A lab database with load-balancing figures only."""
    db = _lab(tmp_path / "lb.sqlite", ("rps", "tps"))
    monkeypatch.setenv("SIZING_DB", str(db))
    return db


def run(*args: str) -> tuple[int, str, str]:
    got = runner.invoke(app, list(args))
    assert got.exception is None or isinstance(got.exception, SystemExit), got.exception
    return got.exit_code, got.stdout, got.stderr


def flat(text: str) -> str:
    return " ".join(text.split())


def _median_at(db: Path, profile: str, cores: int) -> float:
    with Store.open_readonly(db) as store:
        (point,) = [
            p
            for p in store.iter_valid()
            if p.result.key.profile == profile and p.result.key.cores == cores
        ]
    assert point.result.value is not None
    return float(point.result.value)


def _json(*args: str) -> dict[str, object]:
    code, out, err = run(*args, "--json")
    assert code == 0, err
    doc: dict[str, object] = json.loads(out)
    return doc


def _per_server(doc: dict[str, object]) -> tuple[int, float]:
    rec = doc["recommendation"]
    assert isinstance(rec, dict)
    return int(rec["servers"]), float(rec["capacity_rps"]) / int(rec["servers"])


def _guide_data(req: SizingRequest) -> tuple[str, str, object]:
    """The guide's data for ``req``: its basis text, why the bases, and its workload."""
    guide = prepare(GuideRequest(sizing=req)).guide
    return guide.basis_text, guide.choice.why, guide.choice.workload


def test_an_api_jwt_demand_is_sized_on_the_jwt_figures(both: Path) -> None:
    rps = str(DEMAND)
    jwt = _json("recommend", "--rps", rps, "--role", "api-jwt")
    lb = _json("recommend", "--rps", rps)
    n_jwt, cap_jwt = _per_server(jwt)
    n_lb, cap_lb = _per_server(lb)
    basis = jwt["basis"]
    assert isinstance(basis, dict)
    assert basis["ids"] == [JWT] and jwt["recommendation"]["basis"] == JWT  # type: ignore[index]
    assert basis["workload"]["sized"] == ["api-jwt"] and not basis["workload"]["other_workload"]
    # the fleet is larger in the ratio of the figures: each server of the largest measured
    # count (8) is floored on its own figure, and the count is the demand over that
    ratio = _median_at(both, "rps", 8) / _median_at(both, "api-jwt", 8)
    assert 3.0 < ratio < 4.5
    assert cap_lb / cap_jwt == pytest.approx(ratio, rel=0.05)
    for n, cap in ((n_jwt, cap_jwt), (n_lb, cap_lb)):
        assert n == math.ceil(DEMAND / (0.8 * cap) - 1e-9)
    assert n_jwt > n_lb and n_jwt / n_lb == pytest.approx(ratio, rel=0.15)
    code, out, err = run("recommend", "--rps", rps, "--role", "api-jwt")
    assert code == 0, err
    text = flat(out)
    assert f"Sized on {JWT}" in text
    assert "API gateway validating a JWT per request (api-jwt), as asked with --role" in text
    assert "OTHER WORKLOAD" not in text + err
    # the run that would replace the floor measures the gateway, not load balancing
    assert "`sizing run -i lab --cores 20,40 --ht both --profile api-jwt`" in text
    basis_text, why, use = _guide_data(
        SizingRequest(
            demand=Demand(rps=DEMAND, headroom=0.2),
            role=Role.API_JWT,
            role_stated_by="--role",
        )
    )
    assert JWT in why and "API gateway with JWT" in basis_text
    assert use is not None and use.sized == (Role.API_JWT,)  # type: ignore[attr-defined]


def _demand_file(tmp_path: Path, peak: int) -> Path:
    """A demand file of ``sizing demand`` over an access log whose busiest second has
    ``peak`` requests (the log is a test's own: loopback client, one path)."""
    log = tmp_path / "access.log"
    lines = [
        f'127.0.0.1 - - [05/Dec/2026:00:00:{s:02d} +0000] "GET /api HTTP/1.1" 200 1024 "-" "t"\n'
        for s in range(10)
        for _ in range(peak if s == 5 else 3)
    ]
    log.write_text("".join(lines))
    out = tmp_path / "demand.yml"
    got = runner.invoke(app, ["demand", str(log), "-o", str(out)])
    assert got.exit_code == 0, got.output
    return out


def test_a_demand_file_with_role_api_jwt_is_sized_on_the_jwt_figures(
    both: Path, tmp_path: Path
) -> None:
    demand = _demand_file(tmp_path, 2000)
    doc = _json("recommend", "--demand", str(demand), "--role", "api-jwt")
    assert doc["basis"]["ids"] == [JWT]  # type: ignore[index]
    assert doc["demand"]["rps"] == 2000  # type: ignore[index]


@dataclass(frozen=True)
class _WithWorkload(TrafficDemand):
    """A demand file's demand with the workload another branch adds to it (read with
    getattr, so this one works before it lands)."""

    workload: WorkloadMix | None = None


def _traffic(role: Role | None) -> _WithWorkload:
    from sizing.demand.model import Rate

    rate = Rate(
        peak=1000.0,
        peak_at="",
        p99=800.0,
        p999=900.0,
        average=500.0,
        start="",
        end="",
        seconds=60,
    )
    return _WithWorkload(
        method="access log",
        arrival="$time_local",
        resolution_s=1.0,
        requests=rate,
        classes={},
        new_connections=None,
        full_handshakes=None,
        resumption_share=None,
        requests_per_connection=None,
        sizes=[],
        request_time_ms=None,
        chart_start="",
        chart=[],
        sources=[],
        lines=1,
        skipped=0,
        skipped_samples=[],
        notes=[],
        missing=[],
        workload=None if role is None else WorkloadMix(role=role),
    )


def test_the_request_s_role_is_the_option_else_the_demand_file_s() -> None:
    assert role_of(None, _traffic(Role.API_JWT)) == (Role.API_JWT, "the demand file")
    assert role_of("jwt", _traffic(Role.API_JWT)) == (Role.API_JWT, "--role")
    assert role_of("lb", _traffic(None)) == (Role.LOAD_BALANCE, "--role")
    assert role_of(None, None) == (None, "")
    with pytest.raises(UsageError) as got:
        role_of("lb", _traffic(Role.API_JWT))
    assert "\n" not in str(got.value) and "demand file's workload (api-jwt)" in str(got.value)
    with pytest.raises(UsageError, match="--role: 'gateway' is not a role"):
        role_of("gateway")
    req = sizing_request(
        rps=None,
        tps=None,
        headroom="20",
        p95=None,
        platform="any",
        ht="any",
        redundancy="none",
        max_servers=None,
        confidence=None,
        cpu=None,
        allow_translation=False,
        inputs=Inputs(),
        traffic=_traffic(Role.API_JWT),
    )
    assert req.role is Role.API_JWT and req.role_stated_by == "the demand file"
    assert req.demand is not None and req.demand.rps == 1000.0


def test_rps_alone_names_its_workload_and_lists_the_other(both: Path) -> None:
    code, out, err = run("recommend", "--rps", "50000")
    assert code == 0, err
    text = flat(out)
    assert f"Sized on {LB}" in text
    assert "workload: load balancing (load-balance), the default (--role sizes another)" in text
    also = f"also measured: API gateway validating a JWT per request ({JWT}; --role api-jwt)"
    assert also in text
    doc = _json("recommend", "--rps", "50000")
    use = doc["basis"]["workload"]  # type: ignore[index]
    assert use["sized"] == ["load-balance"] and use["needed"] is None
    assert use["others"] == [
        {"role": "api-jwt", "words": "API gateway validating a JWT per request", "basis": JWT}
    ]
    assert also in str(doc["why"])
    basis_text, why, _ = _guide_data(SizingRequest(demand=Demand(rps=50000, headroom=0.2)))
    assert also in why and "Also measured: API gateway" in basis_text


def test_a_workload_nobody_measured_is_refused_in_one_line(lb_only: Path) -> None:
    code, out, err = run("recommend", "--rps", "500000", "--role", "api-jwt")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert "sizing run -i INVENTORY --cores 1,2,4,8 --profile api-jwt" in lines[0]
    assert f"load balancing ({LB}), with --allow-other-workload" in lines[0]
    code, out, err = run("table", "--role", "api-jwt")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--profile api-jwt" in err


def test_allowed_another_workload_is_flagged_on_every_rendering(lb_only: Path) -> None:
    args = ("recommend", "--rps", "500000", "--role", "api-jwt", "--allow-other-workload")
    code, out, err = run(*args)
    assert code == 0, err
    assert "OTHER WORKLOAD" in flat(out) and TOO_SMALL in flat(out)
    assert TOO_SMALL in err  # and a warning on stderr
    doc = _json(*args)
    use = doc["basis"]["workload"]  # type: ignore[index]
    assert use["other_workload"] is True and TOO_SMALL in use["error_direction"]
    assert use["sized"] == ["load-balance"] and use["needed"] == "api-jwt"
    assert TOO_SMALL in str(doc["why"])
    basis_text, why, got = _guide_data(
        SizingRequest(
            demand=Demand(rps=500000, headroom=0.2),
            role=Role.API_JWT,
            role_stated_by="--role",
            allow_other_workload=True,
        )
    )
    assert TOO_SMALL in basis_text and basis_text.startswith("NOT YOUR WORKLOAD'S FIGURES")
    assert TOO_SMALL in why and got.other_workload  # type: ignore[attr-defined]
    code, out, err = run("guide", *args[1:], "--format", "md", "--out", "-")
    assert code == 0, err
    assert "**Data:** NOT YOUR WORKLOAD'S FIGURES (--allow-other-workload)" in out
    assert TOO_SMALL in err  # the warning, as recommend says it


def test_basis_names_the_api_jwt_basis(both: Path) -> None:
    doc = _json("recommend", "--rps", "50000", "--basis", "r640-01/baremetal/api-jwt")
    assert doc["basis"]["ids"] == [JWT]  # type: ignore[index]
    assert doc["basis"]["workload"]["stated_by"] == "--basis"  # type: ignore[index]
    code, _, err = run("recommend", "--rps", "5", "--basis", JWT, "--role", "lb")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"--basis {JWT} (api-jwt) is not load balancing" in err
    flagged = _json(
        "recommend", "--rps", "5", "--basis", JWT, "--role", "lb", "--allow-other-workload"
    )
    use = flagged["basis"]["workload"]  # type: ignore[index]
    assert use["other_workload"] and "this fleet is larger than needed" in use["error_direction"]


def test_a_role_whose_figures_lack_the_demand_s_profile_says_so(both: Path) -> None:
    code, out, err = run("recommend", "--rps", "5000", "--tps", "100", "--role", "api-jwt")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"its figures cannot size this demand ({JWT}: has no RPS/TPS figures)" in flat(err)


def test_the_reference_answer_says_its_role(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIZING_DB", str(tmp_path / "none.sqlite"))
    code, out, err = run("recommend", "--rps", "50000")
    assert code == 0 and "workload: load balancing (load-balance), the default" in flat(out)
    code, _, err = run("recommend", "--rps", "50000", "--role", "api-jwt")
    assert code == 2 and "--profile api-jwt" in err and "reference/baremetal" in err
    code, out, err = run(
        "recommend", "--rps", "50000", "--role", "static", "--allow-other-workload"
    )
    assert code == 0 and "this fleet is larger than needed" in flat(out)


# -- generated labs ------------------------------------------------------------------------

# how each role's figures are written: (profiles, the role stored on the rps points)
WRITES = {
    Role.STATIC: (("rps",), "web"),
    Role.LOAD_BALANCE: (("rps",), "load-balance"),
    Role.API_JWT: (("api-jwt",), None),
}
DIRECTION = ("costs more CPU", "costs less CPU", "no known direction")


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    held=st.sets(st.sampled_from(sorted(WRITES)), max_size=3),
    asked=st.none() | st.sampled_from(list(Role)),
    allow=st.booleans(),
    source=st.sampled_from([Source.BOTH, Source.MEASURED]),
    seed=st.integers(0, 1000),
)
def test_an_answer_is_of_the_role_asked_refused_or_flagged(
    tmp_path_factory: pytest.TempPathFactory,
    held: set[Role],
    asked: Role | None,
    allow: bool,
    source: Source,
    seed: int,
) -> None:
    db = tmp_path_factory.mktemp("lab") / "lab.sqlite"
    for role in sorted(held):
        profiles, stored = WRITES[role]
        build_lab(
            db,
            profiles=profiles,
            role=stored,
            guests=False,
            ht=("off",),
            cores=(1, 2),
            reps=3,
            seed=seed,
        )
    ask = WorkloadAsk(asked, "--role" if asked else "", allow)
    try:
        got = load_bases(Inputs(source=source, db=db), serves=Want(profiles=("rps",)), workload=ask)
    except UsageError as exc:
        text = str(exc)
        assert "\n" not in text
        # refused only when nothing of the role asked (unasked: of the default roles) can
        # size, and, when another role may, nothing else either
        if asked is None:
            assert source is Source.MEASURED and not held & DEFAULT_ROLES
        else:
            assert asked not in held
            assert "--profile " in text or "--source measured" in text
            if allow:
                assert source is Source.MEASURED and not held - {asked}
        return
    choice = got.choice
    use = choice.workload
    assert use is not None and choice.bases
    sized = {basis_role(b) for b in choice.bases}
    if asked is None:
        assert sized <= DEFAULT_ROLES and use.needed is None and not use.other_workload
    elif sized == {asked}:
        assert not use.other_workload and "OTHER WORKLOAD" not in choice.why
    else:  # never silently another role
        assert allow and asked not in held and use.other_workload
        assert any(d in use.error for d in DIRECTION) and use.error in choice.why
    if asked in held:
        assert sized == {asked} and all(b.origin == "measured" for b in choice.bases)
    # the other workloads measured are listed, each once
    listed = [r for r, _ in use.others]
    assert len(listed) == len(set(listed)) and not set(listed) & sized
    assert set(listed) == held - sized
