"""The tool directory's default is one path, said once for the playbooks and once for
Python, and every playbook takes it from there."""

from __future__ import annotations

import yaml

from sizing import paths


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
