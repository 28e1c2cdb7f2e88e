"""Issue 62's width rule for ``sizing probe-ceiling``: a host's line and the catalog entry
it prints fit 100 columns whatever the CPU model and host name, and the entry, pasted under
a catalog's ``ceilings:``, is what the catalog reads (a quote in a name included)."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.app.ceiling import Probed
from sizing.catalog import load_catalog_data
from sizing.cli.ceiling_cmd import _text

WORDS = (
    st.text(
        alphabet=st.characters(whitelist_categories=("L", "N"), whitelist_characters="()@.-' "),
        min_size=1,
        max_size=90,
    )
    .map(str.strip)
    .filter(bool)
)


def _probed(host: str, model: str, ht: float | None) -> Probed:
    return Probed(host, model, "OpenSSL 3.0.19 27 Jan 2026", "rsa2048", 4136.0, ht, "0", 2.1, "")


@settings(max_examples=60, deadline=None)
@given(
    host=st.from_regex(r"[a-z][a-z0-9.-]{0,70}", fullmatch=True),
    model=WORDS,
    ht=st.none() | st.floats(1, 1e6),
)
def test_every_line_fits_and_the_entry_reads_back(host: str, model: str, ht: float | None) -> None:
    text = _text([_probed(host, model, ht)], "rsa2048")
    assert all(len(line) <= 100 or " " not in line.strip() for line in text.splitlines())
    entry = text.split("for recommend --cpu:\n", 1)[1]
    (got,) = yaml.safe_load(entry)["ceilings"]
    assert got["cpu_model"] == model and got["sign_per_core"] == 4136.0
    assert got.get("sign_per_core_ht") == ht and got["source"].endswith(")")


def test_a_long_cpu_model_is_folded_and_the_catalog_takes_the_entry(tmp_path: Path) -> None:
    model = "Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz with a vendor's long 'suffix'"
    host = "nginx-perf-lab-rack42-poweredge-r760xs-01.example"
    text = _text([_probed(host, model, 9000)], "rsa2048")
    assert max(len(line) for line in text.splitlines()) <= 100
    cat = tmp_path / "cat.yml"
    entry = text.split("for recommend --cpu:\n", 1)[1]
    cat.write_text("kind: catalog\nname: t\nservers:\n  - {cores: 8, price: 1}\n" + entry + "\n")
    (ceiling,) = load_catalog_data(cat)["ceilings"]  # validated as a user's catalog
    assert ceiling["cpu_model"] == model and ceiling["sign_per_core"] == 4136.0
