"""A profile read without pydantic (:mod:`sizing.profile_facts`, issue 60) is one the
pydantic model accepts, with the same values: over every bundled profile, and over
documents generated from them with one field changed, added or left out (the model
decides every document the plain checks do not vouch for)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizing import paths, profiles
from sizing.profile_facts import FIELDS, ProfileFacts, bundled_facts, facts_of, fast_facts
from sizing.yamlfile import read_yaml

BUNDLED = sorted(f.stem for f in paths.PROFILES.glob("*.yml") if f.stem in profiles.available())
DUMPS = [profiles.load(n).model_dump() for n in BUNDLED]

# values that sit on the edges of the model's rules: other types, bounds, patterns
ODD: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    3,
    100,
    128,
    600,
    3600,
    3601,
    100000,
    100001,
    1 << 40,
    (1 << 40) + 1,
    1.0,
    1.5,
    128.0,
    0.5,
    3600.5,
    math.inf,
    -math.inf,
    math.nan,
    "",
    "1",
    "128",
    "workload",
    "web",
    "proxy",
    "load-balance",
    "api-jwt",
    "static",
    "http",
    "https",
    "ftp",
    "rsa2048",
    "ecdsa-p256",
    "rsa4096",
    "max-rate",
    "fixed-rate",
    "wrk",
    "Wrk",
    "wrk\n",
    "/128b",
    "128b",
    "/a b",
    "/ok/",
    "TLSv1.2",
    "TLSv1.2 TLSv1.3",
    "TLSv1.4",
    "TLSv1.2\n",
    "rps",
    "a" * 64,
    "a" * 65,
    "-a",
    "x\x01y",
    "line\nbreak",
    "x\x85",
    "requests_per_second",
    "handshakes_per_second",
    [],
    {},
    b"bytes",
]


def _same(doc: Any) -> None:
    """The fast reading, where it reads, is the model's; :func:`facts_of` is the model's
    verdict either way."""
    try:
        valid: ProfileFacts | None = ProfileFacts.of(profiles.Profile.model_validate(doc))
    except ValueError:
        valid = None
    fast = fast_facts(doc)
    if fast is not None:
        assert valid == fast, doc
    assert facts_of(doc) == valid


def test_the_checks_cover_every_field_of_the_model() -> None:
    model = profiles.Profile.model_fields
    assert set(FIELDS) == set(model)
    assert {k for k, (required, _) in FIELDS.items() if required} == {
        k for k, f in model.items() if f.is_required()
    }


@pytest.mark.parametrize("name", BUNDLED)
def test_every_bundled_profile_is_read_without_the_model(name: str) -> None:
    """The fast path is the path: the bundled files and what a run stores of them."""
    want = ProfileFacts.of(profiles.load(name))
    assert fast_facts(read_yaml(paths.PROFILES / f"{name}.yml", "profile")) == want
    assert fast_facts(profiles.load(name).model_dump()) == want
    assert bundled_facts(name) == want


def test_every_one_field_change_reads_as_the_model_reads_it() -> None:
    """Each bundled profile with each field set to each edge value, or left out."""
    for base in DUMPS:
        for field in [*FIELDS, "extra", 1]:
            for value in ODD:
                _same({**base, field: value})
            _same({k: v for k, v in base.items() if k != field})


@given(
    base=st.sampled_from(DUMPS),
    changes=st.lists(
        st.tuples(st.sampled_from(sorted(FIELDS)), st.sampled_from([*ODD, "drop"])),
        max_size=3,
    ),
)
def test_a_document_changed_in_several_fields_reads_as_the_model_reads_it(
    base: dict[str, Any], changes: list[tuple[str, Any]]
) -> None:
    doc = dict(base)
    for field, value in changes:
        if isinstance(value, str) and value == "drop":
            doc.pop(field, None)
        else:
            doc[field] = value
    _same(doc)


@given(doc=st.one_of(st.none(), st.integers(), st.lists(st.integers()), st.text()))
def test_a_document_that_is_no_mapping_is_refused(doc: Any) -> None:
    assert fast_facts(doc) is None and facts_of(doc) is None


def test_a_bad_bundled_file_says_what_the_model_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bundled file the checks cannot vouch for is loaded by the model, which raises its
    own error naming the file and the field."""
    (tmp_path / "odd.yml").write_text(
        "kind: workload\nname: odd\ndescription: d\nmetric: requests_per_second\n"
        "unit: requests/s\nscheme: gopher\n"
    )
    monkeypatch.setattr(paths, "PROFILES", tmp_path)
    with pytest.raises(Exception, match="scheme") as err:
        bundled_facts("odd")
    assert "odd.yml" in str(err.value)
