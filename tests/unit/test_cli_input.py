"""What a user types (issues 34 and 37): demands written as people write them (``200,000``,
``200k``, ``20%``), one usage line in words for a value that is not one, and "did you
mean" for a mistyped option or choice. In process (Typer's CliRunner; ``main`` itself for
Click's own usage errors)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app, main
from sizing.errors import ExitStatus

runner = CliRunner()


@pytest.fixture(autouse=True)
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A results database that does not exist yet: sizing from the reference data."""
    path = tmp_path / "sizing.sqlite"
    monkeypatch.setenv("SIZING_DB", str(path))
    return path


def demand(*args: str) -> dict[str, object]:
    res = runner.invoke(app, ["recommend", *args, "--json"])
    assert res.exit_code == 0, res.output
    got: dict[str, object] = json.loads(res.stdout)["demand"]
    return got


@pytest.mark.parametrize(
    ("typed", "rps"),
    [
        ("200000", 200_000.0),
        ("200,000", 200_000.0),
        ("200 000", 200_000.0),
        ("200_000", 200_000.0),
        ("200k", 200_000.0),
        ("200K", 200_000.0),
        ("200 k", 200_000.0),
        ("1.5M", 1_500_000.0),
        ("1,500,000", 1_500_000.0),
        ("2e5", 200_000.0),
        ("12345.5", 12_345.5),
        (" 200000 ", 200_000.0),
    ],
)
def test_rps_as_people_write_it(typed: str, rps: float) -> None:
    assert demand("--rps", typed)["rps"] == rps


def test_tps_and_headroom_as_people_write_them() -> None:
    got = demand("--rps", "100k", "--tps", "2,000", "--headroom", "25%")
    assert (got["rps"], got["tps"], got["headroom"]) == (100_000.0, 2_000.0, 0.25)
    assert demand("--rps", "1k", "--headroom", "12.5 %")["headroom"] == 0.125
    assert demand("--rps", "1k", "--headroom", "30")["headroom"] == 0.30


@pytest.mark.parametrize(
    "typed",
    [
        "2x",
        "1,5M",
        "2,00",
        "20,0000",
        "inf",
        "nan",
        "-inf",
        "1e400",
        "k",
        "200kk",
        "200 000 k0",
        "",
        "0x10",
        "2,000.000,0",
    ],
)
def test_a_rate_that_is_not_a_number_is_one_usage_line_in_words(typed: str) -> None:
    res = runner.invoke(app, ["recommend", "--rps", typed])
    assert res.exit_code == ExitStatus.USAGE, res.output
    assert res.stderr.splitlines() == [
        f"error: --rps: {typed!r} is not a number of requests per second: give e.g. 200000, "
        "200,000 or 200k"
    ]
    assert res.stdout == ""


def test_tps_names_its_own_unit() -> None:
    res = runner.invoke(app, ["recommend", "--tps", "lots"])
    assert res.exit_code == ExitStatus.USAGE
    assert res.stderr.strip() == (
        "error: --tps: 'lots' is not a number of TLS handshakes per second: give e.g. 200000, "
        "200,000 or 200k"
    )


@pytest.mark.parametrize("typed", ["20x", "%", "twenty", "0.2.1", "inf", "nan", "20%%"])
def test_a_headroom_that_is_not_a_percentage_is_one_usage_line(typed: str) -> None:
    res = runner.invoke(app, ["recommend", "--rps", "1000", "--headroom", typed])
    assert res.exit_code == ExitStatus.USAGE, res.output
    assert res.stderr.splitlines() == [
        f"error: --headroom: {typed!r} is not a percentage: give e.g. 20 or 20%"
    ]


def test_range_checks_still_speak_after_parsing() -> None:
    """A number read in a new form still meets the demand's limits (the engine's words)."""
    res = runner.invoke(app, ["recommend", "--rps", "1k", "--headroom", "95%"])
    assert res.exit_code == ExitStatus.USAGE
    assert res.stderr.strip() == "error: --headroom must be between 0 and 90 percent, not 95"
    res = runner.invoke(app, ["recommend", "--rps", "-5k"])
    assert res.stderr.strip() == "error: --rps must be a positive number, not -5000"


def test_guide_reads_the_same_forms() -> None:
    bad = runner.invoke(app, ["guide", "--rps", "200,00", "--format", "md", "--out", "-"])
    assert bad.exit_code == ExitStatus.USAGE
    assert bad.stderr.strip() == (
        "error: --rps: '200,00' is not a number of requests per second: give e.g. 200000, "
        "200,000 or 200k"
    )
    bad = runner.invoke(app, ["guide", "--rps", "1k", "--headroom", "a lot", "--format", "md"])
    assert bad.stderr.strip() == (
        "error: --headroom: 'a lot' is not a percentage: give e.g. 20 or 20%"
    )
    good = runner.invoke(
        app, ["guide", "--rps", "200k", "--headroom", "25%", "--format", "md", "--out", "-"]
    )
    assert good.exit_code == 0, good.output
    assert "200,000 RPS with 25% headroom" in good.stdout


def usage(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    """``sizing ARGV`` through the console entry point: Click's own usage errors."""
    monkeypatch.setattr(sys, "argv", ["sizing", *argv])
    with pytest.raises(SystemExit) as ended:
        main()
    return int(ended.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["recommend", "--rsp", "2000"],
            "error: No such option: --rsp; did you mean --rps? (sizing recommend --help)",
        ),
        (
            ["recommend", "--tsp", "2000"],
            "error: No such option: --tsp; did you mean --tps? (sizing recommend --help)",
        ),
        (
            ["recommend", "--rps", "1", "--hedroom", "2"],
            "error: No such option: --hedroom; did you mean --headroom? (sizing recommend --help)",
        ),
        (
            ["guide", "--pper", "a4"],
            "error: No such option: --pper; did you mean --paper? (sizing guide --help)",
        ),
        (["recommend", "--zzz"], "error: No such option: --zzz (sizing recommend --help)"),
    ],
)
def test_a_mistyped_option_gets_the_nearest_one(
    argv: list[str],
    line: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = usage(argv, monkeypatch, capsys)
    assert code == ExitStatus.USAGE
    assert err.splitlines() == [line]


PLATFORMS = "baremetal, virtualized-host, hypervisor, kvm, esxi, kubernetes, container, any"


@pytest.mark.parametrize(
    ("typed", "hint"),
    [
        ("vmware", "; did you mean esxi (or hypervisor: KVM or ESXi)?"),
        ("vSphere", "; did you mean esxi (or hypervisor: KVM or ESXi)?"),
        ("esx", "; did you mean esxi (or hypervisor: KVM or ESXi)?"),
        ("baremtal", "; did you mean baremetal?"),
        ("hypervsor", "; did you mean hypervisor?"),
        ("xen", ""),
    ],
)
def test_a_mistyped_platform_gets_the_nearest_choice(typed: str, hint: str) -> None:
    for command in (["recommend", "--rps", "1000"], ["guide", "--format", "md"]):
        res = runner.invoke(app, [*command, "--platform", typed])
        assert res.exit_code == ExitStatus.USAGE, res.output
        assert res.stderr.splitlines() == [
            f"error: --platform: unknown value {typed!r} (expected {PLATFORMS}){hint}"
        ]


def test_other_choices_get_the_nearest_too() -> None:
    res = runner.invoke(app, ["recommend", "--rps", "1000", "--ht", "of"])
    assert res.stderr.strip() == (
        "error: --ht: unknown value 'of' (expected off, on, any); did you mean off?"
    )
    res = runner.invoke(app, ["recommend", "--rps", "1000", "--source", "mesured"])
    assert res.stderr.strip().endswith("; did you mean measured?")
    res = runner.invoke(app, ["run", "--plan", "--platform", "baremetal,vmware"])
    assert res.exit_code == ExitStatus.USAGE
    assert res.stderr.strip() == (
        "error: --platform: 'vmware' is not one of baremetal, hypervisor, libvirt, vsphere; "
        "did you mean vsphere?"
    )


def test_shell_completion_is_typers_own() -> None:
    """Completion answers through Typer's mechanism (what the installed script calls)."""

    def complete(words: str) -> list[str]:
        env = {
            "_SIZING_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
        }
        res = runner.invoke(app, [], env=env, prog_name="sizing")
        return res.stdout.split()

    assert complete("sizing recommend --r") == ["--rps", "--redundancy", "--role"]
    assert complete("sizing recommend --platform e") == ["esxi"]
    assert complete("sizing guide --paper ") == ["a4", "letter"]
    res = runner.invoke(app, ["--help"])
    assert "--install-completion" in res.stdout and "--show-completion" in res.stdout
