"""A stored run's options read back typed (:class:`RunOptionsRecord`): the label, the
warm-up and the owner by attribute, the other options kept as stored, a damaged record read
as "not recorded"; and no module reads a stored run's options by key."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sizing.records import LockOwner, RunOptionsRecord
from sizing.store.rows import RunRecord

ROOT = Path(__file__).resolve().parents[2]
# the one module that decodes the record key by key, from RunOptions' declarations
DECODER = ROOT / "sizing" / "sweep" / "options.py"
KEY_READ = re.compile(r"""options(\[|\.get\()""")


def _run(options: dict[str, Any]) -> RunRecord:
    return RunRecord(1, 0.0, None, "complete", "inv.yml", "sizing run", "1", options, {}, "")


def test_the_record_reads_back_typed() -> None:
    stored: dict[str, Any] = {
        "label": "r640 baseline",
        "warmup_s": 3,
        "owner": {"controller": "m1", "pid": 42, "pid_start": 7},
        "cores": [1, 2],
        "profiles": ["rps", "tps"],
    }
    rec = RunOptionsRecord.parse(stored)
    assert rec.label == "r640 baseline"
    assert rec.warmup_s == 3.0 and isinstance(rec.warmup_s, float)
    assert rec.owner == LockOwner(controller="m1", pid=42, pid_start=7)
    assert rec.extra == {"cores": [1, 2], "profiles": ["rps", "tps"]}
    run = _run(stored)
    assert run.label == "r640 baseline" and run.owner == rec.owner
    assert run.options is stored  # as stored: results --json shows it unchanged


def test_a_damaged_record_reads_as_not_recorded() -> None:
    rec = RunOptionsRecord.parse({"label": 7, "warmup_s": "three", "owner": "someone"})
    assert (rec.label, rec.warmup_s, rec.owner) == (None, None, None)
    assert RunOptionsRecord.parse(None) == RunOptionsRecord()
    assert _run({}).label == "" and _run({}).owner is None


def test_no_module_reads_a_stored_runs_options_by_key() -> None:
    assert KEY_READ.search("x = run.record.options['warmup_s']")
    assert KEY_READ.search('rec.options.get("owner")')
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted((ROOT / "sizing").rglob("*.py"))
        if path != DECODER
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if KEY_READ.search(line)
    ]
    assert found == []
