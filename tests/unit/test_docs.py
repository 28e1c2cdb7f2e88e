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
from sizing.textfit import fold_lines
from tests import labdb
from tests.offline import names_a_lab, sizing_offline
from tests.unit.test_hints import two_core_run

WIDTH = 100  # the README's promise: no line sizing writes is wider
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
    indent: int = 4  # a block under a list item is indented deeper

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
        dollar = re.match(r"( {4,})\$ ", line)
        if not dollar:
            if line.strip() and not line.startswith("    ") and not (m or d):
                not_run, data = "", "first-day"  # a marker holds for the block after it
            i += 1
            continue
        pad = dollar.group(1)
        start = i
        command = line[len(pad) + 2 :]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        output: list[str] = []
        while i < len(lines) and (lines[i].startswith(pad) or not lines[i].strip()):
            if lines[i].startswith(pad + "$ "):
                break
            output.append(lines[i][len(pad) :])
            i += 1
        while output and not output[-1].strip():
            output.pop()
        yield Example(rel, start + 1, command.strip(), tuple(output), not_run, data, len(pad))


ALL = [e for p in PAGES for e in examples(p)]


def _simulated() -> Any:
    """``examples/simulated.py``, the script that writes the pages' simulated stores."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("sizing_examples_simulated", SIMULATED_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SIMULATED_PY = ROOT / "examples" / "simulated.py"
SIMULATED = _simulated()
# where the script writes (`.venv/bin/python examples/simulated.py`), as the pages name it
SIMULATED_DIR = ".cache/examples/"


def simulated_db(word: str, db: Path) -> str:
    """A page's ``--db .cache/examples/NAME.sqlite``: the store of that name the script
    writes, built for the test beside ``db`` (never in the repository's .cache)."""
    m = re.fullmatch(re.escape(SIMULATED_DIR) + r"([\w-]+)\.sqlite", word)
    if m is None:
        return word
    assert m.group(1) in SIMULATED.STORES, f"examples/simulated.py writes no {word}"
    return str(db.parent.parent / "simulated" / f"{m.group(1)}.sqlite")


# -- every file a page's command reads is there (issue 62) -----------------------------------
# As typed, docs/inventories.md cat'ed and checked directories that shipped nowhere,
# docs/ceilings.md sized on a unit test's store and docs/recommend.md on a database the page
# never made: each was skipped here as "uses X, which the repository does not hold". A file a
# command reads is now in the repository, or written by an earlier command of the same page
# (``--db`` of a run, ``-o``, a redirection, a script's "wrote X" line), or one of these few,
# each the reader's own by the page's own story:
READERS_OWN = {
    ("docs/hypervisors.md", "inv.yml"): "the reader's libvirt lab inventory",
    ("docs/errors.md", "g.sqlite.recovery.jsonl"): "the recovery file of the page's crash story",
    ("docs/errors.md", "g.sqlite"): "the database of the page's crash story",
    ("docs/errors.md", "empty.recovery.jsonl"): "an empty recovery file of the page's story",
    ("docs/errors.md", "e.sqlite"): "the database an import creates",
    ("docs/demand.md", "rich.log"): "the log a real nginx wrote in the integration test",
    ("docs/demand.md", "nginx.conf"): "that nginx's configuration",
}
# options whose value is a file the command reads (--db: any command but a run, which writes)
READ_OPTIONS = {"-i", "--inventory", "--catalog", "--db", "--demand", "--workload"}
READ_OPTIONS |= {"--counters", "--nginx-conf"}
WRITE_OPTIONS = {"-o", "--out"}
WROTE = re.compile(r"^\s*wrote (\S+)")


def file_uses(e: Example) -> tuple[list[str], list[str]]:
    """(read, written): the files ``e``'s command line reads and writes, as typed."""
    line = re.split(r"\s+#\s", e.command)[0].removesuffix("&").strip()
    read: list[str] = []
    written = [m.group(1) for x in e.output if (m := WROTE.match(x))]
    for part in re.split(r"\s\|&?\s", line)[:1]:  # what a pipe's filter reads is the pipe
        try:
            words = shlex.split(part.replace(" 2>&1", ""))
        except ValueError:
            continue
        env = {}
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        if words[:2] == ["unshare", "-n"]:
            words = words[2:]
        if not words:
            continue
        run = words[:2] == ["sizing", "run"]
        for name, value in env.items():
            if name == "SIZING_DB":
                (written if run else read).append(value)
            elif name.endswith("_FILE"):
                read.append(value)
        if words[0] in ("cat", "sqlite3"):
            read += [w for w in words[1 : 2 if words[0] == "sqlite3" else None] if w[:1] != "-"]
            continue
        if words[0] != "sizing":
            continue
        read += _arguments(words[1:])
        for before, w in zip(words, words[1:], strict=False):
            if before in WRITE_OPTIONS and w != "-":
                written.append(w)
            elif before == "--db" and run:
                written.append(w)
            elif before in READ_OPTIONS:
                read.append(w)
        redirect = re.search(r"\s>\s?(\S+)", part)
        if redirect:
            written.append(redirect.group(1))
    return read, written


def _arguments(args: list[str]) -> list[str]:
    """The values of the command's positional arguments (files: `inventory check DIR`,
    `demand LOG...`, `import FILE`), as its parser reads them."""
    import typer

    cmd: Any = typer.main.get_command(app)
    while hasattr(cmd, "get_command") and args and not args[0].startswith("-"):
        sub = cmd.get_command(cmd.context_class(cmd), args[0])
        if sub is None:
            return []
        cmd, args = sub, args[1:]
    if hasattr(cmd, "get_command"):
        return []
    ctx = cmd.make_context(cmd.name, list(args), resilient_parsing=True)
    out: list[str] = []
    for param in cmd.params:
        if param.param_type_name == "argument" and param.name is not None:
            value = ctx.params.get(param.name)
            values = value if isinstance(value, list | tuple) else [value]
            out += [str(v) for v in values if v is not None]
    return out


# What needs what this machine (or a unit test) cannot give: measuring, root, a lab's
# hosts, another program.
MEASURES = re.compile(r"^sizing run\b(?!.*--plan)")
NEEDS = [
    (re.compile(r"^(?!sizing |unshare -n sizing )"), "not a sizing command"),
    (MEASURES, "measures (a real load run)"),
    # an example lab's hosts, tried without a network (unshare -n), fail as the page shows
    (
        re.compile(r"^(?!unshare -n ).*--connect|--probe|probe-ceiling"),
        "contacts hosts or measures the host",
    ),
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
    del words  # a command line that parses
    # a file the repository does not hold: the reader's own, or what an earlier command
    # that cannot run here makes (a real run's --db); a missing one fails
    # test_every_file_a_page_reads_is_there_or_made_first, never skips silently
    for w in file_uses(e)[0]:
        if not (ROOT / w).exists() and not w.startswith((SIMULATED_DIR, "/")):
            return f"reads {w}, which the reader makes (the page says how)"
    return ""


def skipped_examples() -> list[tuple[str, str, str]]:
    """(where, command, why) of every example not run: the list the issue asks for."""
    return [(e.id, e.command, w) for e in ALL if (w := why_skipped(e))]


RUN = [e for e in ALL if not why_skipped(e)]

# Pages other work is rewriting now: their drift is expected (xfail, not strict) until that
# work lands; then remove the entry and mark what cannot run in the page itself. None now.
IN_FLUX: dict[str, str] = {}


def _param(e: Example) -> object:
    if e.page in IN_FLUX:
        return pytest.param(e, id=e.id, marks=pytest.mark.xfail(reason=IN_FLUX[e.page]))
    return pytest.param(e, id=e.id)


NUMBER = re.compile(r"[-+]?[$€]?\d[\d,.]*(?:[eE][-+]?\d+)?")
SCRATCH = re.compile(r"/(?:tmp|work)/\S*")


def masked(text: str) -> str:
    """A line with numbers, times, dates and scratch paths masked and ``…`` as ``...``. Its
    indentation and words stay as printed: the spaces before a number (a right-aligned
    column, whose width the number sets) and between words inside a line (a table's
    padding) are folded to one, trailing spaces dropped."""
    text = text.replace("…", "...").rstrip()
    text = SCRATCH.sub("PATH", text)
    text = re.sub(r"[ \t]*" + NUMBER.pattern, " #", text)
    indent = len(text) - len(text.lstrip(" "))
    return " " * indent + re.sub(r"[ \t]+", " ", text.strip())


def _words(text: str) -> str:
    """A line's words alone (for saying where a page and the output part)."""
    return re.sub(r"\s+", " ", text).strip()


def matches(shown: list[str], got: list[str]) -> str:
    """ "" when the page's lines are the output's, line for line: each line as printed
    (:func:`masked`), its line breaks and indentation included, so a page that still shows
    a line the tool now wraps, or words it no longer prints, fails. A page shows an excerpt
    as often as the whole: its lines may start and end at any line of the output, and a
    ``...`` line of it stands for any lines between (none included). Else where the two
    part: the page's line and the output's nearest."""
    parts: list[list[str]] = [[]]
    for line in shown:
        if masked(line).strip() == "...":
            parts.append([])
        else:
            parts[-1].append(masked(line))
    have = [masked(x) for x in got]
    if shown and shown[0].startswith("error: ") and parts[0] and have[: len(parts[0])] != parts[0]:
        # a refusal the page shows from its first line is all the command prints before it:
        # an error line found after lines the page leaves out is not the page's output
        return _parting(parts[0], have[: len(parts[0])])
    at = 0
    for part in (p for p in parts if p):
        found = next(
            (i for i in range(at, len(have) - len(part) + 1) if have[i : i + len(part)] == part),
            -1,
        )
        if found < 0:
            return _parting(part, have[at:])
        at = found + len(part)
    return ""


def _parting(want: list[str], have: list[str]) -> str:
    """Where a page's lines and the output part: the first page line that no run of output
    lines starting where the most agree carries, and the output line in its place."""
    best, where = 0, 0
    for i in range(len(have)):
        k = 0
        while k < len(want) and i + k < len(have) and have[i + k] == want[k]:
            k += 1
        if k > best:
            best, where = k, i
    if best == len(want):
        return ""
    mine = want[best]
    theirs = have[where + best] if where + best < len(have) and best else "(no such line)"
    if not best:
        same = [h for h in have if _words(h) == _words(mine)]
        theirs = f"{same[0]!r} (indented otherwise)" if same else theirs
        return f"page line {mine!r} is no line of the output; {theirs}"
    return f"after {best} line(s) agree: page {mine!r}, output {theirs!r}"


def run_example(e: Example, db: Path, scratch: Path | None = None) -> tuple[int, list[str]]:
    """The command's exit status and what it printed (stdout, then stderr: as a terminal
    shows them; ``|&`` pipes both), through the page's ``head``/``tail``/``grep``. A guide
    the page writes to a file is written in ``scratch`` instead (never the repository)."""
    command = e.command.removeprefix("unshare -n ")
    m = PIPE.match(command)
    base = m.group("cmd") if m else command
    both = base.endswith(" 2>&1")  # stderr into the pipe, as |& does
    argv = shlex.split(base.removesuffix(" 2>&1"))[1:]
    if argv[:1] == ["guide"]:
        for i, w in enumerate(argv[:-1]):
            if w in ("-o", "--out") and argv[i + 1] != "-":
                assert scratch is not None, f"{e.id}: writes {argv[i + 1]}"
                argv[i + 1] = str(scratch / Path(argv[i + 1]).name)
    env = {"SIZING_DB": str(db), "COLUMNS": "100"}
    argv = [simulated_db(w, db) for w in argv]
    # an example lab's inventory (named, or by the lab database's runs) is read without a
    # network (unshare -n), never in process
    lab = names_a_lab(argv) or e.data == "lab"
    got: Any = sizing_offline(argv, env) if lab else CliRunner().invoke(app, argv, env=env)
    if m is None:
        return got.exit_code, as_a_page_shows((got.stdout + got.stderr).splitlines())
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
    return got.exit_code, as_a_page_shows(([] if both else got.stderr.splitlines()) + lines)


def as_a_page_shows(lines: list[str]) -> list[str]:
    """The output as the pages show it: an error's line, which the tool keeps one line
    whatever its length (a script greps it), folded at 100 columns as the tool folds a
    warning (its continuations indented 4), so no page line is wider than 100."""
    out: list[str] = []
    for line in lines:
        if line.startswith("error: ") and len(line) > WIDTH:
            out.extend(fold_lines(line, WIDTH, more=4).splitlines())
        else:
            out.append(line)
    return out


# The results a page's block runs on (``<!-- data: lab -->`` before it): a new user's after
# `make run` on a 2-core VM (the default: its rps point invalid, its tps point valid but a
# virtualized host's), the same with no valid figure, none (the bundled reference data
# alone), the example lab's run (tests/labdb.py: simulated figures of r640-01). A page that
# sizes on examples/simulated.py's stores names one with --db (:func:`simulated_db`).
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
    # examples/simulated.py's stores, where :func:`simulated_db` finds them from any state's
    top = next(iter(out.values())).parent.parent
    SIMULATED.main(["--out", str(top / "simulated")])
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
    example: Example, states: dict[str, Path], offline: None, tmp_path: Path
) -> None:
    assert example.data in states, f"{example.id}: no data {example.data!r} ({', '.join(STATES)})"
    _, got = run_example(example, states[example.data], tmp_path)
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
        "\n- an item:\n\n      $ sizing doctor\n        z\n      w\n"
    )
    found = list(examples_at(page))
    assert [(e.command, e.output, e.not_run, e.data) for e in found] == [
        ("sizing recommend --rps 1 --tps 2", ("out 1", "", "out 2"), "", "first-day"),
        ("sizing doctor", ("ok",), "", "first-day"),
        ("sizing run -i lab", ("x",), "needs a lab", "first-day"),
        ("sizing table", ("y",), "", "lab"),
        ("sizing doctor", ("  z", "w"), "", "first-day"),  # a list item's block
    ]
    assert matches(["a 1", "...", "z 3"], ["a 2", "b", "c", "z 40"]) == ""
    assert matches(["a 1", "...", "b"], ["a 2", "b"]) == ""  # "..." may stand for no line
    assert matches(["a b", "c d"], ["a", "b c d"]) != ""  # wrapped elsewhere: drift
    assert matches(["a  b", "  c"], ["a b", "  c"]) == ""  # a table's padding
    assert matches(["a b", "  c"], ["a b", "    c"]) != ""  # indentation is layout
    assert matches(["n:    5 s", "x"], ["n: 1,205 s", "x"]) == ""  # a column's number
    assert matches(["a 1", "z"], ["a 1", "y"]) == "after 1 line(s) agree: page 'z', output 'y'"
    assert matches(["b", "c"], ["a", "b", "c", "d"]) == ""  # an excerpt
    assert matches(["c", "...", "a"], ["a", "b", "c"]) != ""  # in order
    assert matches(["a", "", "b"], ["a", "", "", "b"]) != ""  # blank lines are layout too
    # a refusal shown from its first line: nothing printed before it (issue 62)
    assert matches(["error: no"], ["Demand: 1", "error: no"]) != ""
    assert matches(["error: no", "..."], ["error: no", "b"]) == ""


def examples_at(page: Path) -> Iterator[Example]:
    """:func:`examples` of a page outside the repository (the parser's own test)."""
    import sizing.paths

    real = sizing.paths.ROOT
    try:
        globals()["ROOT"] = page.parent
        yield from examples(page)
    finally:
        globals()["ROOT"] = real


# A line the tool wrote, quoted in a page's prose block without its command (errors.md's
# lock and kill -9 stories): one of its messages.
MESSAGE = re.compile(r"^\s{4,}(?:error|warning): ")


# A document for another program, whose lines are data, not text to fold: a CSV, a JSON
# document, the guide's Markdown (a paragraph a line)
DOCUMENT = re.compile(r"--csv\b|--json\b|--format md\b")


def tool_lines(page: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line a page shows as the tool's: the output of every
    ``$ sizing`` example (run here or not) and its messages quoted alone (from where the
    message starts: a bullet's block is indented deeper). A benchmark's or another
    program's output is theirs; a CSV or JSON document is data (:data:`DOCUMENT`)."""
    ours = {
        e.line: e
        for e in examples(page)
        if re.match(r"(?:unshare -n )?sizing ", re.sub(r"^[A-Z_]+=\S+ ", "", e.command))
        and not DOCUMENT.search(e.command)
    }
    lines = page.read_text(encoding="utf-8").splitlines()
    shown: set[tuple[int, int]] = set()
    for e in ours.values():
        # the output starts under the command and its continuation lines
        at = e.line
        while lines[at - 1].endswith("\\"):
            at += 1
        shown.update((n, e.indent) for n in range(at + 1, at + 1 + len(e.output)))
    indent = dict(shown)
    for n, line in enumerate(lines, 1):
        if n in indent:
            yield n, line[indent[n] :]
        elif MESSAGE.match(line):
            yield n, line.lstrip(" ")


def test_no_line_a_page_shows_of_the_tool_is_wider_than_100_columns() -> None:
    wide = [
        f"{page.relative_to(ROOT)}:{n}: {len(line)} columns"
        for page in PAGES
        for n, line in tool_lines(page)
        if len(line.rstrip()) > WIDTH
    ]
    assert wide == []
    # the check reads what the pages show: the README's own examples are among its lines
    assert sum(1 for _ in tool_lines(ROOT / "README.md")) >= 20


def typed_commands() -> list[tuple[str, str]]:
    """(where, command) of every ``sizing`` command a page's code blocks show, with or
    without ``$`` and output (a quick start's list too), its ``\\`` lines joined and what the
    shell does after it (a comment, a pipe, a redirection) cut; a benchmark's output lines
    that start with "sizing" are its, not commands."""
    out = []
    for page in PAGES:
        theirs = {
            n
            for e in examples(page)
            if not re.match(r"(?:unshare -n )?sizing ", e.command)
            for n in range(e.line + 1, e.line + 1 + len(e.output))
        }
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            start = i + 1
            # "sizing demand: busiest second ..." is a benchmark's output, not a command
            m = re.match(
                r"^ {4,}(?:\$ )?(?:unshare -n )?(sizing(?: (?:-|[a-z-]+\b(?!:)).*)?)$", lines[i]
            )
            if m and start not in theirs:
                cmd = m.group(1)
                while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd.rstrip()[:-1].rstrip() + " " + lines[i].strip()
                cmd = re.split(r"\s+#\s|\s\|&?\s|\s2>&1|\s2?>\s?\S+", cmd)[0].strip()
                if not re.search(r"\S {2,}\S", cmd):  # columns: a table's row, not a command
                    out.append((f"{page.relative_to(ROOT)}:{start}", cmd))
            i += 1
    return out


@pytest.mark.parametrize(("where", "typed"), typed_commands(), ids=[w for w, _ in typed_commands()])
def test_every_command_a_page_shows_parses(
    where: str, typed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As typed, each names a command and options it takes, with values they accept (the
    README's own test, tests/unit/test_layout.py, on every page): a renamed option or a
    dropped choice fails here even where the command cannot run."""
    import typer

    monkeypatch.chdir(ROOT)
    cmd: Any = typer.main.get_command(app)
    args = shlex.split(typed)[1:]
    while hasattr(cmd, "get_command") and args and not args[0].startswith("-"):
        sub = cmd.get_command(cmd.context_class(cmd), args[0])
        assert sub is not None, f"{where}: {typed}: no command {args[0]!r}"
        cmd, args = sub, args[1:]
    if "--help" in args:
        return
    assert not hasattr(cmd, "get_command"), f"{where}: {typed}: names no command"
    with cmd.make_context(cmd.name, args, resilient_parsing=False) as ctx:
        assert ctx.params is not None


def test_the_regenerator_rewrites_a_whole_output_and_leaves_an_excerpt() -> None:
    from tests.docs_regen import _whole

    assert _whole(("error: a.log: old words",), ["error: examples/a.log: new words", "x"])
    assert _whole(("Demand: 5 RPS",), ["Demand: 45 RPS + 6 TPS"])  # numbers masked
    assert not _whole(("Recommended: 1 x",), ["Demand: 1", "Recommended: 1 x"])  # further on
    assert not _whole(("Demand: 1", "...", "Cost: 2"), ["Demand: 1", "b", "Cost: 2"])
    assert not _whole((), ["a"]) and not _whole(("a",), [])


def missing_files(page: Path) -> list[str]:
    """Where a page's command reads a file that is not in the repository, not written by an
    earlier command of the page and not the reader's own (:data:`READERS_OWN`)."""
    rel = str(page.relative_to(ROOT))
    made: set[str] = set()
    out = []
    for e in examples(page):
        read, written = file_uses(e)
        for w in read:
            there = (ROOT / w).exists() if not w.startswith("/") else Path(w).exists()
            own = (rel, w) in READERS_OWN
            if not (there or w in made or own or "$" in w or w.isupper()):
                out.append(f"{e.id}: {e.command}: reads {w}, which nothing makes")
        made.update(written)
    return out


def test_every_file_a_page_reads_is_there_or_made_first() -> None:
    assert [m for page in PAGES for m in missing_files(page)] == []
    # and the reader's own files are still what the pages use
    used = {(e.page, w) for p in PAGES for e in examples(p) for w in file_uses(e)[0]}
    assert set(READERS_OWN) <= used, set(READERS_OWN) - used


def test_the_file_check_catches_what_issue_62_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n    $ cat edge-dir-ini/sizing\n    [servers:children]\n"
        "    $ sizing inventory check vc\n    vc: 1 server(s)\n"
        "    $ SIZING_DB=.cache/bench/r.sqlite sizing recommend --rps 1 --basis localhost\n"
        "    Demand: 1 RPS\n"
        "    $ sizing table --db .cache/examples/x.sqlite --catalog no/such.yml\n    y\n"
        "    $ sizing run --cores 1 --db made.sqlite\n"
        "    $ sizing results --db made.sqlite\n    z\n"
        "    $ python make.py\n    wrote out/new.sqlite (x)\n"
        "    $ sizing table --db out/new.sqlite -i inventories/local.yml\n    w\n"
    )
    real = globals()["ROOT"]
    try:
        globals()["ROOT"] = tmp_path
        (tmp_path / "inventories").mkdir()
        (tmp_path / "inventories" / "local.yml").write_text("all: {}\n")
        found = missing_files(page)
    finally:
        globals()["ROOT"] = real
    reads = [x.rsplit(": reads ", 1)[1].split(",")[0] for x in found]
    assert reads == [
        "edge-dir-ini/sizing",
        "vc",
        ".cache/bench/r.sqlite",
        ".cache/examples/x.sqlite",
        "no/such.yml",
    ]
