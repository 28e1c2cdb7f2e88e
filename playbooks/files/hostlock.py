#!/usr/bin/env python3
"""One sizing run per host at a time: a lock directory on the host (stdlib only).

Run by playbooks/host-lock.yml with ``acquire TOKEN OWNER_JSON STALE_TOKEN [LOCK]`` or
``release TOKEN OWNER_JSON STALE_TOKEN [LOCK]`` (``-``: no stale token); prints one JSON
document. The lock is a directory (LOCK, the host's ``sizing_lock_path``: /run/sizing.lock
unless the inventory names another) made with mkdir (atomic) holding ``owner.json``: the
run's token and who holds it (the controller's machine-id and host name, its PID and process
start time, since when). ``acquire`` by the token that holds it is a no-op; by another token
it reports the holder and the lock and changes nothing, unless STALE_TOKEN names the holder
(the controller found that run's process gone): the stale lock is then taken over.
``release`` removes the lock only for its token. The default directory lives under /run, so
a reboot clears it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict  # noqa: UP035 - Python 3.8 on the hosts evaluates the alias

Doc = Dict[str, Any]  # noqa: UP006

LOCK = "/run/sizing.lock"


def holder(lock: str = LOCK) -> Doc:
    try:
        with open(os.path.join(lock, "owner.json"), encoding="utf-8") as fh:
            got = json.load(fh)
            return got if isinstance(got, dict) else {"token": "", "unreadable": True}
    except (OSError, ValueError):
        return {"token": "", "unreadable": True}


def write_owner(owner: Doc, lock: str = LOCK) -> None:
    path = os.path.join(lock, "owner.json")
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(owner, fh)
    os.replace(path + ".tmp", path)


def acquire(token: str, owner: Doc, stale: str | None, lock: str = LOCK) -> Doc:
    owner = dict(owner, token=token, since=time.time())
    try:
        os.mkdir(lock, 0o700)
    except FileExistsError:
        held = holder(lock)
        if held.get("token") == token:
            return {"acquired": True, "changed": False}
        if stale is None or (held.get("token") or "?") != stale:  # "?": an unreadable owner
            return {"acquired": False, "holder": held, "lock": lock}
    write_owner(owner, lock)
    return {"acquired": True, "changed": True}


def release(token: str, lock: str = LOCK) -> Doc:
    if holder(lock).get("token") != token:
        return {"released": False, "changed": False}
    try:
        os.unlink(os.path.join(lock, "owner.json"))
    except OSError:
        pass
    try:
        os.rmdir(lock)
    except OSError:
        pass
    return {"released": True, "changed": True}


def main() -> None:
    args = sys.argv[1:]
    if len(args) not in (4, 5) or args[0] not in ("acquire", "release"):
        sys.exit("usage: hostlock.py acquire|release TOKEN OWNER_JSON STALE_TOKEN [LOCK]")
    lock = args[4] if len(args) == 5 and args[4] else LOCK
    if args[0] == "acquire":
        out = acquire(args[1], json.loads(args[2]), None if args[3] == "-" else args[3], lock)
    else:
        out = release(args[1], lock)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
