"""``sizing demand``: a customer's logs or counters read into a demand, written to the
demand file when asked (:mod:`sizing.demand` does the reading)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sizing.demand.file import HEADER, demand_yaml, load_demand, write_demand
from sizing.demand.formats import COMBINED, compile_format, format_from_conf
from sizing.demand.logs import read_logs
from sizing.demand.mix import parse_assumptions, role_of
from sizing.demand.model import PEAKS, TrafficDemand
from sizing.demand.sized import sized_figures
from sizing.errors import UsageError
from sizing.outfile import check_target, refuse_inputs

__all__ = [
    "PEAKS",
    "DemandRequest",
    "TrafficDemand",
    "demand_yaml",
    "derive",
    "load_demand",
    "sized_figures",
]


@dataclass(frozen=True)
class DemandRequest:
    """What ``sizing demand`` was asked: the files, how to read them, where to write."""

    files: tuple[Path, ...]
    log_format: str | None = None
    escape: str = "default"
    nginx_conf: Path | None = None
    log_name: str | None = None
    counters: bool = False
    out: Path | None = None
    role: str | None = None  # --role: what NGINX does with the requests (logs cannot tell)
    assume: tuple[str, ...] = ()  # --assume NAME=VALUE: a figure the input lacks
    assume_source: str | None = None

    @property
    def to_file(self) -> bool:
        """Whether the demand file is written to a file (``--out -``: to stdout, by the
        command, as ``guide --out -`` writes the guide)."""
        return self.out is not None and str(self.out) != "-"


def derive(req: DemandRequest) -> TrafficDemand:
    """The demand of the request's files (and the demand file written when ``out``).

    Before anything is read: ``out`` must not be one of the inputs (a log, the nginx.conf)
    and must be writable; the demand file is then written all at once."""
    if not req.files:
        raise UsageError("give at least one log or counters file")
    role, role_source = role_of(req.role)
    assumed = parse_assumptions(req.assume, req.assume_source)
    if req.to_file:
        assert req.out is not None
        inputs = [*req.files, *([req.nginx_conf] if req.nginx_conf else [])]
        refuse_inputs(req.out, inputs, "--out")
        check_target(req.out, "demand file")
        if req.out.exists() and not _is_demand_file(req.out):
            raise UsageError(
                f"--out {req.out}: exists and is not a demand file: it would be overwritten;"
                " write elsewhere or remove it first"
            )
    if req.counters:
        if req.log_format or req.nginx_conf:
            raise UsageError("--counters reads counter samples: no --log-format to give")
        from sizing.demand.counted import read_counters  # deferred: --counters alone

        demand = read_counters(list(req.files), role=role, role_source=role_source, assumed=assumed)
    else:
        given = req.log_format is not None or req.nginx_conf is not None
        if req.log_format is not None and req.nginx_conf is not None:
            raise UsageError("give --log-format or --nginx-conf, not both")
        if req.nginx_conf is not None:
            fmt = format_from_conf(req.nginx_conf, req.log_name or "combined")
        elif req.log_format is not None:
            fmt = compile_format(req.log_format, escape=req.escape, name="the given format")
        else:
            fmt = compile_format(COMBINED, name="the combined format")
        demand = read_logs(
            list(req.files), fmt, given=given, role=role, role_source=role_source, assumed=assumed
        )
    if req.to_file:
        assert req.out is not None
        write_demand(demand, req.out)
    return demand


def _is_demand_file(path: Path) -> bool:
    """Whether ``path`` starts as sizing writes a demand file (it may be replaced)."""
    try:
        with path.open("rb") as f:
            return f.read(len(HEADER)).decode("utf-8", "replace") == HEADER
    except OSError:
        return False
