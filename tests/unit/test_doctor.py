"""``sizing doctor``: one line per program, what was found or what installs it, and exit 5
when something needed is missing. The probes run real programs (python3 is there; a name
that no machine has is not)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from sizing.app import doctor
from sizing.app.doctor import Check, Need, State, diagnose
from sizing.cli import app
from sizing.cli.doctor_cmd import doctor_lines

ABSENT = "sizing-doctor-no-such-program"


def _checks() -> tuple[Check, ...]:
    return (
        Check("python3", Need.RUN, doctor._command(["python3", "--version"]), "apt"),
        Check(ABSENT, Need.RUN, doctor._command([ABSENT, "--version"]), "apt-get install x"),
        Check("latency-tool", Need.LATENCY, doctor._file("/nonexistent/oha"), "build it"),
    )


def test_each_check_says_its_version_or_what_installs_it() -> None:
    found = diagnose([Need.RUN, Need.LATENCY], _checks())
    assert [f.state for f in found] == [State.OK, State.MISSING, State.MISSING]
    assert found[0].detail[0].isdigit()
    lines = doctor_lines(found, 60)
    assert all(len(line) <= 60 for line in lines)
    text = " ".join(" ".join(lines).split())
    assert "not on PATH; apt-get install x" in text


@pytest.mark.parametrize(("dev", "code"), [(False, 5), (True, 5)])
def test_a_missing_program_exits_5_and_names_it(
    monkeypatch: pytest.MonkeyPatch, dev: bool, code: int
) -> None:
    monkeypatch.setattr(doctor, "CHECKS", _checks())
    got = CliRunner().invoke(app, ["doctor"] + (["--dev"] if dev else []))
    assert got.exit_code == code, got.output
    assert f"1 missing: {ABSENT}" in got.output or f"2 missing: {ABSENT}" in got.output


def test_a_latency_generator_alone_only_warns_without_dev(monkeypatch: pytest.MonkeyPatch) -> None:
    checks = _checks()
    monkeypatch.setattr(doctor, "CHECKS", (checks[0], checks[2]))
    assert CliRunner().invoke(app, ["doctor"]).exit_code == 0
    assert CliRunner().invoke(app, ["doctor", "--dev"]).exit_code == 5


def test_every_program_the_code_runs_is_checked() -> None:
    names = {c.name.split()[0] for c in doctor.CHECKS}
    for program in ("nginx", "wrk", "h2load", "oha", "openssl", "taskset", "numactl"):
        assert program in names
    for program in ("podman", "runc"):
        assert program in names
    for program in ("libvirtd", "vcsim", "pdftoppm", "ansible-playbook", "fonts"):
        assert program in names
