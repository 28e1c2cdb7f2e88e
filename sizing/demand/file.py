"""The demand file (YAML): written by ``sizing demand --out``, read by ``recommend
--demand`` and ``guide --demand``.

Written atomically (:func:`sizing.outfile.write_atomic`); read as untrusted input: at most
:data:`MAX_BYTES`, a regular file, YAML without alias bombs or deep nesting
(:mod:`sizing.yamlfile`), then every field checked (:mod:`sizing.demand.schema`)."""

from __future__ import annotations

import re
import stat
from pathlib import Path

from sizing.demand.model import TrafficDemand, demand_from_dict
from sizing.errors import InputError
from sizing.outfile import write_atomic

__all__ = ["HEADER", "MAX_BYTES", "demand_yaml", "load_demand", "write_demand"]

HEADER = "# sizing demand: the peak demand of the files below\n"
# A demand file holds one hour of per-second counts and a few hundred short lines: 4 MiB is
# far above any that sizing writes, and far below what could hurt to parse.
MAX_BYTES = 4 << 20


def demand_yaml(demand: TrafficDemand) -> str:
    """The demand file's text (YAML), with its provenance."""
    import yaml  # deferred: `sizing demand` without --out never writes YAML

    text = yaml.safe_dump(demand.to_dict(), sort_keys=False, allow_unicode=True, width=100)
    return HEADER + "# for `sizing recommend --demand` and `sizing guide --demand`\n" + text


def write_demand(demand: TrafficDemand, path: Path) -> None:
    """The demand file (YAML), with its provenance, written all at once."""
    write_atomic(path, demand_yaml(demand), "demand file")


def _kind(path: Path) -> str:
    try:
        mode = path.stat().st_mode
    except OSError:
        return ""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return ""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _where_only(problem: str) -> str:
    """A YAML problem as where it is, without the parser's words, which may quote the
    file's content (``duplicate key 'SECRET'``, a tag's name)."""
    if "alias bomb" in problem or "nested deeper" in problem or "characters: too long" in problem:
        return problem  # sizing's own words: they quote nothing
    m = re.match(r"(YAML(?: syntax)?: line \d+, column \d+)", problem)
    if m:
        return f"{m.group(1)}: not valid YAML here (a duplicate key, a tag or a syntax error)"
    if problem.startswith("YAML"):
        return "not valid YAML for a demand file"
    return problem


def load_demand(path: Path) -> TrafficDemand:
    """A demand file as written by ``sizing demand --out``; a bad one is one InputError
    naming the file and the field."""
    kind = _kind(path)
    if kind:
        raise InputError(str(path), [f"is {kind}, not a demand file"])
    from sizing.yamlfile import read_yaml  # deferred: yaml, for the files that read one

    try:
        doc = read_yaml(path, "demand", max_bytes=MAX_BYTES)
    except InputError as exc:  # the parser's words may quote the file (a key, a tag)
        raise InputError(str(path), [_where_only(p) for p in exc.problems]) from None
    try:
        return demand_from_dict(doc)
    except ValueError as exc:  # pydantic's ValidationError is one
        from pydantic import ValidationError

        from sizing.demand.schema import errors_of

        problems = errors_of(exc) if isinstance(exc, ValidationError) else [str(exc)]
        raise InputError(str(path), problems) from None
