"""What an answer rests on besides the figures: stated assumptions (``--assume``) that
price a platform nobody measured, and the runs that would replace a floor with a figure.

``--assume guest-share=kvm:0.92 --assume-source TEXT`` adds, beside each bare-metal basis
chosen, a KVM basis of its figures × 0.92 (:mod:`sizing.engine.assume`), unless a KVM
guest was measured (measured wins; the assumption is reported as not used).

A catalog server sized on a floor (more cores than were measured) would be sized on its
own figures by a run at its core counts; where even linear scaling from the best measured
per-core figure could make it the cheaper fleet, the answer names that run, as typed, with
the inventory the figures came from when the run recorded it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sizing.engine.assume import Assumption, assumed_guest, parse_assume
from sizing.engine.basis import Basis
from sizing.engine.fleet import Offer, identical
from sizing.engine.reach import measure_hint
from sizing.engine.recommend import Recommendation
from sizing.engine.workload_use import PROFILES_OF, role_of_text
from sizing.errors import UsageError
from sizing.model import FigureKind
from sizing.sources import BasisInputs
from sizing.workload import Role

__all__ = ["assumed_platforms", "measure_next", "what_would_price", "with_assumptions"]


def what_would_price(platform: str) -> str:
    """What prices a platform that has no figures: a measured guest, or a stated share."""
    return (
        f"no {platform} guest measured; measure one (`sizing run -i INVENTORY` with a "
        f"{platform} guest: inventories/{platform}-lab.yml shows how), or size it from a "
        f"stated share of bare metal's figures (`--assume guest-share={platform}:SHARE "
        "--assume-source TEXT`)"
    )


def assumed_platforms(assume: Sequence[str], source: str | None) -> tuple[Assumption, ...]:
    """The parsed ``--assume`` options (a bad one is one usage line)."""
    if source and not assume:
        raise UsageError("--assume-source says where an --assume comes from: give --assume too")
    return tuple(parse_assume(a, source) for a in assume)


def with_assumptions(
    inputs: BasisInputs, asked: Sequence[Assumption]
) -> tuple[BasisInputs, tuple[Assumption, ...]]:
    """``inputs`` with the bases the assumptions make added to the choice, and the
    assumptions as used (or not, and why)."""
    out: list[Assumption] = []
    for a in asked:
        own = [b for b in inputs.choice.bases if b.platform == a.platform]
        if own:
            note = f"{own[0].id} measured {a.platform}: its figures are used"
            out.append(replace(a, used=False, note=note))
            continue
        bare = [b for b in inputs.choice.bases if b.platform == "baremetal"]
        if not bare:
            raise UsageError(
                f"--assume guest-share={a.platform}:{a.value:g}: no bare-metal basis was "
                f"chosen to take the share of (chosen: {', '.join(inputs.choice.ids)})"
            )
        made = []
        for b in bare:
            basis, used = assumed_guest(b, a)
            made.append(basis)
            out.append(used)
        choice = replace(
            inputs.choice,
            bases=(*inputs.choice.bases, *made),
            why=f"{inputs.choice.why}; {a.platform} assumed from bare metal (--assume)",
        )
        prices = dict(inputs.prices)
        for b, m in zip(bare, made, strict=True):
            if b.id in prices:
                prices[m.id] = prices[b.id]
        inputs = replace(inputs, bases=(*inputs.bases, *made), choice=choice, prices=prices)
    return inputs, tuple(out)


def measure_next(result: Recommendation, inputs: BasisInputs) -> tuple[tuple[str, str, str], ...]:
    """The runs that would size a floor-sized server on its own figures, where they could
    change the answer (module docstring): (server in words, command, note)."""
    best = result.recommendation
    if best is None:
        return ()
    inventory = _inventory(inputs, best.basis)
    basis = next((b for b in inputs.bases if b.id == best.basis), None)
    hw = None if basis is None else basis.hardware
    host = None
    if hw is not None and hw.sockets and hw.cores_per_socket:
        host = (hw.sockets, hw.cores_per_socket)
    other = ""
    if any("translated" in f.flags or f.source == FigureKind.TRANSLATED for f in best.figures):
        # translated to another CPU: the lab's hosts would measure theirs, not this one
        inventory, host = "", None
        cpu = hw.cpu_model if hw is not None and hw.cpu_model else "that CPU"
        other = f" (add an {cpu} host to the inventory: the measured hosts have another CPU)"
    by_series = {(s.basis_id, s.platform, s.ht, s.profile): s for s in result.series}
    seen: dict[int, tuple[str, str, str]] = {}
    for c in (best, *result.alternatives):
        if c.cores_per_server in seen or not any(f.source == FigureKind.FLOOR for f in c.figures):
            continue
        load = 0.0
        for f in c.figures:
            s = by_series.get((c.basis, c.platform, c.ht, f.profile))
            if s is None:
                break
            target = result.demand.rps if f.profile == "rps" else result.demand.tps
            load += (target or 0.0) / max(s.cap(c.cores_per_server), 1e-9)
        else:
            need = 1.0 / (1.0 - result.demand.headroom)
            n = identical(
                Offer(c.cost_per_server, 1.0 / load),
                need,
                n_plus_1=result.demand.redundancy == "n+1",
            )
            if n * c.cost_per_server >= best.total_cost - 0.005:
                continue  # even linear scaling would not make it cheaper
            sockets = c.offer.sockets if c.offer is not None else 1
            shape = f"{sockets} × {c.cores_per_server // sockets} cores"
            name = c.server_name or f"{c.cores_per_server}-core server"
            command, note = measure_hint(
                c.cores_per_server,
                sockets,
                inventory,
                host,
                threads=None if hw is None else hw.threads_per_core,
                own_client=_own_client(inputs, basis),
            )
            command += _gateway_profile(basis)
            seen[c.cores_per_server] = (f"{name} ({shape})", command, note + other)
    return tuple(seen[k] for k in sorted(seen))


def _own_client(inputs: BasisInputs, basis: Basis | None) -> bool:
    """Whether the basis' host was its own load generator in the runs it was measured in
    (the bundled local inventory: one machine for both): a run of all its cores is refused."""
    if basis is None:
        return False
    hosts = set(basis.hosts)
    if any((run, host) in inputs.own_clients for run in basis.runs for host in hosts):
        return True  # recommend loads no runs (with_runs): what they showed is kept
    for run in inputs.runs:
        if run.record.id not in basis.runs:
            continue
        for point in run.points:
            env = point.result.metadata.env
            if point.result.key.host in hosts and env.clients and hosts & set(env.clients):
                return True
    return False


def _gateway_profile(basis: Basis | None) -> str:
    """`` --profile api-jwt`` (or ``proxy``, ``proxy-0k``) for a gateway's basis: ``sizing
    run`` measures the load-balancing ``rps,tps`` unless told, which would not size it."""
    role = None if basis is None else role_of_text(basis.workload.role)
    if basis is None or role not in (Role.PROXY, Role.API_JWT):
        return ""
    name = "proxy-0k" if role is Role.PROXY and basis.workload.file_size == 0 else PROFILES_OF[role]
    return f" --profile {name}"


def _inventory(inputs: BasisInputs, basis_id: str) -> str:
    """The inventory the basis' runs were made with, when a run recorded it."""
    basis = next((b for b in inputs.bases if b.id == basis_id), None)
    if basis is None or not basis.runs:
        return ""
    for run in basis.runs:
        if inputs.inventories.get(run):
            return str(inputs.inventories[run])
    return ""
