"""``--resume`` restores every run option and retries points skipped for an unreachable
host; the same machine under two inventory names is refused (issue 16)."""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path

import pytest

from sizing import profiles
from sizing.facts import HostFacts
from sizing.model import Ht, PointKey, PointResult, Status
from sizing.plan.settings import MeasureSettings
from sizing.provision.hostsafety import same_machines
from sizing.store import Store
from sizing.sweep import RunOptions, resume_options, run_options_record
from sizing.sweep.options import done_keys


def test_every_option_is_stored_and_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inv = tmp_path / "inv.yml"
    inv.write_text("all: {}\n")
    custom = profiles.load("rps").model_copy(update={"name": "my-rps", "duration_s": 7})
    given = RunOptions(
        inventory=Path(os.path.relpath(inv)),  # relative: stored absolute
        cores=(1, 2),
        hts=(Ht.ON,),
        profiles=(custom, profiles.load("tps")),
        db=tmp_path / "r.sqlite",
        settings=MeasureSettings(
            duration_s=3,
            warmup_s=1,
            repeat=None,
            max_repeat=7,
            connections=11,
            rates=(100, 200),
            slo="p95=10ms",
            soak_s=60,
        ),
        skip_preflight=True,
        platforms=("baremetal",),
        allow_host_reboot=True,
        insecure=True,
        keep_running=True,
    )
    with Store(given.db) as store:
        run_id = store.start_run(
            inventory=str(given.inventory.resolve()),
            argv=(),
            tool_version="t",
            options=run_options_record(given),
        )
    # From another directory, with nothing but --resume given.
    monkeypatch.chdir("/")
    back = resume_options(
        RunOptions(inventory=Path("x"), cores=(8,), hts=(), profiles=(), db=given.db), run_id
    )
    assert back.inventory == inv.resolve() and back.inventory.is_file()
    assert back.resume_run == run_id
    for f in fields(RunOptions):
        if f.name not in ("inventory", "db", "resume_run", "argv", "debug"):
            assert getattr(back, f.name) == getattr(given, f.name), f.name


def test_resume_retries_points_skipped_for_an_unreachable_host(tmp_path: Path) -> None:
    def key(profile: str) -> PointKey:
        return PointKey("web", "baremetal", 1, "off", profile)

    with Store(tmp_path / "r.sqlite") as store:
        run_id = store.start_run(inventory="i", argv=(), tool_version="t", options={})
        for profile, status, reason in [
            ("rps", Status.MEASURED, ""),
            ("tps", Status.SKIPPED, "web: unreachable: ssh refused"),
            ("latency", Status.SKIPPED, "needs 2 server cores"),
            ("proxy", Status.FAILED, "wrk failed"),
        ]:
            store.add_point(run_id, PointResult(key(profile), status, reason), [])
        assert done_keys(store, run_id) == {key("rps"), key("latency")}


def facts(machine: str, net: str = "net:[1]") -> HostFacts:
    return HostFacts(None, {"machine_id": machine, "net_ns": net})  # type: ignore[arg-type]


def test_the_same_machine_under_two_names_is_one_line() -> None:
    lines = same_machines({"web": facts("abc"), "web-alias": facts("abc"), "load": facts("d")})
    assert len(lines) == 1
    assert lines[0].startswith("web and web-alias are the same machine (machine-id abc")
    # Network namespaces on one kernel (the netns labs) are hosts of their own.
    assert same_machines({"a": facts("abc", "net:[1]"), "b": facts("abc", "net:[2]")}) == []
    assert same_machines({"a": HostFacts(None, {}), "b": HostFacts(None, {})}) == []  # type: ignore[arg-type]


def test_host_lock_script_takes_refuses_takes_over_and_releases(tmp_path: Path) -> None:
    """playbooks/files/hostlock.py (run on hosts by host-lock.yml and run-end.yml)."""
    import importlib.util

    from sizing import paths

    spec = importlib.util.spec_from_file_location("hostlock", paths.PLAYBOOKS / "files/hostlock.py")
    assert spec is not None and spec.loader is not None
    hl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hl)
    lock = str(tmp_path / "lock")  # the host's sizing_lock_path (default /run/sizing.lock)
    assert hl.acquire("t1", {"pid": 1}, None, lock) == {"acquired": True, "changed": True}
    assert hl.acquire("t1", {"pid": 1}, None, lock) == {"acquired": True, "changed": False}
    refused = hl.acquire("t2", {"pid": 2}, None, lock)
    assert refused["acquired"] is False and refused["holder"]["pid"] == 1
    assert refused["lock"] == lock  # the refusal names the directory to remove
    assert hl.acquire("t2", {"pid": 2}, "t-other", lock)["acquired"] is False  # not the holder
    assert hl.acquire("t2", {"pid": 2}, "t1", lock)["acquired"] is True  # t1 gone: taken over
    assert hl.release("t1", lock)["released"] is False  # only the holder releases
    Path(lock, "owner.json").unlink()  # a crash between mkdir and the owner file
    assert hl.acquire("t3", {}, None, lock)["holder"] == {"token": "", "unreadable": True}
    assert hl.acquire("t3", {}, "?", lock)["acquired"] is True
    assert hl.release("t3", lock)["released"] is True and not Path(lock).exists()
    assert not Path(hl.LOCK).exists() or hl.holder()["token"] not in ("t1", "t2", "t3")


def test_every_option_resume_refuses_is_a_run_option() -> None:
    """The refused options come from RunOptions' field declarations: each must name a real
    ``sizing run`` parameter, or --resume would let it through unchecked."""
    import typer

    from sizing.cli import app
    from sizing.sweep.options import resume_refuses

    run = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    params = {p.name for p in run.params}
    refused = {o.replace("-", "_") for o in resume_refuses()}
    assert refused <= params, refused - params
    assert {"cores", "ht", "profile", "duration", "unpaired", "inventory"} <= refused
    assert not {"label", "keep_running", "extra_vars", "db"} & refused
