"""Typed records all through (issue 60): ``sizing/records/`` passes ``mypy --strict`` and
names no ``Any``; a run's stored profiles are records (``ProfileDefRecord``), field for
field the profile's, and read back as the profile that was measured."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sizing import profiles
from sizing.records import ProfileDefRecord, RunOptionsRecord

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "sizing" / "records"


def test_the_records_pass_mypy_strict() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "sizing/records"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_records_name_no_any() -> None:
    """No ``Any`` in what sizing writes of its own: a stored value is typed, and what a
    record keeps as read (``verbatim()``) is an ``object`` until it is looked at."""
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted(RECORDS.glob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bAny\b", line)
    ]
    assert found == []
    assert re.search(r"\bAny\b", "x: Any = 1")  # the grep sees one


def test_the_record_declares_every_field_of_a_profile() -> None:
    declared = {f.name for f in fields(ProfileDefRecord)} - {"verbatim_unknown"}
    assert declared == set(profiles.Profile.model_fields)


def roundtrip(prof: profiles.Profile) -> profiles.Profile:
    """A profile as a run stores it (the options' JSON) and reads it back."""
    stored = RunOptionsRecord(
        profile_defs=(ProfileDefRecord.parse(prof.model_dump(mode="json")),)
    ).to_json()
    (back,) = RunOptionsRecord.parse(json.loads(json.dumps(stored))).profile_defs or ()
    return profiles.Profile.model_validate(back.to_json())


def test_every_bundled_profile_reads_back_as_measured() -> None:
    names = profiles.available()
    assert len(names) > 5
    for name in names:
        prof = profiles.load(name)
        assert roundtrip(prof) == prof


@given(
    name=st.sampled_from(sorted(profiles.available())),
    file_size=st.integers(0, 1 << 40),
    connections=st.integers(1, 100000),
    duration_s=st.floats(1, 3600),
    tls_key=st.sampled_from([None, "rsa2048", "ecdsa-p256"]),
    keepalive=st.booleans(),
    upstream_keepalive=st.one_of(st.none(), st.integers(1, 100000)),
    rates=st.one_of(st.none(), st.just("500,1000")),
)
def test_any_profile_reads_back_as_measured(name: str, **changes: object) -> None:
    prof = profiles.load(name).model_copy(update=changes)
    assert roundtrip(prof) == prof


def test_a_damaged_stored_profile_reads_as_not_recorded() -> None:
    """A value of the wrong type reads as not recorded (the profile's default), never as a
    crash; a key another sizing's profile held is kept as stored."""
    rec = ProfileDefRecord.parse({"name": "x", "file_size": "big", "future": [1]})
    assert (rec.name, rec.file_size, rec.verbatim_unknown) == ("x", None, {"future": [1]})
    assert ProfileDefRecord.parse(["not", "an", "object"]) == ProfileDefRecord()
