"""Rewrite a page's example from what the tool prints now (issue 62: the docs show real output).

    .venv/bin/python -m tests.docs_regen                      # every example that drifted
    .venv/bin/python -m tests.docs_regen docs/demand.md:138   # one, by page and line

Each example runs as tests/unit/test_docs.py runs it (in-process, on the results its page
names with ``<!-- data: ... -->``). A block that shows the whole output is rewritten with
it; a block that shows an excerpt (a ``...`` line, or output that starts further on) is
left as it is, and the output is printed beside where the two part, for a person to choose
the lines again: an excerpt is a choice, not something to regenerate blindly.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.unit import test_docs as docs


def _states(scratch: Path) -> dict[str, Path]:
    out = {}
    for name, build in docs.STATES.items():
        where = scratch / name
        where.mkdir()
        db = where / f"{name}.db"
        build(db)
        out[name] = db
    docs.SIMULATED.main(["--out", str(scratch / "simulated")])  # where simulated_db looks
    return out


def _whole(shown: tuple[str, ...], got: list[str]) -> bool:
    """True when the page shows the command's whole output: no ``...``, and its first line
    begins as the output's does (``error:``, ``Demand:``; an excerpt starts further on)."""
    if any(docs.masked(x).strip() == "..." for x in shown):
        return False
    first = [docs.masked(x).split()[:1] for x in [*shown[:1], *got[:1]]]
    return bool(shown and got) and first[0] == first[1]


def _rewrite(e: docs.Example, got: list[str]) -> None:
    """The page with ``e``'s output block replaced by ``got``."""
    page = docs.ROOT / e.page
    lines = page.read_text(encoding="utf-8").splitlines()
    at = e.line
    while lines[at - 1].endswith("\\"):
        at += 1
    pad = " " * e.indent
    lines[at : at + len(e.output)] = [(pad + x).rstrip() for x in got]
    page.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(ids: list[str]) -> int:
    os.chdir(docs.ROOT)
    left = 0
    with tempfile.TemporaryDirectory() as scratch:
        dbs = _states(Path(scratch))
        done: set[tuple[str, str, tuple[str, ...]]] = set()
        while True:  # a rewrite moves the lines below it: read the pages again
            todo = [
                e
                for p in docs.PAGES
                for e in docs.examples(p)
                if not docs.why_skipped(e)
                and (e.page, e.command, e.output) not in done
                and (not ids or e.id in ids)
            ]
            for e in todo:
                done.add((e.page, e.command, e.output))
                _, got = docs.run_example(e, dbs[e.data], Path(scratch))
                drift = docs.matches(list(e.output), got)
                if not drift:
                    continue
                if _whole(e.output, got):
                    _rewrite(e, got)
                    print(f"{e.id}: rewritten ({e.command})")
                    break
                left += 1
                print(f"{e.id}: an excerpt, left for you: {drift}\n--- {e.command}")
                print("\n".join(got) + "\n---")
            else:
                return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
