"""Storage and input edges (issue 45): a run refused by a host's lock says why in
``results``; a catalog is bounded in size; control characters in any user string are
shown escaped wherever text is rendered (terminal, guide HTML and Markdown, charts).

(A database on a full disk, simulated with a real tiny tmpfs: tests/integration/
test_no_secret_kept.py; the guide's PDF with such a catalog: the same file.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import sizing.provision.ansible as ansible_mod
import sizing.sweep as sweep_mod
from sizing import profiles
from sizing.catalog import MAX_FILE_BYTES, load_catalog
from sizing.cli import app
from sizing.errors import HostError, InputError
from sizing.provision.ansible import HostOutcome, PlaybookResult
from sizing.provision.hostsafety import LOCK_TASK, owner_record
from sizing.report.render.printable import printable
from sizing.sweep import OpenRun, RunContext, RunOptions, Sweep

runner = CliRunner()

INVENTORY = """
all:
  vars: {ansible_connection: local}
  children:
    servers: {hosts: {web: {sizing_platform: baremetal}}}
    clients: {hosts: {load: {}}}
"""


def test_a_run_refused_by_a_hosts_lock_says_why_in_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock script's reply is the process boundary replaced here: another live
    process (this one, under another token) holds the host's lock."""
    holder = {**owner_record().to_json(), "token": "other", "run_id": 7, "since": 0.0}
    reply = {"stdout": json.dumps({"acquired": False, "holder": holder})}

    def fake_run(playbook: str, inventory: Path, **kw: Any) -> PlaybookResult:
        hosts = {"web": HostOutcome(ok={LOCK_TASK: reply})} if playbook == "facts.yml" else {}
        return PlaybookResult(playbook, "successful", 0, {}, hosts)

    def lock_stage(ctx: RunContext, run: OpenRun, sweep: Sweep) -> Sweep:
        res = ctx.playbooks.run("facts.yml", ["web"])
        ctx.ledger.hosts_taken.locks.settle(res, ["web"])
        return sweep

    monkeypatch.setattr(ansible_mod, "run_playbook", fake_run)
    monkeypatch.setattr(sweep_mod, "STAGES", (("lock", lock_stage),))
    inv = tmp_path / "inv.yml"
    inv.write_text(INVENTORY)
    db = tmp_path / "r.sqlite"
    opts = RunOptions(inventory=inv, cores=(1,), hts=(), profiles=(profiles.load("rps"),), db=db)
    with pytest.raises(HostError, match="another sizing run holds it"):
        sweep_mod.run(RunContext.bind(opts))
    shown = runner.invoke(app, ["results", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    first, *rest = shown.stdout.splitlines()
    # the run's line (a long inventory path goes on 4 deeper), then the note, 2 deep
    at = next(i for i, x in enumerate(rest) if re.match(r"  \S", x))
    assert first.startswith("run 1 ") and " failed " in " ".join([first, *rest[:at]])
    why = rest[at:]
    assert " ".join(w.strip() for w in why).startswith("web: another sizing run holds it")
    assert all(len(line) <= 100 for line in why), shown.stdout
    doc = json.loads(runner.invoke(app, ["results", "--json", "--db", str(db)]).stdout)
    assert doc["runs"][0]["note"].startswith("web: another sizing run holds it")


# -- a catalog's size ---------------------------------------------------------------------


def _catalog(path: Path, servers: int) -> Path:
    rows = [
        f"  - {{cores: {1 + i % 64}, price: {700 + i}, cpu_model: 'cpu {i:06d}'}}"
        for i in range(servers)
    ]
    path.write_text("kind: catalog\nname: big\nservers:\n" + "\n".join(rows) + "\n")
    return path


def test_a_catalog_over_the_limit_is_refused_in_one_line_before_it_is_parsed(
    tmp_path: Path,
) -> None:
    big = _catalog(tmp_path / "big.yml", 6_000)
    assert big.stat().st_size > MAX_FILE_BYTES
    with pytest.raises(InputError) as info:
        load_catalog(big)
    size = f"{big.stat().st_size:,}"
    assert str(info.value) == (
        f"{big}: {size} bytes, over the {MAX_FILE_BYTES:,} bytes a catalog file may hold"
    )
    res = runner.invoke(app, ["recommend", "--rps", "1000", "--catalog", str(big)])
    assert res.exit_code == 3 and res.stderr.count("\n") == 1 and str(big) in res.stderr


def test_a_catalog_under_the_limit_is_read(tmp_path: Path) -> None:
    ok = _catalog(tmp_path / "ok.yml", 2_000)
    assert ok.stat().st_size < MAX_FILE_BYTES
    assert load_catalog(ok).servers  # read and validated (the cheapest of each size kept)


def test_a_catalog_that_never_ends_is_refused() -> None:
    with pytest.raises(InputError, match=f"over the {MAX_FILE_BYTES:,} bytes a catalog file"):
        load_catalog("/dev/zero")


# -- control characters -----------------------------------------------------------------------

EVIL = "R\x07640\u202egnp.exe\x1b]0;t\x07\r\u200b"
SHOWN = "R\\x07640\\u202egnp.exe\\x1b]0;t\\x07\\x0d\\u200b"
RAW = ["\x07", "\u202e", "\x1b", "\r", "\u200b"]


def test_printable_escapes_controls_and_invisible_formatting() -> None:
    assert printable(EVIL) == SHOWN
    assert printable("a\tb\nc") == "a\tb\nc"  # a multi-line text keeps its lines
    assert printable("a\nb", keep="") == "a\\x0ab"
    assert printable("Grüße, 東京, ×, –") == "Grüße, 東京, ×, –"  # printable text unchanged
    assert printable("\U000e0041") == "\\U000e0041"


def _evil_catalog(tmp_path: Path) -> Path:
    path = tmp_path / "evil.yml"
    name = json.dumps(EVIL)
    path.write_text(
        f"kind: catalog\nname: {name}\nservers:\n  - {{cores: 1, price: 750, name: {name}}}\n"
        "  - {cores: 2, price: 750}\n  - {cores: 4, price: 1300}\n"
    )
    return path


@pytest.mark.parametrize(
    "command",
    [["recommend", "--rps", "100000"], ["table"], ["recommend", "--rps", "1e12"]],
    ids=["recommend", "table", "an error"],
)
def test_the_terminal_shows_a_catalogs_control_characters_escaped(
    tmp_path: Path, command: list[str]
) -> None:
    res = runner.invoke(
        app, [*command, "--catalog", str(_evil_catalog(tmp_path)), "--db", str(tmp_path / "n")]
    )
    out = res.stdout + res.stderr
    assert "Traceback" not in out
    assert not [c for c in RAW if c in out], out
    assert "\\x07" in out or "\\u202e" in out, out


def test_the_terminal_shows_a_paths_control_characters_escaped(tmp_path: Path) -> None:
    res = runner.invoke(app, ["recommend", "--rps", "1", "--catalog", str(tmp_path / EVIL)])
    assert res.exit_code == 3
    assert res.stderr == f"error: {tmp_path}/{SHOWN}: no such catalog file\n"


def test_the_guides_template_values_are_escaped() -> None:
    from sizing.report.render.html import _env

    # the zero-width space stays: the guide puts it after a basis id's "/" to wrap there
    html = _env().from_string("<p>{{ x }}</p>").render(x=EVIL)
    assert html == "<p>" + SHOWN.replace("\\u200b", "\u200b") + "</p>"
    md = _env(markdown=True).from_string("{{ x }}").render(x=EVIL + "\nnext")
    raw = [c for c in RAW if c in md and c != "\u200b"]
    assert not raw and "\\\\x07" in md and "\n" not in md


def test_a_charts_labels_are_escaped() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from sizing.report.render.chartkit import to_svg

    fig = Figure()
    ax = fig.add_subplot()
    ax.set_title(EVIL)
    svg = to_svg(fig)
    assert "\x07" not in svg and "\u202e" not in svg and "\x1b" not in svg


def test_the_guide_keeps_its_own_wrap_points_and_escapes_the_rest() -> None:
    """The zero-width space the guide puts after a basis id's "/" is a place to wrap, not a
    user's hidden character: it stays (a PDF once showed a literal "\\u200b"); a bidi
    override in the same string is escaped."""
    from sizing.report.render.html import _md_escape, _shown

    assert _shown("r640-01/\u200bbaremetal") == "r640-01/\u200bbaremetal"
    assert _shown("evil\u202e") == "evil\\u202e"
    assert "\u200b" in str(_md_escape("r640-01/\u200bbaremetal"))
