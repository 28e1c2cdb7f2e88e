"""A proposal for any customer adds up (issue 59): invariants over generated proposals.

Hypothesis generates a customer's case (tests/proposal_cases.py): a catalog (1-8 servers,
1-2 sockets, 4-128 cores, CPUs named or not, matching the measured CPU or not; licences per
core, socket, socket pair, server and instance on every platform and on ``all``, with
minimums per CPU and per order, in another currency at a stated rate, discounted; support
and power), terms (N+0, N+1, 2N; 1-10 years; growth 0-100%), a demand (RPS, TPS or both,
a role on a lab of several) and a lab database (empty: the published reference data; bare
metal only; with an ESXi guest; with ESXi and KVM guests; with both guests for two roles:
the simulated PowerEdge lab of tests/labdb.py, never a measurement). Each case goes
through ``sizing recommend``, ``recommend --json`` and ``guide --format md`` as a user
types them (Typer's CliRunner), and every invariant the issue lists is checked on the
three renderings (tests/proposal_checks.py, :func:`check`).

The run is derandomized (a fixed seed): ``SIZING_PROPERTY_EXAMPLES`` raises its number of
examples for a longer, nightly-style run (docs/testing.md). The PDF is slow: it is read
(pdftotext) on pinned examples only, in tests/unit/test_proposal_layout.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, event, example, given, settings
from typer.testing import CliRunner

from sizing.cli import app
from tests.proposal_cases import (
    BANK,
    BANK_METAL,
    BANK_PROXY,
    MIX,
    ROLES,
    Case,
    build_labs,
    cases,
)
from tests.proposal_checks import WIDTH, check

runner = CliRunner()

EXAMPLES = int(os.environ.get("SIZING_PROPERTY_EXAMPLES", "24"))


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_labs(tmp_path_factory.mktemp("labs"))


# -- the property ----------------------------------------------------------------------------


def run_case(case: Case, labs: dict[str, Path], tmp: Path) -> tuple[Any, Any, Any]:
    """The case through ``recommend``, ``recommend --json`` and ``guide --format md``."""
    cat = tmp / "catalog.yml"
    cat.write_text(yaml.safe_dump(case.catalog, sort_keys=False), encoding="utf-8")
    argv = [*case.argv, "--db", str(labs[case.lab]), "--catalog", str(cat)]
    text = runner.invoke(app, ["recommend", *argv], env={"COLUMNS": str(WIDTH)})
    js = runner.invoke(app, ["recommend", *argv, "--json"])
    md = runner.invoke(app, ["guide", *argv, "--format", "md", "--out", "-"])
    return text, js, md


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
    # a case takes about a second: shrinking a failure would take minutes, and the case
    # as generated is printed whole
    phases=(Phase.explicit, Phase.generate),
    report_multiple_bugs=False,
)
@given(case=cases())
@example(case=MIX)
@example(case=BANK)
@example(case=BANK_PROXY)
@example(case=BANK_METAL)
def test_every_generated_proposal_adds_up(
    case: Case, labs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp("case")
    # what the run covered (pytest --hypothesis-show-statistics): the lab and role, and
    # each licence unit and key drawn
    event(f"lab {case.lab} {' '.join(a for a in case.argv if a in ROLES) or 'default role'}")
    for key, line in case.licence_lines():
        event(f"licence per {line['per']}")
        event(f"licence on {key}")
    event(check(case, *run_case(case, labs, tmp)))
