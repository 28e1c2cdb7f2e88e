"""The ``doctor`` command: is every program sizing calls on this machine?"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from sizing.cli.app import columns, emit_json
from sizing.cli.options import JsonOpt
from sizing.errors import ExitStatus

if TYPE_CHECKING:
    from sizing.app.doctor import Finding

DevOpt = Annotated[
    bool,
    typer.Option(
        "--dev",
        help="Also check what the tests and the other platform legs need (podman, libvirt, "
        "vcsim, poppler, ...), as `make test` does first.",
    ),
]


def doctor_cmd(dev: DevOpt = False, json_out: JsonOpt = False) -> None:
    """Check each external program and capability sizing calls (nginx, the load generators,
    openssl, taskset, numactl, the guide's Pango and fonts; with --dev podman and its init, runc,
    libvirtd, QEMU, vcsim, poppler): one line each, its version or what installs it. Exits
    5 when something needed is missing (the latency generators only warn without --dev:
    `sizing run` builds them on first need)."""
    from sizing.app.doctor import Need, State, diagnose

    needs = [Need.RUN, Need.GUIDE, Need.LATENCY] + ([Need.DEV] if dev else [])
    found = diagnose(needs)
    if json_out:
        emit_json({"checks": [f.to_json() for f in found]})
    else:
        for line in doctor_lines(found, columns()):
            typer.echo(line)
    # without --dev a latency generator only warns; built on first need, it is no fault
    fatal = [
        f
        for f in found
        if (f.state is State.MISSING and (dev or f.need is not Need.LATENCY))
        or (f.state is State.ON_NEED and dev)
    ]
    if fatal:
        typer.echo(f"doctor: {len(fatal)} missing: " + ", ".join(f.name for f in fatal), err=True)
        raise typer.Exit(int(ExitStatus.TOOL))


# the states (sizing.app.doctor.State, a StrEnum) as printed
_MARK = {"ok": "ok", "missing": "MISSING", "building": "building", "on need": "on need"}


def doctor_lines(found: Sequence[Finding], width: int = 100) -> list[str]:
    """``ok       nginx  1.22.1``, or ``MISSING  podman --init (catatonit)  ... : fix``,
    folded at ``width`` with the continuation indented under the detail."""
    name_w = max((len(f.name) for f in found), default=0)
    lines: list[str] = []
    for f in found:
        head = f"{_MARK[f.state]:<8} {f.name:<{name_w}}  "
        text = f.detail if f.state == "ok" else f"{f.detail}; {f.fix}"
        if f.state == "building":
            text = f"{f.detail}; a background job builds it now (scripts/bg wait)"
        lines += folded(head, text, width)
    return lines


def folded(head: str, text: str, width: int) -> list[str]:
    """``head`` then ``text`` folded at ``width`` under it, never breaking a word (a
    script's name or a path): a word longer than the room under ``head`` starts its own
    line at the margin instead, so every line fits ``width`` when every word does."""
    room = max(20, width - len(head))
    body = textwrap.wrap(text, room, break_long_words=False, break_on_hyphens=False) or [""]
    out: list[str] = []
    indent = " " * len(head)
    for i, part in enumerate(body):
        lead = head if i == 0 else indent
        if len(lead) + len(part) <= width:
            out.append(lead + part)
            continue
        if i == 0:
            out.append(head.rstrip())  # the name alone; what it found goes under it
        if len(indent) + len(part) <= width:
            out.append(indent + part)
        else:
            out += textwrap.wrap(part, width, break_long_words=False, break_on_hyphens=False)
    return out
