"""The tool directory's default is one path, said once for the playbooks and once for
Python, and every playbook takes it from there."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from sizing import paths

TOOLDIR = paths.PLAYBOOKS / "files" / "tooldir.py"


def test_python_and_playbooks_agree_on_the_default_tool_dir() -> None:
    data = yaml.safe_load((paths.PLAYBOOKS / "vars" / "tools.yml").read_text())
    assert data == {"sizing_default_tool_dir": paths.TOOL_DIR}


def test_no_playbook_spells_the_default_itself() -> None:
    for f in sorted(paths.PLAYBOOKS.rglob("*.yml")):
        if f.parent.name == "vars":
            continue
        assert paths.TOOL_DIR not in f.read_text(), f


def test_tools_are_private_files() -> None:
    """loadgen.py, vegeta and oha 0700, the wrk and histogram scripts 0600, through
    tasks/tool-dir.yml."""
    for name in ("clients.yml", "vegeta.yml", "oha.yml"):
        plays = yaml.safe_load((paths.PLAYBOOKS / name).read_text())
        tasks = [t for play in plays for t in play.get("tasks", ())]
        play = next(p for p in plays if any("tool_dir" in str(t) for t in p.get("tasks", ())))
        assert play["vars_files"] == ["vars/tools.yml"]
        included = [
            t["ansible.builtin.include_tasks"]
            for t in tasks
            if "ansible.builtin.include_tasks" in t
        ]
        assert included == ["tasks/tool-dir.yml"]
        copies = [t["ansible.builtin.copy"] for t in tasks if "ansible.builtin.copy" in t]
        assert copies and all(c["mode"] in ("0700", "0600") for c in copies)


def test_clients_copies_only_what_differs() -> None:
    """clients.yml copies a tool only when tasks/tool-dir.yml found another file there: the
    condition compares the content, mode and owner of the copy's own source."""
    plays = yaml.safe_load((paths.PLAYBOOKS / "clients.yml").read_text())
    tasks = [t for play in plays for t in play.get("tasks", ())]
    include = next(t for t in tasks if "ansible.builtin.include_tasks" in t)
    copies = [t for t in tasks if "ansible.builtin.copy" in t]
    names = [Path(t["ansible.builtin.copy"]["src"]).name for t in copies]
    assert (
        include["vars"]["tool_dir_files"]
        == names
        == ["loadgen.py", "loadproto.py", "wrk_report.lua"]
    )
    for t in copies:
        copy, when = t["ansible.builtin.copy"], " ".join(t["when"].split())
        name = Path(copy["src"]).name
        assert copy["dest"] == "{{ tool_dir }}/" + name
        assert copy["owner"] == "{{ tool_dir_state.uid }}"
        assert when == (
            f"tool_dir_state.files['{name}'] != {{'type': 'file', 'uid': tool_dir_state.uid, "
            f"'mode': '{copy['mode']}', 'sha1': lookup('ansible.builtin.file', '{copy['src']}', "
            "rstrip=false) | hash('sha1')}"
        )


def tooldir(path: Path, *names: str) -> dict[str, Any]:
    """What files/tooldir.py reports (run as the tool-dir tasks run it)."""
    out = subprocess.run(
        [sys.executable, str(TOOLDIR), str(path), *names],
        capture_output=True,
        text=True,
        check=True,
    )
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def test_tooldir_makes_a_private_directory_and_describes_its_files(tmp_path: Path) -> None:
    tools = tmp_path / "missing-parent" / "tools"
    old = os.umask(0o277)  # mkdir's mode is narrowed by the umask: the script sets 0700
    try:
        made = tooldir(tools, "loadgen.py")
    finally:
        os.umask(old)
    me = os.geteuid()
    assert made["reasons"] == [] and made["error"] == ""
    assert made["created"] and made["changed"] and not made["narrowed"]
    assert made["uid"] == me
    assert made["after"] == {
        "exists": True,
        "isdir": True,
        "islnk": False,
        "uid": me,
        "mode": "0700",
    }
    assert made["files"] == {"loadgen.py": {"type": "missing"}}
    for d in (tools, tools.parent):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700

    (tools / "loadgen.py").write_bytes(b"print(1)\n")
    (tools / "loadgen.py").chmod(0o640)
    (tools / "wrk_report.lua").symlink_to(tmp_path / "elsewhere")
    again = tooldir(tools, "loadgen.py", "wrk_report.lua")
    assert not again["changed"]
    assert again["files"] == {
        "loadgen.py": {
            "type": "file",
            "uid": me,
            "mode": "0640",
            "sha1": hashlib.sha1(b"print(1)\n").hexdigest(),
        },
        "wrk_report.lua": {"type": "link"},
    }


def test_tooldir_narrows_an_own_directory_without_group_or_other_write(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    tools.chmod(0o755)
    res = tooldir(tools)
    assert res["narrowed"] and res["changed"] and not res["created"]
    assert res["after"]["mode"] == "0700" and stat.S_IMODE(tools.stat().st_mode) == 0o700


def test_tooldir_refuses_without_changing_anything(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    tools.chmod(0o775)
    res = tooldir(tools, "loadgen.py")
    assert res["reasons"] == ["group or others may write to it (mode 0775)"]
    assert not res["changed"] and res["files"] == {}
    assert stat.S_IMODE(tools.stat().st_mode) == 0o775

    target = tmp_path / "target"
    target.mkdir(mode=0o755)
    target.chmod(0o755)
    link = tmp_path / "link"
    link.symlink_to(target)
    res = tooldir(link)
    assert res["reasons"][0] == "it is a symbolic link"
    assert res["after"]["islnk"] and not res["changed"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o755  # never followed

    plain = tmp_path / "plain"
    plain.write_text("")
    plain.chmod(0o600)
    assert tooldir(plain)["reasons"] == ["it is not a directory"]

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert tooldir(shared / "tools")["reasons"] == [
        f"others may write to its parent {shared} (mode 0777, no sticky bit)"
    ]
    assert not (shared / "tools").exists()
    shared.chmod(0o1777)  # like /var/tmp: others may not rename or remove what is ours
    assert tooldir(shared / "tools")["created"]


def test_the_look_of_facts_yml_names_what_clients_yml_copies() -> None:
    """What sizing compares (sizing.provision.tools.TOOL_FILES) is what clients.yml copies,
    with its modes, and what facts.yml's look describes: a skipped clients.yml cannot
    leave a file out."""
    from sizing.provision.tools import TOOL_FILES

    plays = yaml.safe_load((paths.PLAYBOOKS / "clients.yml").read_text())
    copies = [
        t["ansible.builtin.copy"] for p in plays for t in p["tasks"] if "ansible.builtin.copy" in t
    ]
    assert {Path(c["src"]).name: c["mode"] for c in copies} == TOOL_FILES
    (facts,) = yaml.safe_load((paths.PLAYBOOKS / "facts.yml").read_text())
    assert facts["vars_files"] == ["vars/tools.yml"]
    look = next(
        t for t in facts["tasks"] if t["name"] == "Look at the tool directory without changing it"
    )
    cmd = look["ansible.builtin.script"]["cmd"].split()
    assert cmd[:2] == ["files/tooldir.py", "--look"] and cmd[-3:] == list(TOOL_FILES)
    assert look["changed_when"] is False and look["failed_when"] is False


def look(path: Path, *commands: str) -> str:
    """What files/tooldir.py --look prints (the facts.yml task)."""
    from sizing.provision.tools import TOOL_FILES

    names = list(TOOL_FILES)
    argv = [sys.executable, str(TOOLDIR), "--look", "--commands", ",".join(commands), str(path)]
    return subprocess.run([*argv, *names], capture_output=True, text=True, check=True).stdout


def test_the_look_changes_nothing(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    missing = json.loads(look(tools, "sh", "no-such-generator"))
    assert not tools.exists() and not missing["changed"] and missing["files"] == {}
    assert missing["commands"] == {"sh": True, "no-such-generator": False}
    tools.mkdir()
    tools.chmod(0o755)
    wide = json.loads(look(tools))
    assert not wide["narrowed"] and wide["after"]["mode"] == "0755"
    assert stat.S_IMODE(tools.stat().st_mode) == 0o755


def test_tools_are_ready_only_when_clients_yml_would_change_nothing(tmp_path: Path) -> None:
    from sizing.facts import HostFacts, ToolDir
    from sizing.provision.facts import declared_topology
    from sizing.provision.tools import TOOL_FILES, tools_ready

    one_cpu = declared_topology(1, 1, 1)

    def ready(*commands: str, have: tuple[str, ...] = ("sh",)) -> bool:
        facts = HostFacts(one_cpu, {}, tool_dir=ToolDir.parse(look(tools, *have)))
        return tools_ready(facts, commands)

    tools = tmp_path / "tools"
    tooldir(tools)  # made as clients.yml makes it, then the files copied as it copies them
    for name, mode in TOOL_FILES.items():
        (tools / name).write_bytes((paths.PLAYBOOKS / "files" / name).read_bytes())
        (tools / name).chmod(int(mode, 8))
    assert ready("sh") and ready()  # a server needs no generator
    assert not ready("sh", have=())  # a generator not looked for is not there
    assert not ready("no-such-generator", have=("no-such-generator",))
    (tools / "wrk_report.lua").chmod(0o644)
    assert not ready()  # another mode
    (tools / "wrk_report.lua").chmod(0o600)
    (tools / "loadproto.py").write_bytes(b"# an older sizing's protocol\n")
    assert not ready()  # another content
    (tools / "loadproto.py").write_bytes((paths.PLAYBOOKS / "files" / "loadproto.py").read_bytes())
    assert ready()
    tools.chmod(0o755)
    assert not ready()  # not private
    assert not tools_ready(None, ()) and not tools_ready(HostFacts(one_cpu, {}), ())


def test_guest_image_secrets_are_0600() -> None:
    plays = yaml.safe_load((paths.PLAYBOOKS / "guest-image.yml").read_text())
    tasks = plays[0]["tasks"]
    private = next(
        t for t in tasks if t["name"].startswith("Keep the disk image and the login key private")
    )
    assert private["ansible.builtin.file"]["mode"] == "0600"
    assert private["loop"] == ["root.img", "id_ed25519"]
    names = [t["name"] for t in tasks]
    # the empty image is made 0600 before mke2fs writes the keys into it
    assert names.index("Create the new disk image file private to root") < names.index(
        "Build the ext4 root filesystem image from the directory"
    )
