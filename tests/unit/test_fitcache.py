"""The bootstrap cache beside the results database: filled at the end of a run (``warm``),
read by ``recommend`` without recomputing, and harmless when it cannot be written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sizing.engine import predict
from sizing.sources import fitcache
from tests.unit.test_sources import ENV, fill, point


def _db(tmp_path: Path) -> Path:
    db = tmp_path / "sizing.sqlite"
    figures = [(1, 30000.0), (2, 57000.0), (4, 100000.0)]
    fill(
        db,
        {"r640-01": ENV["r640-01"]},
        [point("r640-01", "baremetal", n, "rps", [v * 0.99, v, v * 1.01]) for n, v in figures],
    )
    return db


def test_warm_fills_the_cache_and_later_reads_never_recompute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _db(tmp_path)
    fitcache.warm(db)
    cache = fitcache.cache_path(db)
    entries = json.loads(cache.read_text())
    assert len(entries) == 1 and len(next(iter(entries.values()))["params"]) == predict.DRAWS

    def never(*_: object) -> None:
        raise AssertionError("recomputed a cached bootstrap")

    monkeypatch.setattr(fitcache, "bootstrap", never)
    boot = fitcache.cached_bootstrapper(db)
    counts = [(n, (v * 0.99, v, v * 1.01)) for n, v in ((1, 30000.0), (2, 57000.0), (4, 100000.0))]
    got = boot(counts)
    assert got == predict.bootstrap(counts)  # the same draws as computing them afresh


def test_an_unwritable_or_corrupt_cache_is_only_recomputed(tmp_path: Path) -> None:
    db = _db(tmp_path)
    fitcache.cache_path(db).write_text("{not json")
    boot = fitcache.cached_bootstrapper(db)
    counts = [(1, (1.0, 2.0, 3.0)), (2, (2.0, 3.0, 4.0)), (4, (5.0, 6.0, 7.0))]
    assert not boot(counts).empty
    nowhere = fitcache.cached_bootstrapper(tmp_path / "missing-dir" / "sizing.sqlite")
    assert not nowhere(counts).empty  # no directory to write in: computed, not cached
    fitcache.warm(tmp_path / "missing-dir" / "sizing.sqlite")  # nothing there: no error


READ_ONLY = [
    ["recommend", "--rps", "200000", "--basis", "localhost", "--article-prices"],
    ["recommend", "--rps", "200000", "--source", "reference"],
    ["results"],
    ["results", "--bases"],
    ["table"],
    ["--help"],
    ["guide", "--format", "md", "--out", "{tmp}/guide.md"],
]


@pytest.mark.parametrize("argv", READ_ONLY, ids=lambda a: " ".join(a[:2]))
def test_read_only_commands_on_a_real_run_record_import_nothing_they_do_not_use(
    tmp_path: Path, argv: list[str]
) -> None:
    """A run records what its inventory declared (an empty entry too), so read-only
    commands never re-read the inventory through Ansible (issue 26's cause of a 0.8 s
    recommend), and none imports the guide's PDF stack, libvirt or pyVmomi. Checked in a
    child process: sys.modules after the command. Without the recorded entry the same run
    imports Ansible once (the migration test below)."""
    import subprocess
    import sys

    from sizing import paths

    db = tmp_path / "sizing.sqlite"
    env_rec = {"localhost": {**ENV["localhost"], "declared": {}}}
    fill(
        db,
        env_rec,
        [point("localhost", "baremetal", 1, "rps", [9.0e4, 9.1e4, 9.2e4])],
        inventory=str(paths.INVENTORIES / "local.yml"),
    )
    args = [a.format(tmp=tmp_path) for a in argv]
    code = (
        "import sys\n"
        "from sizing.cli import main\n"
        f"sys.argv = ['sizing', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\nelse:\n    code = 0\n"
        "heavy = ('ansible', 'ansible_runner', 'matplotlib', 'weasyprint', 'libvirt', 'pyVmomi')\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & set(heavy))\n"
        "print('EXIT', code or 0, 'LOADED', ','.join(loaded) or '-')\n"
    )
    env = {"SIZING_DB": str(db), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.stdout.strip().endswith("EXIT 0 LOADED -"), done.stdout[-2000:] + done.stderr


def test_a_run_recorded_without_its_declared_entry_is_migrated_once(tmp_path: Path) -> None:
    """A run recorded before the sweep kept what the inventory declares: the first
    read-only command reads the inventory (through Ansible) and writes the entry back to
    the store; every later one reads the record only. The price still comes from the
    inventory and says so."""
    import subprocess
    import sys

    from sizing.store import Store

    inv = tmp_path / "priced.yml"
    inv.write_text(
        "all:\n  vars:\n    ansible_connection: local\n  children:\n    servers:\n"
        "      hosts:\n        localhost:\n          sizing_platform: baremetal\n"
        "          sizing_price_usd: 1234\n    clients:\n      hosts:\n        localhost: {}\n"
    )
    db = tmp_path / "sizing.sqlite"
    run_id = fill(
        db,
        {"localhost": ENV["localhost"]},  # no "declared" entry: an old run
        [point("localhost", "baremetal", 1, "rps", [9.0e4, 9.1e4, 9.2e4])],
        inventory=str(inv),
    )
    code = (
        "import json, sys\n"
        "from sizing.cli import main\n"
        "sys.argv = ['sizing', 'recommend', '--rps', '200000', '--basis', 'localhost', '--json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = any(m.split('.')[0] == 'ansible' for m in sys.modules)\n"
        "print('ANSIBLE' if loaded else 'CLEAN')\n"
    )
    env = {"SIZING_DB": str(db), "PATH": "/usr/bin:/bin"}

    def recommend() -> tuple[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
        )
        out = done.stdout.strip()
        return out.rsplit("\n", 1)[-1], out

    first, out1 = recommend()
    assert first == "ANSIBLE", out1  # the migration read the inventory, once
    with Store.open_readonly(db) as store:
        recorded = store.get_run(run_id).environment["localhost"]
    assert recorded.declared is not None and recorded.declared.sizing_price_usd == 1234
    assert recorded.cpu_model == ENV["localhost"]["cpu_model"]  # the facts are kept
    second, out2 = recommend()
    assert second == "CLEAN", out2
    doc = json.loads(out2.rsplit("\n", 1)[0])
    (basis,) = doc["basis"]["bases"]
    assert [o["price"] for o in basis["price"]["offers"]] == [1234], basis
    assert f"inventory {inv}" in json.dumps(basis["price"])
    assert json.loads(out1.rsplit("\n", 1)[0]) == doc  # the same answer before and after
