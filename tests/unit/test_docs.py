"""Issue 62: the docs are tested, not just written. Every command of README.md and docs/*.md
shown with its output (an indented ``    $ sizing ...`` line, then what it prints) runs here,
in-process, and its output is compared with the page's, numbers, times, dates and scratch
paths masked and runs of spaces folded, so the wording cannot drift unseen. A page's ``...``
line stands for any lines (an example cut short).

The state is a new user's after ``make run`` on a 2-core VM: the bundled data and that run
(tests/unit/test_hints.py builds it through the Store API; no load). A block that cannot
run here says why in the page, on the line before it: ``<!-- not run: needs a lab -->``;
a command that measures, needs root, a lab's hosts or a file the repository does not hold
is left out with its reason (:func:`skipped_examples` lists them all)."""

from __future__ import annotations

import re
import shlex
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.paths import ROOT
from sizing.provision.ansible import Playbooks
from tests import labdb
from tests.offline import names_a_lab, sizing_offline
from tests.unit.test_hints import two_core_run

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
DATA = re.compile(r"<!--\s*data:\s*(\S+)\s*-->")
PIPE = re.compile(r"^(?P<cmd>.+?)\s*(?P<op>\|&?)\s*(?P<filter>head|tail|grep)\s+(?P<arg>.+)$")


@dataclass(frozen=True)
class Example:
    """One ``$ command`` of a page with the output the page shows under it."""

    page: str
    line: int
    command: str
    output: tuple[str, ...]
    not_run: str  # the page's reason, or ""
    data: str = "first-day"  # the results it runs on (:data:`STATES`)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def examples(page: Path) -> Iterator[Example]:
    """The page's indented ``$`` commands with the lines under each (to the next ``$`` line
    or the end of the block); a ``\\`` line goes on on the next."""
    lines = page.read_text(encoding="utf-8").splitlines()
    rel = str(page.relative_to(ROOT))
    i = 0
    not_run, data = "", "first-day"
    while i < len(lines):
        line = lines[i]
        m = NOT_RUN.search(line)
        d = DATA.search(line)
        if m:
            not_run = m.group(1)
        if d:
            data = d.group(1)
        if not line.startswith("    $ "):
            if line.strip() and not line.startswith("    ") and not (m or d):
                not_run, data = "", "first-day"  # a marker holds for the block after it
            i += 1
            continue
        start = i
        command = line[6:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        output: list[str] = []
        while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
            if lines[i].startswith("    $ "):
                break
            output.append(lines[i][4:])
            i += 1
        while output and not output[-1].strip():
            output.pop()
        yield Example(rel, start + 1, command.strip(), tuple(output), not_run, data)


ALL = [e for p in PAGES for e in examples(p)]

# What needs what this machine (or a unit test) cannot give: measuring, root, a lab's
# hosts, another program.
MEASURES = re.compile(r"^sizing run\b(?!.*--plan)")
NEEDS = [
    (re.compile(r"^(?!sizing |unshare -n sizing )"), "not a sizing command"),
    (MEASURES, "measures (a real load run)"),
    (re.compile(r"--connect|--probe|probe-ceiling"), "contacts hosts or measures the host"),
    (re.compile(r"^sizing guide\b"), "renders the guide (its own tests cover it)"),
    (re.compile(r"^sizing run .*--resume"), "needs a stored run to resume"),
]


def why_skipped(e: Example) -> str:
    """Why an example is not run here, or "" (it runs)."""
    if e.not_run:
        return f"the page says: {e.not_run}"
    if not e.output:
        return "no output shown"
    command = re.sub(r"^[A-Z_]+=\S+ ", "", e.command)
    if command != e.command:
        return "sets an environment variable for the command (a shell line, not run in-process)"
    refused = e.output[0].startswith("error:")  # refused before anything is touched
    for pattern, why in NEEDS:
        if pattern.search(command) and not (refused and pattern is MEASURES):
            return why
    m = PIPE.match(command)
    base = (m.group("cmd") if m else command).removesuffix(" 2>&1")
    try:
        words = shlex.split(base)
    except ValueError:
        return "not a command line (quoting)"
    if words[1:3] == ["inventory", "check"] and not (ROOT / words[3]).exists():
        return f"checks {words[3]}, which the page builds in a scratch folder"
    for before, w in zip(["", *words[:-1]], words, strict=True):
        if before in ("-o", "--out"):
            continue  # what the command writes
        if (
            re.fullmatch(r"[\w./-]+\.(?:ya?ml|log|gz|ini|conf|sqlite|db|csv)", w)
            and not (ROOT / w).exists()
        ):
            return f"uses {w}, which the repository does not hold"
    return ""


def skipped_examples() -> list[tuple[str, str, str]]:
    """(where, command, why) of every example not run: the list the issue asks for."""
    return [(e.id, e.command, w) for e in ALL if (w := why_skipped(e))]


RUN = [e for e in ALL if not why_skipped(e)]

# Pages other work is rewriting now (issue 62's proposal and KVM wording): their drift is
# expected (xfail, not strict) until that work lands; then remove the entry and mark what
# cannot run in the page itself.
IN_FLUX = {
    "docs/guide.md": "being rewritten (the guide's pages)",
}


def _param(e: Example) -> object:
    if e.page in IN_FLUX:
        return pytest.param(e, id=e.id, marks=pytest.mark.xfail(reason=IN_FLUX[e.page]))
    return pytest.param(e, id=e.id)


NUMBER = re.compile(r"[-+]?[$€]?\d[\d,.]*(?:[eE][-+]?\d+)?")
SCRATCH = re.compile(r"/(?:tmp|work)/\S*")


def masked(text: str) -> str:
    """Numbers, times, dates and scratch paths masked; spaces folded; ``…`` as ``...``."""
    text = text.replace("…", "...")
    text = SCRATCH.sub("PATH", text)
    text = NUMBER.sub("#", text)
    return re.sub(r"[ \t]+", " ", text).strip()


def matches(shown: list[str], got: list[str]) -> str:
    """ "" when the page's text is in the output, word for word with numbers masked (a
    line wrapped elsewhere is the same text). A page shows an excerpt as often as the whole:
    its text may start and end anywhere in the output, and a ``...`` line of it stands for
    any text between. Else where the two part, in a few words each."""
    parts = [""]
    for line in shown:
        if masked(line) == "...":
            parts.append("")
        else:
            parts[-1] = f"{parts[-1]} {masked(line)}".strip()
    have = " ".join(m for m in (masked(x) for x in got) if m)
    at = 0
    for part in parts:
        if not part:
            continue
        found = have.find(part, at)
        if found < 0:
            return _parting(part, _nearest(part, have[at:]))
        at = found + len(part)
    return ""


def _nearest(part: str, have: str) -> str:
    """The output from where it agrees longest with the start of ``part``."""
    words = part.split()
    best, where = 0, 0
    for k in range(len(words), 0, -1):
        i = have.find(" ".join(words[:k]))
        if i >= 0:
            best, where = k, i
            break
    return have[where:] if best else have


def _parting(want: str, have: str) -> str:
    """Where ``want`` and ``have`` part: the words before and each side's next words."""
    w, h = want.split(), have.split()
    n = next((i for i, (a, b) in enumerate(zip(w, h, strict=False)) if a != b), min(len(w), len(h)))
    return (
        f"after {' '.join(w[max(0, n - 6) : n])!r}: page {' '.join(w[n : n + 8])!r}, "
        f"output {' '.join(h[n : n + 8])!r}"
    )


def run_example(e: Example, db: Path) -> tuple[int, list[str]]:
    """The command's exit status and what it printed (stdout, then stderr: as a terminal
    shows them; ``|&`` pipes both), through the page's ``head``/``tail``/``grep``."""
    command = e.command.removeprefix("unshare -n ")
    m = PIPE.match(command)
    base = m.group("cmd") if m else command
    both = base.endswith(" 2>&1")  # stderr into the pipe, as |& does
    argv = shlex.split(base.removesuffix(" 2>&1"))[1:]
    env = {"SIZING_DB": str(db), "COLUMNS": "100"}
    # an example lab's inventory (named, or by the lab database's runs) is read without a
    # network (unshare -n), never in process
    lab = names_a_lab(argv) or e.data == "lab"
    got: Any = sizing_offline(argv, env) if lab else CliRunner().invoke(app, argv, env=env)
    if m is None:
        return got.exit_code, (got.stdout + got.stderr).splitlines()
    both = both or m.group("op") == "|&"
    piped = (got.stderr if both else "") + got.stdout
    lines = piped.splitlines()
    arg = shlex.split(m.group("arg"))
    if m.group("filter") == "head":
        lines = lines[: int(arg[0].lstrip("-n").lstrip("-"))]
    elif m.group("filter") == "tail":
        lines = lines[-int(arg[0].lstrip("-n").lstrip("-")) :]
    else:
        lines = [x for x in lines if re.search(arg[-1], x)]
    # stderr is not piped: the terminal shows it first
    return got.exit_code, ([] if both else got.stderr.splitlines()) + lines


# The results a page's block runs on (``<!-- data: lab -->`` before it): a new user's after
# `make run` on a 2-core VM (the default: its rps point invalid, its tps point valid but a
# virtualized host's), the same with no valid figure, none (the bundled reference data
# alone), or the example lab's run (tests/labdb.py: simulated figures of r640-01).
STATES = {
    "first-day": two_core_run,
    "no-valid": lambda db: two_core_run(db, tps_valid=False),
    "none": lambda db: None,
    "lab": lambda db: labdb.build_lab(
        db, inventory="inventories/lab.yml", role="load-balance", price_usd=9000.0
    ),
}


@pytest.fixture(scope="module")
def states(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each state's results database, built once."""
    out = {}
    for name, build in STATES.items():
        db = tmp_path_factory.mktemp("docs") / f"{name}.db"
        build(db)
        out[name] = db
    return out


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's lab commands are offline (plan, check): nothing may contact a host."""

    def refused(*_: object, **__: object) -> None:
        raise AssertionError("a documented command tried to contact a host")

    monkeypatch.setattr(socket.socket, "connect", refused)
    monkeypatch.setattr(socket, "create_connection", refused)
    monkeypatch.setattr(Playbooks, "run", refused)
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize("example", [_param(e) for e in RUN])
def test_a_documented_command_prints_what_its_page_shows(
    example: Example, states: dict[str, Path], offline: None
) -> None:
    assert example.data in states, f"{example.id}: no data {example.data!r} ({', '.join(STATES)})"
    _, got = run_example(example, states[example.data])
    drift = matches(list(example.output), got)
    assert drift == "", f"{example.id}: {example.command}\n{drift}\n---\n" + "\n".join(got)


def test_every_example_not_run_says_why() -> None:
    skipped = skipped_examples()
    assert all(why for _, _, why in skipped)
    # most examples run: a parser that found none, or skipped all, tests nothing
    assert len(RUN) >= 20 and len(RUN) > len([s for s in skipped if "sizing " in s[1]])


def test_the_parser_reads_a_page_as_a_user_does(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n    $ sizing recommend --rps 1 \\\n        --tps 2\n    out 1\n\n    out 2\n"
        "    $ sizing doctor\n    ok\n\n<!-- not run: needs a lab -->\n\n    $ sizing run -i lab\n"
        "    x\n\nMore text.\n<!-- data: lab -->\n\n    $ sizing table\n    y\n"
    )
    found = list(examples_at(page))
    assert [(e.command, e.output, e.not_run, e.data) for e in found] == [
        ("sizing recommend --rps 1 --tps 2", ("out 1", "", "out 2"), "", "first-day"),
        ("sizing doctor", ("ok",), "", "first-day"),
        ("sizing run -i lab", ("x",), "needs a lab", "first-day"),
        ("sizing table", ("y",), "", "lab"),
    ]
    assert matches(["a 1", "...", "z 3"], ["a 2", "b", "c", "z 40"]) == ""
    assert matches(["a b", "c d"], ["a", "b c d"]) == ""  # wrapped elsewhere
    assert matches(["a 1", "z"], ["a 1", "y"]) == "after 'a #': page 'z', output 'y'"
    assert matches(["b c"], ["a", "b", "c", "d"]) == ""  # an excerpt
    assert matches(["c", "...", "a"], ["a", "b", "c"]) != ""  # in order
    assert matches(["a", "", "b"], ["a", "", "", "b"]) == ""  # blank lines are no words


def examples_at(page: Path) -> Iterator[Example]:
    """:func:`examples` of a page outside the repository (the parser's own test)."""
    import sizing.paths

    real = sizing.paths.ROOT
    try:
        globals()["ROOT"] = page.parent
        yield from examples(page)
    finally:
        globals()["ROOT"] = real
