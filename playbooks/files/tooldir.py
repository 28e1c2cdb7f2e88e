#!/usr/bin/env python3
"""Make sizing's tool directory private to the user this runs as, or say why not (stdlib only).

Run on every host by playbooks/tasks/tool-dir.yml (``tooldir.py TOOL_DIR [NAME ...]``), as
the user the tools run as. It prints one JSON document and changes nothing when the
directory is refused; the playbook turns ``reasons``, ``error`` and ``after`` into its
refusals:

    uid      the user this runs as (the tools' owner)
    reasons  why the directory is refused, checked before anything is made: a link, not a
             directory, another owner, writable by group or others, a parent that belongs
             to someone other than root or this user, or that others may write without the
             sticky bit
    error    why the directory could not be made ("" when it could)
    created  the directory (or a missing parent of it) was made, mode 0700
    narrowed an own directory without group or other write (an older sizing made it 0755)
             was set to 0700
    changed  created or narrowed
    after    the directory looked at again after that: exists, isdir, islnk, uid, mode
    files    NAME -> {type: file|missing|link|other, uid, mode, sha1} for each NAME in the
             directory, so that the playbook copies only what differs

``tooldir.py --look [--commands NAME,...] TOOL_DIR [NAME ...]`` (the task of
playbooks/facts.yml that a run asks for) makes and narrows nothing: it reports the same
document for the directory as it is, and ``commands``: each NAME -> whether it is on PATH.
sizing skips playbooks/clients.yml when that shows every host ready.

Links are never followed: lstat, mkdir with the mode and then fchmod through a descriptor
opened with O_NOFOLLOW, and the files are read through O_NOFOLLOW descriptors.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import stat
import sys
from typing import Any

WRITABLE = stat.S_IWGRP | stat.S_IWOTH
OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def lstat(path: str) -> os.stat_result | None:
    """The path's own status (a link is not followed); None when it does not exist."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def mode(st: os.stat_result) -> str:
    """The permission bits as the stat module gives them ('0700', '1777')."""
    return f"{stat.S_IMODE(st.st_mode):04o}"


def refusals(
    path: str, parent: str, me: int, st: os.stat_result | None, pst: os.stat_result | None
) -> list[str]:
    """Why another user could change what is in ``path`` (the playbook's wording)."""
    out: list[str] = []
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            out.append("it is a symbolic link")
        elif not stat.S_ISDIR(st.st_mode):
            out.append("it is not a directory")
        if st.st_uid != me:
            out.append(f"it belongs to {user(st.st_uid)} (uid {st.st_uid})")
        if st.st_mode & WRITABLE:
            out.append(f"group or others may write to it (mode {mode(st)})")
    if pst is not None:
        if pst.st_uid not in (0, me):
            out.append(f"its parent {parent} belongs to {user(pst.st_uid)}")
        if pst.st_mode & WRITABLE and not pst.st_mode & stat.S_ISVTX:
            out.append(f"others may write to its parent {parent} (mode {mode(pst)}, no sticky bit)")
    return out


def private(path: str, me: int, before: os.stat_result | None) -> bool:
    """Set the directory at ``path`` (not a link) to 0700 when it is this user's and
    ``before`` (its lstat before, None when it was just made) is still what is there.
    Returns True when the mode changed."""
    fd = os.open(path, OPEN_DIR)
    try:
        st = os.fstat(fd)
        if st.st_uid != me or stat.S_IMODE(st.st_mode) == 0o700:
            return False
        if before is not None and (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            return False  # swapped since it was checked: the check after refuses it
        os.fchmod(fd, 0o700)
        return True
    finally:
        os.close(fd)


def make(path: str, me: int) -> bool:
    """Make ``path`` and any missing parent of it, each mode 0700. Returns True when
    anything was made here (False when something appeared at ``path`` first)."""
    parent = os.path.dirname(path)
    made = parent != path and lstat(parent) is None and make(parent, me)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        return made
    private(path, me, None)  # the umask may have taken bits away
    return True


def after(path: str) -> dict[str, Any]:
    st = lstat(path)
    if st is None:
        return {"exists": False, "isdir": False, "islnk": False, "uid": -1, "mode": ""}
    return {
        "exists": True,
        "isdir": stat.S_ISDIR(st.st_mode),
        "islnk": stat.S_ISLNK(st.st_mode),
        "uid": st.st_uid,
        "mode": mode(st),
    }


def describe(path: str) -> dict[str, Any]:
    """A file of the tool directory: its type, owner, mode and SHA-1 (links not followed)."""
    try:
        fd = os.open(path, OPEN_FILE)
    except FileNotFoundError:
        return {"type": "missing"}
    except OSError:  # ELOOP: a link
        st = lstat(path)
        kind = "link" if st is not None and stat.S_ISLNK(st.st_mode) else "other"
        return {"type": kind}
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return {"type": "other", "uid": st.st_uid, "mode": mode(st)}
        digest = hashlib.sha1()
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return {"type": "file", "uid": st.st_uid, "mode": mode(st), "sha1": digest.hexdigest()}


def main(argv: list[str]) -> None:
    args = argv[1:]
    look = bool(args) and args[0] == "--look"
    commands: list[str] = []
    if look:
        args = args[1:]
        if args[:1] == ["--commands"]:
            commands = [c for c in args[1].split(",") if c]
            args = args[2:]
    path = args[0].rstrip("/") or "/"
    parent = os.path.dirname(path)
    me = os.geteuid()
    st, pst = lstat(path), lstat(parent)
    reasons = refusals(path, parent, me, st, pst)
    error = ""
    created = narrowed = False
    if not reasons and not look:
        try:
            if st is None:
                created = make(path, me)
            else:
                narrowed = private(path, me, st)
        except OSError as exc:
            error = exc.strerror or str(exc)
            if exc.filename:
                error += f" ({exc.filename})"
    now = after(path)
    ok = now["isdir"] and now["uid"] == me and now["mode"] == "0700"
    names = args[1:] if ok and not reasons and not error else []
    out: dict[str, Any] = {
        "uid": me,
        "reasons": reasons,
        "error": error,
        "created": created,
        "narrowed": narrowed,
        "changed": created or narrowed,
        "after": now,
        "files": {name: describe(os.path.join(path, name)) for name in names},
    }
    if look:
        out["commands"] = {c: shutil.which(c) is not None for c in commands}
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
