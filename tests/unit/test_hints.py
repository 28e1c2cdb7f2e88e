"""Issue 62: every command the tool suggests is tried. Each hint ("To size the ... server on
its own figures: `sizing run ...`", the no-valid-figure paragraph's commands, the
``--include-virtualized`` suggestion) is collected from the answers the tool gives on the
bundled data, on a 2-core machine's stored run and on a lab database, then run: a ``sizing
run`` suggestion with ``--plan`` (offline: no host is contacted, nothing measured), a
``sizing recommend`` suggestion for real (cheap). Each either succeeds (a run plan with
points to measure, an answer) or names what is missing on its own line.

The stored runs are built through the Store API (tests/labdb.py): no load is run."""

from __future__ import annotations

import json
import re
import shlex
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.paths import ROOT
from sizing.provision.ansible import Playbooks
from sizing.records import PointMeta, SampleMeta
from sizing.report.render.points import left_out_by_default, no_valid_figure
from sizing.store import Store
from tests import labdb
from tests.offline import names_a_lab, sizing_offline

# A 2-core VM's facts as a run stores them (this development VM: a docker-detected host,
# 1 socket x 2 cores, no SMT)
VM = "Intel(R) Xeon(R) Processor"
VM_FACTS: dict[str, Any] = {
    "hostname": "vm",
    "cpu_model": VM,
    "lscpu": labdb.lscpu(1, 2, 1),
    "online": "0-1",
    "smt_control": "notsupported",
    "hypervisor": "docker",
    "nginx_version": "1.22.1",
    "nginx_openssl": "3.0.11",
    "openssl_version": "3.0.11",
    "arch": "x86_64",
}


def _stored(
    key: PointKey, status: Status, reps: list[float], flags: tuple[str, ...], reason: str = ""
) -> labdb.Stored:
    unit = "handshakes/s" if key.profile == "tps" else "requests/s"
    metric = "handshakes_per_second" if key.profile == "tps" else "requests_per_second"
    if status is Status.SKIPPED:
        return PointResult(key, status, reason), []
    samples = [
        (i, Sample(metric, v, unit, SampleMeta.parse({"repetition": i, "warmup": False})))
        for i, v in enumerate(reps, start=1)
    ]
    meta = PointMeta.parse(
        {
            "host": key.host,
            "file_size": 128,
            "keepalive": key.profile != "tps",
            "tls_key": "rsa2048" if key.profile == "tps" else None,
            "nginx_version": "1.22.1",
            "openssl_version": "3.0.11",
            "cpu_model": VM,
            "role": "load-balance",
            "hypervisor": "docker",
            "tool": "wrk",
            "server_cpus": "0",
            "clients": ["localhost"],  # the host is its own load generator
            "client_cpus": {"localhost": "1"},
            "upstreams": [{"host": "localhost", "cpus": "1", "shares_with": "client"}],
        }
    )
    median = sorted(reps)[len(reps) // 2]
    result = PointResult(key, status, reason, median, unit, len(reps), flags=flags, metadata=meta)
    return result, samples


def two_core_run(db: str | Path, *, tps_valid: bool = True) -> int:
    """`make run` on a 2-core VM, as the issue saw it: its 1-core rps point invalid (the
    client and the upstreams share the other core), its 1-core tps point valid but from a
    virtualized host; 2, 4 and 8 cores skipped."""
    points = [
        _stored(
            PointKey("localhost", "baremetal", 1, "off", "rps"),
            Status.INVALID,
            [40_100.0, 40_600.0, 41_000.0],
            ("not-saturated", "virtualized-host"),
            "not-saturated: server 81% busy",
        ),
        _stored(
            PointKey("localhost", "baremetal", 1, "off", "tps"),
            Status.MEASURED if tps_valid else Status.INVALID,
            [860.0, 867.0, 871.0],
            ("virtualized-host",) if tps_valid else ("not-saturated", "virtualized-host"),
        ),
    ]
    for n in (2, 4, 8):
        for prof in ("rps", "tps"):
            why = (
                f"needs {n} server cores plus at least 1 client core; this host has 2 "
                "physical cores; add a client host to the inventory"
            )
            points.append(
                _stored(
                    PointKey("localhost", "baremetal", n, "off", prof), Status.SKIPPED, [], (), why
                )
            )
    with Store(db) as store:
        return labdb.store_run(
            store,
            points,
            {"localhost": dict(VM_FACTS)},
            inventory="inventories/local.yml",
            argv=["sizing", "run", "--cores", "1,2,4,8"],
            tool_version="0",
            options={},
        )


# -- collecting the hints ------------------------------------------------------------------

BACKTICKED = re.compile(r"`(sizing [^`]+)`")
BARE = re.compile(r"(?<![`\w])(sizing (?:run|recommend|guide|table|results)(?: [^\s`]+)*)")
PLACEHOLDER = re.compile(r"\b[A-Z]{3,}\b")


def logical_lines(text: str) -> list[str]:
    """The output's lines, a wrapped one joined with its continuation (indented, or a
    paragraph's next line)."""
    out: list[str] = []
    for raw in text.splitlines():
        if out and raw.startswith("  ") and not raw.lstrip().startswith(("-", "#")):
            out[-1] += " " + raw.strip()
        elif out and out[-1] and raw and not out[-1].endswith((".", ":")):
            out[-1] += " " + raw.strip()  # a paragraph wrapped at the width
        else:
            out.append(raw)
    return out


def bare_command(found: str) -> str:
    """A command in running text: its options and their values, not the sentence after."""
    words = found.split()
    kept = words[:2]
    for w in words[2:]:
        if w.startswith("-") or (kept[-1].startswith("-") and not kept[-1].endswith(".")):
            kept.append(w)
        else:
            break
    return " ".join(kept).rstrip(".,;:)")


def hints(text: str) -> list[tuple[str, str]]:
    """Every ``sizing ...`` command the text suggests, with the line it is on."""
    found: list[tuple[str, str]] = []
    for line in logical_lines(text):
        for m in BACKTICKED.finditer(line):
            if len(m.group(1).split()) > 2:  # "`sizing recommend` sizes ...": a name
                found.append((m.group(1).strip(), line))
        rest = BACKTICKED.sub("", line)
        for m in BARE.finditer(rest):
            cmd = bare_command(m.group(1))
            if len(cmd.split()) > 2:  # "`sizing recommend` sizes from ...": no command
                found.append((cmd, line))
    return found


# -- trying them ---------------------------------------------------------------------------

MISSING_SAID = re.compile(r"\b(add|adds|needs?|first|measure one|shows how)\b")


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No host is contacted: a plan is offline (the lab's hosts must never be reached), so
    a socket's connect or an Ansible run fails the test."""

    def refused(*_: object, **__: object) -> None:
        raise AssertionError("a suggested command tried to contact a host")

    monkeypatch.setattr(socket.socket, "connect", refused)
    monkeypatch.setattr(socket, "create_connection", refused)
    monkeypatch.setattr(Playbooks, "run", refused)
    monkeypatch.chdir(ROOT)  # the hints name inventories/... as a user types them there


def try_hint(command: str, line: str, db: Path) -> str:
    """Run one suggestion: ``sizing run`` with ``--plan`` (offline), ``sizing recommend``
    for real. Empty when it succeeds, else why it did not."""
    argv = shlex.split(command)[1:]
    if any(PLACEHOLDER.fullmatch(a) for a in argv):
        # a template ("sizing run -i INVENTORY with a kvm guest: inventories/kvm-lab.yml
        # shows how"): the line names the example to fill it with
        example = re.search(r"inventories/[\w.-]+\.yml", line)
        if example is None:
            return "a placeholder with no example named on its line"
        argv = [example.group(0) if a == "INVENTORY" else a for a in argv]
    runner = CliRunner()

    def invoke(args: list[str]) -> Any:
        return sizing(args, db, runner)

    if argv[0] == "run":
        got = invoke([*argv, "--plan", "--json", "--db", str(db)])
        if got.exit_code != 0:
            return f"exit {got.exit_code}: {got.output.strip()[-300:]}"
        doc = json.loads(got.stdout)
        return doc["nothing_to_measure"] or ""
    got = invoke([*argv, "--db", str(db)])
    if got.exit_code != 0:
        return f"exit {got.exit_code}: {got.output.strip()[-300:]}"
    if "--include-virtualized" in argv and "Basis: measured basis" not in got.stdout:
        return "sized on the reference data, not on the figures it names: " + next(
            (x for x in got.stdout.splitlines() if x.startswith("Basis:")), "no Basis line"
        )
    return ""


def sizing(args: list[str], db: Path, runner: CliRunner | None = None) -> Any:
    """``sizing ARGS``: in process, or without a network (unshare -n) when it names an
    example lab's inventory or runs on a lab database (whose runs name one)."""
    if names_a_lab(args) or db.name.startswith("lab"):
        return sizing_offline(args)
    return (runner or CliRunner()).invoke(app, args)


def answers(db: Path, asks: list[list[str]]) -> str:
    """What ``sizing recommend`` says (stdout and stderr) for each ask on ``db``."""
    out = []
    for ask in asks:
        got = sizing(["recommend", *ask, "--db", str(db)], db)
        out.append(got.output)
    return "\n".join(out)


ASKS = [
    ["--rps", "200000"],
    ["--tps", "2000"],
    ["--rps", "2000000"],
    ["--tps", "50000"],
    ["--rps", "150000", "--tps", "2000", "--platform", "hypervisor"],
    ["--platform", "kvm", "--rps", "100000"],
    ["--tps", "5000", "--ht", "on"],
    ["--rps", "200000", "--include-virtualized", "--article-prices"],
    ["--tps", "2000", "--include-virtualized", "--article-prices"],
]


def run_paragraphs(db: Path) -> str:
    """The paragraphs ``sizing run`` ends with on its stored points: what would give a
    valid figure, or the command that sizes on figures recommend leaves out."""
    with Store(db) as store:
        points = [sp.result for sp in store.points(store.latest_run_id() or 1)]
    return "\n".join(no_valid_figure(points, {}) + left_out_by_default(points))


def check(found: list[tuple[str, str]], db: Path) -> list[str]:
    """Every hint tried: the ones that neither succeed nor say what is missing."""
    failures = []
    for command, line in dict.fromkeys(found):
        why = try_hint(command, line, db)
        if why and not MISSING_SAID.search(line.split(command)[-1][:400]):
            failures.append(f"{command}\n    said: {line[:300]}\n    got: {why}")
    return failures


def test_the_hints_on_the_bundled_data_work(tmp_path: Path, offline: None) -> None:
    db = tmp_path / "empty.db"
    found = hints(answers(db, ASKS))
    assert any(c.startswith("sizing run -i INVENTORY") for c, _ in found)
    assert check(found, db) == []


def test_the_hints_on_a_2_core_machines_run_work(tmp_path: Path, offline: None) -> None:
    # issue 62: `--rps 200000 --include-virtualized` sized on the reference data; "To size
    # the 2-core server ... --cores 2 --ht both" was refused on the machine it was said on
    db = tmp_path / "2core.db"
    two_core_run(db)
    found = hints(answers(db, ASKS) + "\n" + run_paragraphs(db))
    commands = {c for c, _ in found}
    assert "sizing recommend --tps 2000 --include-virtualized --article-prices" in commands
    assert any(c.startswith("sizing run -i inventories/local.yml --cores") for c in commands)
    assert check(found, db) == []


def test_the_hints_after_a_run_with_no_valid_figure_work(tmp_path: Path, offline: None) -> None:
    db = tmp_path / "invalid.db"
    two_core_run(db, tps_valid=False)
    found = hints(run_paragraphs(db))
    assert [c for c, _ in found] == ["sizing run --cores 1 --profile static-rps,static-tps"]
    assert check(found, db) == []


def test_the_hints_on_a_lab_database_work(tmp_path: Path, offline: None) -> None:
    db = tmp_path / "lab.db"
    labdb.build_lab(db, inventory="inventories/lab.yml", price_usd=9000.0)
    found = hints(answers(db, ASKS))
    assert any(c.startswith("sizing run -i inventories/lab.yml --cores") for c, _ in found)
    assert check(found, db) == []


def test_a_hint_that_cannot_run_and_says_nothing_is_caught(tmp_path: Path, offline: None) -> None:
    # the check itself: the refused hint, said without what to add, fails it
    said = "To size the 2-core server: `sizing run -i inventories/local.yml --cores 2 --ht both`."
    assert len(check(hints(said), tmp_path / "x.db")) == 1
    told = said.removesuffix(".") + " (add a client host to the inventory first)."
    assert check(hints(told), tmp_path / "x.db") == []
