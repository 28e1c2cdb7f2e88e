#!/usr/bin/env python3
"""One sizing run per host at a time: a lock directory on the host (stdlib only).

Run by playbooks/host-lock.yml with ``acquire TOKEN OWNER_JSON STALE_TOKEN`` or ``release
TOKEN OWNER_JSON STALE_TOKEN`` (``-``: no stale token); prints one JSON document. The lock
is a directory made with mkdir (atomic) holding ``owner.json``: the run's token and who
holds it (the controller's machine-id and host name, its PID and process start time, since
when). ``acquire`` by the token that holds it is a no-op; by another token it reports the
holder and changes nothing, unless STALE_TOKEN names the holder (the controller found that
run's process gone): the stale lock is then taken over. ``release`` removes the lock only
for its token. The directory lives under /run, so a reboot clears it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict  # noqa: UP035 - Python 3.8 on the hosts evaluates the alias

Doc = Dict[str, Any]  # noqa: UP006

LOCK = "/run/sizing.lock"
OWNER = os.path.join(LOCK, "owner.json")


def holder() -> Doc:
    try:
        with open(OWNER, encoding="utf-8") as fh:
            got = json.load(fh)
            return got if isinstance(got, dict) else {"token": "", "unreadable": True}
    except (OSError, ValueError):
        return {"token": "", "unreadable": True}


def write_owner(owner: Doc) -> None:
    tmp = OWNER + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(owner, fh)
    os.replace(tmp, OWNER)


def acquire(token: str, owner: Doc, stale: str | None) -> Doc:
    owner = dict(owner, token=token, since=time.time())
    try:
        os.mkdir(LOCK, 0o700)
    except FileExistsError:
        held = holder()
        if held.get("token") == token:
            return {"acquired": True, "changed": False}
        if stale is None or (held.get("token") or "?") != stale:  # "?": an unreadable owner
            return {"acquired": False, "holder": held}
    write_owner(owner)
    return {"acquired": True, "changed": True}


def release(token: str) -> Doc:
    if holder().get("token") != token:
        return {"released": False, "changed": False}
    for path in (OWNER, LOCK):
        try:
            if path == OWNER:
                os.unlink(path)
            else:
                os.rmdir(path)
        except OSError:
            pass
    return {"released": True, "changed": True}


def main() -> None:
    args = sys.argv[1:]
    if len(args) != 4 or args[0] not in ("acquire", "release"):
        sys.exit("usage: hostlock.py acquire|release TOKEN OWNER_JSON STALE_TOKEN")
    if args[0] == "acquire":
        out = acquire(args[1], json.loads(args[2]), None if args[3] == "-" else args[3])
    else:
        out = release(args[1])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
