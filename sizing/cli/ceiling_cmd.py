"""The ``probe-ceiling`` command: a host's crypto ceiling without running nginx, to carry
a TLS basis to the CPU a customer will buy (``recommend --cpu``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sizing import paths
from sizing.app.env import current
from sizing.cli.app import emit_json
from sizing.cli.options import JsonOpt
from sizing.errors import HostError
from sizing.textfit import fold

if TYPE_CHECKING:
    from sizing.app.ceiling import Probed


ProbeInventoryOpt = Annotated[Path, typer.Option("--inventory", "-i", help="Inventory YAML file.")]
ProbeLimitOpt = Annotated[
    str | None,
    typer.Option("--limit", "-l", metavar="PATTERN", help="Ansible host patterns."),
]
ProbeTlsKeyOpt = Annotated[
    str,
    typer.Option("--tls-key", metavar="rsa2048|ecdsa-p256", help="The certificate's key."),
]
ProbeCpuOpt = Annotated[
    int, typer.Option("--cpu-id", help="The logical CPU to pin openssl speed to.")
]
ProbeSiblingsOpt = Annotated[
    str | None,
    typer.Option(
        "--ht-siblings",
        metavar="CPUS",
        help="Also measure one core's HT siblings together (e.g. 0,16).",
    ),
]


def probe_ceiling(
    inventory: ProbeInventoryOpt = paths.DEFAULT_INVENTORY,
    limit: ProbeLimitOpt = None,
    tls_key: ProbeTlsKeyOpt = "rsa2048",
    cpu: ProbeCpuOpt = 0,
    siblings: ProbeSiblingsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Measure the crypto ceiling of the inventory's servers (openssl speed of the
    certificate's signing operation, pinned; about 2 s per measurement, no nginx), and
    print it with the catalog entry that lets `recommend --cpu MODEL --allow-translation`
    translate a measured TLS basis to that CPU."""
    # the inventory's pydantic models, Ansible: the start-up of every other command
    from sizing.app.ceiling import probe

    rows = probe(
        inventory, limit=limit, tls_key=tls_key, cpu=cpu, siblings=siblings, debug=current().debug
    )
    if json_out:
        emit_json({"ceilings": [r.to_json() for r in rows]})
    else:
        typer.echo(_text(rows, tls_key))
    failed = [r for r in rows if r.sign_per_core is None]
    if failed:
        raise HostError(
            failed[0].host, f"crypto ceiling not measured: {failed[0].problem or 'no result'}"
        )


def _text(rows: list[Probed], tls_key: str) -> str:
    """Each host's ceiling, then the catalog entry that lets `recommend --cpu MODEL
    --allow-translation` translate a measured TLS basis to that CPU. Every line fits 100
    columns (issue 62): a host's line is folded, and the entry is block YAML, a field a
    line, so a long CPU model or host name widens no line past it."""
    out = []
    for r in rows:
        if r.sign_per_core is None:
            out += fold(f"{r.host}: no ceiling: {r.problem or 'not measured'}")
            continue
        ht = (
            f"; HT siblings together {r.sign_per_core_ht:,.0f}/s"
            if r.sign_per_core_ht is not None
            else ""
        )
        out += fold(
            f"{r.host}: {r.cpu_model or 'CPU model unknown'}: {r.algorithm} "
            f"{r.sign_per_core:,.0f}/s on cpu {r.cpus}{ht} ({r.build}; {r.took_s} s)"
        )
    good = [r for r in rows if r.sign_per_core is not None and r.cpu_model]
    if good:
        out += [
            "\ncatalog entry (`ceilings:` of a --catalog file) for recommend --cpu:",
            "ceilings:",
        ]
        for r in good:
            out += _scalar("  - cpu_model", r.cpu_model)
            out += [f"    tls_key: {tls_key}", f"    sign_per_core: {r.sign_per_core}"]
            if r.sign_per_core_ht is not None:
                out.append(f"    sign_per_core_ht: {r.sign_per_core_ht}")
            out += _scalar("    source", f"sizing probe-ceiling on {r.host} ({r.build})")
    return "\n".join(out)


def _scalar(key: str, text: str) -> list[str]:
    """``key: 'text'`` as YAML lines of at most 100 columns: a single-quoted scalar (a quote
    doubled), folded at single spaces, which YAML reads back as those spaces."""
    line = f"{key}: '" + text.replace("'", "''") + "'"
    if len(line) <= 100 or "  " in text or text != text.strip():
        return [line]  # runs of spaces would not read back from a folded scalar
    return fold(line, subsequent=" " * (len(key) - len(key.lstrip(" -")) + 2))
