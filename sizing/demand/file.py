"""The demand file (YAML): written by ``sizing demand --out``, read by ``recommend
--demand`` and ``guide --demand``."""

from __future__ import annotations

from pathlib import Path

import yaml

from sizing.demand.model import TrafficDemand, demand_from_dict
from sizing.errors import InputError
from sizing.yamlfile import read_yaml

__all__ = ["load_demand", "write_demand"]


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
