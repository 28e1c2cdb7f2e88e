"""A point that cannot be stored is kept in a recovery file beside the database, and
imported later with ``sizing import``."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sizing.errors import InputError
from sizing.model import PointKey, PointResult, Sample
from sizing.records import SampleMeta
from sizing.store.engines import beside
from sizing.store.ranges import record_problems
from sizing.store.rows import result_from_columns

RECOVERY_SUFFIX = ".recovery.jsonl"


RECOVERY_KIND = "sizing-point"


def recovery_path(db: Path | str) -> Path:
    """The recovery file beside a results database (a server's: in the user's data
    directory, :func:`~sizing.store.engines.beside`)."""
    return beside(db, RECOVERY_SUFFIX)


def point_record(
    run_id: int, result: PointResult, samples: Sequence[tuple[int, Sample]]
) -> dict[str, Any]:
    """A point as one self-contained JSON object (a line of a recovery file)."""
    rid = uuid.uuid4().hex
    k = result.key
    return {
        "kind": RECOVERY_KIND,
        "version": 1,
        "recovery_id": rid,
        "run_id": run_id,
        "created_at": time.time(),
        "key": {
            "host": k.host,
            "platform": k.platform,
            "cores": k.cores,
            "ht": k.ht,
            "profile": k.profile,
        },
        "status": str(result.status),
        "reason": result.reason,
        "value": result.value,
        "unit": result.unit,
        "repetitions": result.repetitions,
        "spread": result.spread,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "flags": list(result.flags),
        "metadata": replace(result.metadata, recovery_id=rid).to_json(),
        "samples": [[rep, s.metric, s.value, s.unit, s.metadata.to_json()] for rep, s in samples],
    }


def point_from_record(
    rec: dict[str, Any],
) -> tuple[int, PointResult, list[tuple[int, Sample]]]:
    """A recovery record's run id, point result and samples (:func:`point_record` wrote it)."""
    k = rec["key"]
    key = PointKey(
        str(k["host"]), str(k["platform"]), int(k["cores"]), str(k["ht"]), str(k["profile"])
    )
    result = result_from_columns(key, rec, list(rec["flags"]), dict(rec["metadata"]))
    samples = [
        (int(r), Sample(str(m), float(v), str(u), SampleMeta.parse(md)))
        for r, m, v, u, md in rec["samples"]
    ]
    return int(rec["run_id"]), result, samples


def keep_for_recovery(
    db: Path | str, run_id: int, result: PointResult, samples: Sequence[tuple[int, Sample]]
) -> tuple[Path | None, str]:
    """Append a point that could not be stored to the recovery file beside ``db`` (or,
    when that cannot be written, one in the temporary directory), synced to disk.
    Returns (the file, the JSON line); the file is None when neither could be written,
    and the caller prints the line."""
    line = json.dumps(point_record(run_id, result, samples), default=str)
    fallback = Path(tempfile.gettempdir()) / f"sizing-{os.getpid()}{RECOVERY_SUFFIX}"
    for path in (recovery_path(db), fallback):
        new = not path.exists()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, (line + "\n").encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            return path, line
        except OSError:
            if new:  # a full disk: no empty file is left behind
                with contextlib.suppress(OSError):
                    if path.stat().st_size == 0:
                        path.unlink()
            continue
    return None, line


def read_recovery(path: Path) -> list[dict[str, Any]]:
    """The points of a recovery file (none in an empty one), or a SizingError naming the
    file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            str(path), [f"not a recovery file (not UTF-8 text: {exc.reason})"]
        ) from exc
    except OSError as exc:
        why = f"cannot read the recovery file: {exc.strerror or exc}"
        raise InputError(str(path), [why]) from exc
    records: list[dict[str, Any]] = []
    refused: list[str] = []  # a number no measurement can have: file, line and field
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict) or rec.get("kind") != RECOVERY_KIND:
                raise ValueError("not a sizing point record")
            point_from_record(rec)
            str(rec["recovery_id"])
            float(rec["created_at"])
        except (ValueError, TypeError, KeyError) as exc:
            raise InputError(
                str(path), [f"line {n}: not a point sizing kept for recovery ({exc})"]
            ) from exc
        bad = record_problems(rec)
        if bad:
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            refused.append(f"line {n}: {bad[0]}{more}")
            continue
        records.append(rec)
    if refused:
        raise InputError(str(path), refused)
    return records  # an empty file holds nothing to import: not an error
