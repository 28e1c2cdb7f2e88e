"""The ``inventory check`` command: validate an inventory offline, or reach its hosts
and hypervisors with ``--connect``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sizing import paths
from sizing.app.env import current
from sizing.app.status import Checked, exit_status
from sizing.cli.app import emit_json, warn


def _hypervisor_detail(h: Any, inv: Any, connect: bool) -> dict[str, Any]:
    """What a guest's backend says about it (endpoint, VM; with ``connect`` its state and
    host HT, asking the hypervisor); {} for bare metal."""
    from sizing.provision.platforms import BackendOptions, describe_host

    return describe_host(h, inv, BackendOptions(notify=warn, inventory=inv, connect=connect))


def _probe_hosts(inv: Any, debug: bool) -> dict[str, str]:
    """``--connect``: read every host's facts over Ansible; host -> why it failed."""
    from sizing.provision.ansible import Playbooks
    from sizing.provision.facts import gather_facts

    _facts, problems = gather_facts(Playbooks(inv.path, debug), list(inv.hosts.values()))
    return problems


def inventory_check(
    file: Annotated[Path, typer.Argument(help="Inventory YAML file.")] = paths.DEFAULT_INVENTORY,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON document on stdout.")
    ] = False,
    connect: Annotated[
        bool,
        typer.Option(
            "--connect",
            help="Also reach every host (Ansible) and hypervisor (vCenter, libvirt); exit"
            " non-zero, one line per host, when one cannot be reached. Default: offline.",
        ),
    ] = False,
    limit: Annotated[
        str | None,
        typer.Option("--limit", "-l", metavar="PATTERN", help="Ansible host patterns."),
    ] = None,
    extra_vars: Annotated[
        list[str] | None,
        typer.Option(
            "--extra-vars", "-e", metavar="VARS", help="Ansible extra vars, as for run."
        ),
    ] = None,
) -> None:
    """Validate an inventory offline and print what sizing understood of it."""
    from tabulate import tabulate

    from sizing.extravars import parse_extra_vars
    from sizing.inventory import load_inventory

    inv = load_inventory(file, limit=limit, extra_vars=parse_extra_vars(extra_vars or []))
    rows = []
    doc: dict[str, Any] = {"inventory": str(file), "hosts": []}
    for h in inv.hosts.values():
        cpu = h.sizing.cpu
        cpu_text = "-"
        if cpu is not None:
            cpu_text = (
                f"{cpu.sockets}x{cpu.cores_per_socket} cores, {cpu.threads_per_core} thr/core"
                + (f" ({cpu.model})" if cpu.model else "")
            )
        cost = "-"
        if h.sizing.price_usd is not None:
            cost = f"${h.sizing.price_usd:,.0f}"
        elif h.sizing.cost_ref:
            cost = h.sizing.cost_ref
        conn = str(h.variables.get("ansible_connection", "ssh"))
        rows.append(
            [
                h.name,
                ",".join(sorted(h.roles)) or "-",
                str(h.platform),
                h.address,
                conn,
                cpu_text,
                cost,
            ]
        )
        doc["hosts"].append(
            {
                "name": h.name,
                "roles": sorted(h.roles),
                "platform": str(h.platform),
                "address": h.address,
                "connection": conn,
                "cpu": None if cpu is None else cpu.model_dump(),
                "price_usd": h.sizing.price_usd,
                "cost_ref": h.sizing.cost_ref,
                "groups": list(h.groups),
                **_hypervisor_detail(h, inv, connect),
            }
        )
    failed: dict[str, str] = {}
    if connect:
        failed = _probe_hosts(inv, current().debug)
        for host in doc["hosts"]:
            hyp = host.get("hypervisor") or {}
            if hyp.get("error"):
                failed.setdefault(host["name"], f"hypervisor: {hyp['error']}")
            host["reachable"] = host["name"] not in failed
            host["problem"] = failed.get(host["name"])
    doc["connected"] = connect
    if json_out:
        emit_json(doc)
        _unreachable_exit(failed)
        return
    typer.echo(f"{file}: {len(inv.servers)} server(s), {len(inv.clients)} client(s)")
    typer.echo(
        tabulate(
            rows,
            headers=["host", "roles", "platform", "address", "connection", "cpu", "cost"],
            tablefmt="simple",
            disable_numparse=True,
        )
    )
    for host in doc["hosts"]:
        if "hypervisor" in host:
            typer.echo(f"{host['name']}: {host['hypervisor'].get('summary', host['hypervisor'])}")
    if connect:
        typer.echo(f"reached: {len(doc['hosts']) - len(failed)} of {len(doc['hosts'])} host(s)")
    else:
        typer.echo("offline check: no host contacted (--connect reaches them)")
    _unreachable_exit(failed)


def _unreachable_exit(failed: dict[str, str]) -> None:
    """``--connect``: one line per host that could not be reached, then exit 4."""
    for name, why in sorted(failed.items()):
        warn(f"{name}: {why}")
    code = exit_status(Checked(failed))
    if code:
        raise typer.Exit(int(code))
