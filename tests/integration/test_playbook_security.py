"""The tool directory on hosts (playbooks/tasks/tool-dir.yml through clients.yml and
vegeta.yml), against this machine with real Ansible: created private to the user the tools
run as, or refused with one line naming the host and the path when another user could
change what root runs. Run under the integration lock (flock /tmp/sizing-integ.lock)."""

from __future__ import annotations

import hashlib
import os
import pwd
import stat
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ansible_runner")

from sizing.provision.ansible import run_playbook  # noqa: E402

pytestmark = [
    pytest.mark.integration,
    pytest.mark.noload,
    pytest.mark.skipif(os.geteuid() != 0, reason="making directories of other users needs root"),
]

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventories" / "local.yml"
NOBODY = pwd.getpwnam("nobody").pw_uid


def clients(tool_dir: Path, playbook: str = "clients.yml", **extra: Any) -> Any:
    return run_playbook(
        playbook,
        INVENTORY,
        extravars={"sizing_tool_dir": str(tool_dir), "sizing_hosts": "localhost", **extra},
        limit=["localhost"],
        timeout=120,
    )


def snapshot(path: Path) -> list[tuple[str, int, int, str]]:
    """Owner, mode and content of a directory tree (without following links)."""
    out = []
    for p in sorted([path, *path.rglob("*")]):
        st = p.lstat()
        body = hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else ""
        out.append((str(p), st.st_uid, stat.S_IMODE(st.st_mode), body))
    return out


COPIES = (
    "Copy the window runner",
    "Copy the wrk report script (latency distribution as one JSON line)",
)


def copied(res: Any) -> list[str]:
    """The copy tasks of clients.yml that ran on localhost (the others were skipped)."""
    assert res.ok, res.problems()
    return [task for task in COPIES if res.result("localhost", task) is not None]


def test_a_new_tool_directory_is_private_idempotent_and_repaired(tmp_path: Path) -> None:
    """Made 0700 with the tools in it; a second run copies nothing (clients.yml compares
    the host's files with the controller's), and a tool whose content, mode or owner was
    changed is copied again."""
    tools = tmp_path / "tools"
    loadgen = tools / "loadgen.py"
    source = (ROOT / "playbooks" / "files" / "loadgen.py").read_bytes()
    assert copied(clients(tools)) == list(COPIES)
    st = tools.lstat()
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700
    assert stat.S_IMODE(loadgen.stat().st_mode) == 0o700
    assert stat.S_IMODE((tools / "wrk_report.lua").stat().st_mode) == 0o600

    again = clients(tools)
    assert copied(again) == []  # the host's files are the controller's: no copy task runs
    assert sum(again.stats.get("changed", {}).values()) == 0, again.stats

    # another content for one tool, another mode for the other: each is copied again
    loadgen.write_bytes(source.replace(b"import", b"import os; os.system('id')\nimport", 1))
    (tools / "wrk_report.lua").chmod(0o644)
    res = clients(tools)
    assert copied(res) == list(COPIES)
    assert sum(res.stats.get("changed", {}).values()) == 2, res.stats
    assert loadgen.read_bytes() == source
    assert stat.S_IMODE((tools / "wrk_report.lua").stat().st_mode) == 0o600

    os.chown(loadgen, NOBODY, NOBODY)  # the same file, owned by another user
    assert copied(clients(tools)) == [COPIES[0]]
    st = loadgen.lstat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o700)
    assert loadgen.read_bytes() == source


def test_a_directory_another_user_made_first_is_refused(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "loadgen.py").write_text("import os; os.system('id > /tmp/pwned')\n")
    os.chown(tools, NOBODY, NOBODY)
    os.chown(tools / "loadgen.py", NOBODY, NOBODY)
    tools.chmod(0o777)
    before = snapshot(tools)
    res = clients(tools)
    assert not res.ok
    why = res.why("localhost")
    assert f"localhost: refusing the tool directory {tools}: " in why
    assert "\n" not in why
    assert "it belongs to nobody" in why
    assert "group or others may write to it (mode 0777)" in why
    assert snapshot(tools) == before  # neither taken nor changed


def test_a_link_to_another_directory_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o755)
    tools = tmp_path / "tools"
    tools.symlink_to(target)
    os.lchown(tools, NOBODY, NOBODY)
    res = clients(tools)
    assert not res.ok
    assert "it is a symbolic link" in res.why("localhost")
    assert stat.S_IMODE(target.stat().st_mode) == 0o755  # never followed
    assert list(target.iterdir()) == []


def test_own_directory_from_an_older_sizing_is_narrowed(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir(mode=0o755)
    tools.chmod(0o755)
    res = clients(tools)
    assert res.ok, res.problems()
    assert stat.S_IMODE(tools.stat().st_mode) == 0o700


def test_own_directory_that_others_could_write_is_refused(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    tools.chmod(0o777)
    res = clients(tools)
    assert not res.ok
    assert "group or others may write to it (mode 0777)" in res.why("localhost")
    assert stat.S_IMODE(tools.stat().st_mode) == 0o777


def test_a_parent_another_user_owns_is_refused(tmp_path: Path) -> None:
    parent = tmp_path / "theirs"
    parent.mkdir()
    os.chown(parent, NOBODY, NOBODY)
    res = clients(parent / "tools")
    assert not res.ok
    assert f"its parent {parent} belongs to nobody" in res.why("localhost")
    assert not (parent / "tools").exists()


def test_vegeta_refuses_the_hostile_directory_too(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    os.chown(tools, NOBODY, NOBODY)
    fake = tmp_path / "vegeta"
    fake.write_text("#!/bin/sh\n")
    res = clients(tools, "vegeta.yml", sizing_vegeta_binary=str(fake))
    assert not res.ok
    assert "it belongs to nobody" in res.why("localhost")
    assert list(tools.iterdir()) == []


def test_the_facts_look_says_when_clients_yml_would_change_nothing(tmp_path: Path) -> None:
    """A run reads each host's tool directory with its facts (facts.yml, changing nothing)
    and runs clients.yml only when a host lacks what clients.yml would put there."""
    from sizing.inventory import load_inventory
    from sizing.provision.ansible import Playbooks
    from sizing.provision.facts import gather_facts
    from sizing.provision.tools import tools_ready

    tools = tmp_path / "tools"
    playbooks = Playbooks(INVENTORY, extravars={"sizing_tool_dir": str(tools)})
    host = load_inventory(INVENTORY).hosts["localhost"]

    def looked() -> Any:
        facts, problems = gather_facts(playbooks, [host], tool_commands=["sh", "no-such-cmd"])
        assert facts["localhost"].tool_dir is not None, problems
        return facts["localhost"]

    assert not tools_ready(looked(), ["sh"]) and not tools.exists()  # looked at, not made
    assert copied(clients(tools)) == list(COPIES)
    facts = looked()
    assert tools_ready(facts, ["sh"])  # what clients.yml left: the next run skips it
    assert not tools_ready(facts, ["sh", "no-such-cmd"])  # a generator to install: it runs
    loadgen = tools / "loadgen.py"
    runner = loadgen.read_bytes()
    loadgen.write_bytes(b"print('an older runner')\n")
    assert not tools_ready(looked(), ["sh"])  # another runner: clients.yml copies it again
    loadgen.write_bytes(runner)
    os.chown(tools / "wrk_report.lua", NOBODY, NOBODY)
    assert not tools_ready(looked(), ["sh"])  # a tool another user owns
