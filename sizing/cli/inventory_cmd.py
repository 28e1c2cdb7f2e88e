"""The ``inventory check`` command: validate an inventory offline, or reach its hosts
and hypervisors with ``--connect``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from tabulate import tabulate

from sizing import paths
from sizing.app.env import current
from sizing.app.status import Checked, exit_status
from sizing.cli.app import emit_json, fitted, warn
from sizing.cli.options import JsonOpt

if TYPE_CHECKING:
    from sizing.app.inventory import HostCheck

CheckFileOpt = Annotated[
    Path | None,
    typer.Argument(
        help="Inventory: a YAML or INI file, a directory of them, or an inventory plugin's"
        " configuration (default: inventories/local.yml)."
    ),
]
CheckInventoryOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "-i",
        "--inventory",
        help="More inventories, after FILE: repeated, merged in order as Ansible merges them.",
    ),
]
CheckConnectOpt = Annotated[
    bool,
    typer.Option(
        "--connect",
        help="Also reach every host (Ansible) and hypervisor (vCenter, libvirt); exit"
        " non-zero, one line per host, when one cannot be reached. Default: offline.",
    ),
]
CheckLimitOpt = Annotated[
    str | None,
    typer.Option("--limit", "-l", metavar="PATTERN", help="Ansible host patterns."),
]
CheckExtraVarsOpt = Annotated[
    list[str] | None,
    typer.Option("--extra-vars", "-e", metavar="VARS", help="Ansible extra vars, as for run."),
]


CheckVerboseOpt = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="List every host, however many (one per line)."),
]


def inventory_check(
    file: CheckFileOpt = None,
    inventory: CheckInventoryOpt = None,
    json_out: JsonOpt = False,
    connect: CheckConnectOpt = False,
    limit: CheckLimitOpt = None,
    extra_vars: CheckExtraVarsOpt = None,
    verbose: CheckVerboseOpt = False,
) -> None:
    """Validate an inventory offline and print what sizing understood of it."""
    # the inventory's pydantic models, Ansible and the platform backends (start-up)
    from sizing.app.inventory import check

    sources = [*([file] if file else []), *(inventory or [])] or [paths.DEFAULT_INVENTORY]
    got = check(
        sources,
        limit=limit,
        extra_vars=extra_vars,
        connect=connect,
        notify=warn,
        debug=current().debug,
    )
    for line in got.inventory.warning_lines():
        warn(line, fit=True)
    if json_out:
        emit_json(got.to_json())
    else:
        inv = got.inventory
        shown = " + ".join(str(p) for p in inv.inventories)
        typer.echo(f"{shown}: {len(inv.servers)} server(s), {len(inv.clients)} client(s)")
        headers = ["host", "roles", "platform", "address", "connection", "cpu", "cost"]
        full = [headers, *[_row(h) for h in got.hosts]]
        rows = narrowed(full, 100)
        typer.echo(tabulate(rows[1:], headers=rows[0], tablefmt="simple", disable_numparse=True))
        cut = [
            (whole[0], headers[i], cell)
            for whole, shown_row in zip(full[1:], rows[1:], strict=True)
            for i, cell in enumerate(whole)
            if cell != shown_row[i]
        ]
        if cut:  # a cell cut to fit ends in '~': here it is whole
            typer.echo("cut to fit 100 columns (~), in full:")
            for host, column, cell in cut:
                typer.echo(fitted(f"  {host} {column}: {cell}"))
        for line in got.summary(verbose):
            typer.echo(fitted(line))
        for h in got.hosts:
            if h.hypervisor is not None:
                typer.echo(fitted(f"{h.host.name}: {h.hypervisor.get('summary', h.hypervisor)}"))
        if connect:
            reached = len(got.hosts) - len(got.unreachable)
            typer.echo(f"reached: {reached} of {len(got.hosts)} host(s)")
        else:
            typer.echo("offline check: no host contacted (--connect reaches them)")
    # --connect: one line per host that could not be reached, then exit 4
    for name, why in sorted(got.unreachable.items()):
        warn(f"{name}: {why}")
    code = exit_status(Checked(got.unreachable))
    if code:
        raise typer.Exit(int(code))


def narrowed(rows: list[list[str]], width: int) -> list[list[str]]:
    """The rows of a ``simple`` table (two spaces between columns) cut to ``width``: the
    widest column loses characters first, a cut cell ending in '~'."""
    rows = [list(r) for r in rows]
    ncols = len(rows[0])

    def widths() -> list[int]:  # tabulate pads a header by 2
        return [max(len(rows[0][i]) + 2, *(len(r[i]) for r in rows[1:])) for i in range(ncols)]

    while sum(w := widths()) + 2 * (ncols - 1) > width and max(w) > 8:
        col = w.index(max(w))
        keep = max(w) - 1
        for r in rows[1:]:
            if len(r[col]) > keep:
                r[col] = r[col][: keep - 1] + "~"
    return rows


def _row(h: HostCheck) -> list[str]:
    s = h.host.sizing
    cpu = "-"
    if s.cpu is not None:
        cpu = (
            f"{s.cpu.sockets}x{s.cpu.cores_per_socket} cores, {s.cpu.threads_per_core} "
            f"thr/core" + (f" ({s.cpu.model})" if s.cpu.model else "")
        )
    cost = f"${s.price_usd:,.0f}" if s.price_usd is not None else s.cost_ref or "-"
    return [
        h.host.name,
        ",".join(sorted(h.host.roles)) or "-",
        str(h.host.platform),
        h.host.address,
        h.connection,
        cpu,
        cost,
    ]
