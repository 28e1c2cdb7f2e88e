"""The ``probe-ceiling`` command: a host's crypto ceiling without running nginx, to carry
a TLS basis to the CPU a customer will buy (``recommend --cpu``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sizing import paths
from sizing.app.env import current
from sizing.cli.app import emit_json


def probe_ceiling(
    inventory: Annotated[
        Path, typer.Option("--inventory", "-i", help="Inventory YAML file.")
    ] = paths.DEFAULT_INVENTORY,
    limit: Annotated[
        str | None,
        typer.Option("--limit", "-l", metavar="PATTERN", help="Ansible host patterns."),
    ] = None,
    tls_key: Annotated[
        str,
        typer.Option("--tls-key", metavar="rsa2048|ecdsa-p256", help="The certificate's key."),
    ] = "rsa2048",
    cpu: Annotated[
        int, typer.Option("--cpu-id", help="The logical CPU to pin openssl speed to.")
    ] = 0,
    siblings: Annotated[
        str | None,
        typer.Option(
            "--ht-siblings",
            metavar="CPUS",
            help="Also measure one core's HT siblings together (e.g. 0,16).",
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON document on stdout.")
    ] = False,
) -> None:
    """Measure the crypto ceiling of the inventory's servers (openssl speed of the
    certificate's signing operation, pinned; about 2 s per measurement, no nginx), and
    print it with the catalog entry that lets `recommend --cpu MODEL --allow-translation`
    translate a measured TLS basis to that CPU."""
    from sizing.ceilings import ALGORITHMS, openssl_build
    from sizing.errors import HostError, UsageError
    from sizing.inventory import load_inventory
    from sizing.provision.ansible import Playbooks
    from sizing.provision.ceiling import CeilingJob, measure_ceilings
    from sizing.provision.facts import gather_facts

    if tls_key not in ALGORITHMS:
        raise UsageError(f"--tls-key: {tls_key!r} is not one of {', '.join(ALGORITHMS)}")
    if cpu < 0:
        raise UsageError(f"--cpu-id must be 0 or more, not {cpu}")
    jobs = [CeilingJob(tls_key, str(cpu), 1)]
    if siblings:
        ids = [s.strip() for s in siblings.split(",")]
        if len(ids) < 2 or not all(s.isdigit() for s in ids):
            raise UsageError(f"--ht-siblings: {siblings!r} is not a list of CPU ids (e.g. 0,16)")
        jobs.append(CeilingJob(tls_key, ",".join(ids), len(ids)))
    inv = load_inventory(inventory, limit=limit)
    servers = [h for h in inv.hosts.values() if "server" in h.roles]
    if not servers:
        raise UsageError(f"{inventory}: no host in the servers group to probe")
    playbooks = Playbooks(inv.path, current().debug)
    facts, unreachable = gather_facts(playbooks, servers)
    if siblings:
        want = tuple(sorted(int(x) for x in jobs[-1].cpus.split(",")))
        for name, hf in facts.items():
            groups = [tuple(sorted(g)) for g in hf.topology.physical_cores()]
            if want not in groups:
                shown = ", ".join(",".join(map(str, g)) for g in groups[:4])
                raise UsageError(
                    f"--ht-siblings {siblings}: on {name} these CPUs are not the threads of one "
                    f"core (its cores' threads: {shown}{', ...' if len(groups) > 4 else ''})"
                )
    got, problems = measure_ceilings(playbooks, {h.name: jobs for h in servers if h.name in facts})
    rows: list[dict[str, Any]] = []
    for h in servers:
        c = got.get(h.name)
        f = facts.get(h.name)
        model = (f.raw.get("cpu_model") if f is not None else None) or ""
        why = unreachable.get(h.name) or problems.get(h.name) or (c.missing if c else "")
        single = c.rate(tls_key, 1) if c else None
        pair = c.rate(tls_key, len(jobs[-1].cpus.split(","))) if c and siblings else None
        rows.append(
            {
                "host": h.name,
                "cpu_model": model,
                "openssl": c.openssl if c else "",
                "tls_key": tls_key,
                "sign_per_core": None if single is None else round(single.sign_per_s, 1),
                "sign_per_core_ht": None if pair is None else round(pair.sign_per_s, 1),
                "cpus": jobs[0].cpus,
                "took_s": None if c is None or c.took_s is None else round(c.took_s, 2),
                "problem": why,
            }
        )
    if json_out:
        emit_json({"ceilings": rows})
    else:
        what = ALGORITHMS[tls_key]
        for r in rows:
            if r["sign_per_core"] is None:
                typer.echo(f"{r['host']}: no ceiling: {r['problem'] or 'not measured'}")
                continue
            ht = (
                f"; HT siblings together {r['sign_per_core_ht']:,.0f}/s"
                if r["sign_per_core_ht"] is not None
                else ""
            )
            typer.echo(
                f"{r['host']}: {r['cpu_model'] or 'CPU model unknown'}: {what} "
                f"{r['sign_per_core']:,.0f}/s on cpu {r['cpus']}{ht} "
                f"({openssl_build(r['openssl'])}; {r['took_s']} s)"
            )
        good = [r for r in rows if r["sign_per_core"] is not None and r["cpu_model"]]
        if good:
            typer.echo("\ncatalog entry (`ceilings:` of a --catalog file) for recommend --cpu:")
            typer.echo("ceilings:")
            for r in good:
                extra = (
                    f", sign_per_core_ht: {r['sign_per_core_ht']}"
                    if r["sign_per_core_ht"] is not None
                    else ""
                )
                typer.echo(
                    f"  - {{cpu_model: {r['cpu_model']!r}, tls_key: {tls_key}, "
                    f"sign_per_core: {r['sign_per_core']}{extra}, source: 'sizing "
                    f"probe-ceiling on {r['host']} ({openssl_build(r['openssl'])})'}}"
                )
    failed = [r for r in rows if r["sign_per_core"] is None]
    if failed:
        raise HostError(
            failed[0]["host"], f"crypto ceiling not measured: {failed[0]['problem'] or 'no result'}"
        )
