"""``sizing doctor``: one line per program, what was found or what installs it, and exit 5
when something needed is missing. The probes run real programs (python3 is there; a name
that no machine has is not)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
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


def test_a_generator_built_on_first_need_is_not_called_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # issue 62: right after `make run`, oha and vegeta were "MISSING" though `sizing run`
    # builds them the first time a latency profile needs them
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "install-oha").write_text("#!/bin/sh\n")
    monkeypatch.setattr(doctor.paths, "ROOT", tmp_path)
    check = Check(
        "oha",
        Need.LATENCY,
        doctor._file("/nonexistent/oha"),
        "scripts/install-oha (cargo)",
        on_need="scripts/install-oha",
    )
    without = Check("vegeta", Need.LATENCY, doctor._file("/nonexistent/v"), "x", on_need="nope")
    monkeypatch.setattr(doctor, "CHECKS", (check, without))
    found = diagnose([Need.LATENCY])
    assert [f.state for f in found] == [State.ON_NEED, State.MISSING]
    got = CliRunner().invoke(app, ["doctor"])
    assert got.exit_code == 0, got.output
    assert "MISSING  vegeta" in got.output and "MISSING  oha" not in got.output
    assert "on need  oha" in got.output and "builds it when a latency profile" in got.output
    # `make test` needs it built: --dev still fails on it
    assert CliRunner().invoke(app, ["doctor", "--dev"]).exit_code == 5


@given(
    words=st.lists(
        st.text(alphabet="abcdefghij-/._", min_size=1, max_size=70), min_size=1, max_size=30
    ),
    width=st.integers(min_value=72, max_value=120),
)
def test_a_line_is_folded_between_words_never_inside_one(words: list[str], width: int) -> None:
    # the fix named "scripts/install-\nvegeta": a word (a script, a path) stays whole
    found = [doctor.Finding("vegeta", Need.LATENCY, State.MISSING, " ".join(words), "fix it")]
    lines = doctor_lines(found, width)
    assert all(len(line) <= width for line in lines)
    assert " ".join(" ".join(lines).split()[1:]) == f"vegeta {' '.join(words)}; fix it"


def test_the_real_checks_fit_100_columns_with_whole_words() -> None:
    lines = doctor_lines(diagnose(list(Need)), 100)
    assert all(len(line) <= 100 for line in lines), [x for x in lines if len(x) > 100]
    for f in diagnose(list(Need)):
        text = " ".join(lines)
        for word in f"{f.detail} {f.fix}".split():
            assert word in text, word
