"""A customer's demand from their own traffic: NGINX access logs (any ``log_format``,
JSON, gzip'd and rotated, several servers summed per second) and counters (stub_status,
the NGINX Plus API, Prometheus text) read in bounded memory into the per-second peak,
its percentiles, connections, full TLS handshakes and the traffic's shape; written to and
read from the demand file that ``recommend --demand`` and ``guide --demand`` size for.

Pure reading: it imports nothing of sizing but :mod:`sizing.errors` and
:mod:`sizing.yamlfile`."""

from __future__ import annotations

from pathlib import Path

import yaml

from sizing.demand.counted import read_counters
from sizing.demand.formats import COMBINED, LogFormat, compile_format, format_from_conf
from sizing.demand.logs import read_logs
from sizing.demand.model import PEAKS, TrafficDemand, demand_from_dict
from sizing.errors import InputError
from sizing.yamlfile import read_yaml

__all__ = [
    "COMBINED",
    "PEAKS",
    "TrafficDemand",
    "LogFormat",
    "compile_format",
    "format_from_conf",
    "load_demand",
    "read_counters",
    "read_logs",
    "write_demand",
]


def write_demand(demand: TrafficDemand, path: Path) -> None:
    """The demand file (YAML), with its provenance."""
    text = yaml.safe_dump(demand.to_dict(), sort_keys=False, allow_unicode=True, width=100)
    path.write_text(
        "# sizing demand: the peak demand of the files below\n"
        "# for `sizing recommend --demand` and `sizing guide --demand`\n" + text
    )


def load_demand(path: Path) -> TrafficDemand:
    """A demand file as written by ``sizing demand --out``; a bad one is one InputError."""
    doc = read_yaml(path, "demand file")
    try:
        return demand_from_dict(doc)
    except (KeyError, TypeError, ValueError, AssertionError) as exc:
        raise InputError(str(path), [f"not a sizing demand file: {exc}"]) from None
