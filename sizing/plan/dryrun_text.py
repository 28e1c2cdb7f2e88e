"""``sizing run --plan`` for people: per server its points, CPU sets and clients, the pairs
and the legs left unpaired, the estimated time and the pre-flight verdicts (100 columns)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from sizing.plan.document import PlanDocument, PlanHost, PlanServer
from sizing.plan.dryrun import estimate_words, names_text
from sizing.textfit import fold_lines


def pairs_text(doc: PlanDocument) -> list[str]:
    """The plan's pairs and the legs left unpaired, for people (100 columns)."""
    import textwrap

    def wrap(text: str) -> list[str]:
        return textwrap.wrap(
            text,
            width=100,
            initial_indent="  ",
            subsequent_indent="      ",
            break_on_hyphens=False,
        )

    if doc.pairs is None:
        return []
    lines: list[str] = []
    if doc.pairs:
        lines.append("pairs (measured in alternation, one window each, a warm-up at each switch;")
        lines.append("  the figure is the median of the per-pair ratios, with its interval):")
        for p in doc.pairs:
            third = f"  /  C {p.c}" if p.c else ""
            lines += wrap(
                f"{p.figure}: A {p.a}  /  B {p.b}{third}; order {p.order} ({p.pairs} pairs)"
            )
    if doc.unpaired:
        lines.append("not paired:")
        for n in doc.unpaired:
            lines += wrap(f"{n.point}: {n.reason}")
    return lines


def summary_text(doc: PlanDocument) -> list[str]:
    """The default ``--plan`` text: per server its points and CPU sets, its clients once,
    then the estimate."""
    lines = ["servers (--plan --verbose lists every point with every client's command):"]
    for names, s in _shapes(doc.servers, lambda s: s.host, _server_shape):
        parts = [f"{s.planned} point(s) to measure" + (" each" if len(names) > 1 else "")]
        if s.stored:
            parts.append(f"{s.stored} stored")
        if s.skipped:
            parts.append(f"{s.skipped} skipped")
        who = s.host if len(names) == 1 else f"{names_text(names)}, one shape"
        lines.append(f"  {who}: {', '.join(parts)}")
        if s.stands_for:
            lines.append(
                f"    stands for {len(s.stands_for)} identical server(s) (--sample): "
                f"{names_text(s.stands_for).replace(' hosts)', ' servers)')}"
            )
        if s.configs:
            lines.append(
                "    nginx on CPUs: " + "; ".join(f"{k} {v}" for k, v in s.configs.items())
            )
        if s.sockets:
            lines.append(f"    {s.sockets}")
        if s.clients:
            cpus = sorted(set(s.clients.values()))
            on = f" (CPUs {cpus[0]})" if len(cpus) == 1 else ""
            lines.append(f"    clients: {names_text(list(s.clients))}{on}")
        for r in s.skip_reasons:
            lines.append(f"    skipped: {r.points} point(s): {r.reason}")
    e = doc.estimate
    if e.points:
        lines.append(estimate_words(e))
    return _fit(lines)  # 100 columns, continuation lines indented under their item


def _fit(lines: list[str]) -> list[str]:
    """Every line within 100 columns, a continuation indented under its item (a word
    longer than a line broken after a separator: wrapped, never cut)."""
    return fold_lines("\n".join(lines)).split("\n") if lines else []


# the api-jwt profile's bearer token: its 150 characters say nothing to a reader of the plan
# (a new one is made when the run starts); --plan --json shows it whole
_BEARER = re.compile(r"(Authorization: Bearer )[\w-]+\.[\w-]+\.[\w-]+")
JWT_SHOWN = "<JWT>"
# masks longer than this (a 224-CPU host's) are described instead of printed: one bit per
# CPU, 16 of them run to 3,600 columns; --plan --json shows them
MASK_SHOWN = 64


def _affinity(masks: str) -> str:
    """worker_cpu_affinity as the plan prints it: the masks, or what they say when long."""
    bits = max((len(m) for m in masks.split()), default=0)
    if bits <= MASK_SHOWN:
        return f"worker_cpu_affinity {masks}"
    n = len(masks.split())
    return f"worker_cpu_affinity: {n} masks of {bits} bits, one CPU each"


def _argv_text(argv: str | Sequence[str]) -> str:
    text = argv if isinstance(argv, str) else shlex.join(argv)
    return _BEARER.sub(rf"\g<1>{JWT_SHOWN}", text)


def plan_text(doc: PlanDocument) -> str:
    """The dry run for people: hosts, then each point with its CPU sets and commands."""
    lines = [
        f"plan for {doc.inventory}"
        + (f" (resuming run {doc.resume_run})" if doc.resume_run is not None else "")
    ]
    probed = doc.probed
    lines.append(
        "hosts (facts read from the hosts):"
        if probed
        else "hosts (offline: declared facts, nothing contacted; --probe reads the hosts):"
    )

    def state(h: PlanHost) -> str:
        if not probed:
            return f"{h.facts} {h.topology}" if h.facts else f"NOT PLANNED: {h.problem}"
        return "reachable" if h.reachable else f"UNREACHABLE: {h.problem}"

    def shape(h: PlanHost) -> tuple[object, ...]:
        return (tuple(h.roles), state(h), h.cpus, h.platform)

    hosts = [(hs, hs[0]) for hs, _ in _shapes(doc.hosts, lambda h: h, shape)]
    if doc.points is not None:  # --verbose: every host
        hosts = [([h], h) for h in doc.hosts]
    for group, h in hosts:
        cpus = f", {h.cpus} CPUs" if h.cpus and probed else ""
        roles = ",".join(h.roles) + _GUEST.get(h.platform, "")
        if len(group) == 1:
            lines.append(f"  {h.name} ({roles}) {h.address}{cpus}: {state(h)}")
        else:
            names = [g.name for g in group]
            label = (
                f"{names_text(names)} ({roles})"
                if len(names) <= 4
                else (f"{names[0]} ... {names[-1]} ({len(names)} hosts: {roles})")
            )
            lines.append(f"  {label}, each{cpus}: {state(h)}")
    if doc.points is None:
        lines += summary_text(doc)
        return "\n".join(_fit([*lines, *pairs_text(doc), *_tail(doc, probed)]))
    lines.append("points:")
    jwt = False
    for p in doc.points:
        if p.status != "planned" or p.run is None:
            lines.append(f"  {p.label}: {p.status} ({p.reason})")
            continue
        r, w = p.run, p.run.windows
        lines.append(
            f"  {p.label}: nginx {r.nginx_workers} worker(s) on CPUs {r.server_cpus} "
            f"({_affinity(r.worker_cpu_affinity)}); "
            f"{w.repetitions} x {w.duration_s} s after {w.warmup_s} s warm-up"
        )
        for c in r.clients:
            lines.append(f"    {c.host} (CPUs {c.cpus}): {_argv_text(c.argv)}")
            jwt = jwt or JWT_SHOWN in lines[-1]
        for u in p.upstreams or ():
            lines.append(f"    upstream nginx: {u.where}")
        if o := p.offered:
            what = (
                f"climbs from {o.climb_from:,}/s to the knee"
                if o.climb_from
                else f"offers {len(o.rates or ())} rate(s) up to {max(o.rates or (0,)):,}/s"
            )
            lines.append(
                f"    {what}; the clients offer at most {o.client_ceiling:,.0f}/s "
                f"({o.client_cores} client core(s) x {o.planning_rate_per_core:,}/s, "
                f"{o.generator}'s planning figure from benchmarks/generators)"
            )
    if jwt:
        lines.append(
            f"{JWT_SHOWN}: the HS256 token the run makes for api-jwt points (sub: sizing, valid "
            "24 h); --plan --json shows it whole"
        )
    if doc.estimate.points:
        lines.append(estimate_words(doc.estimate))
    return "\n".join(_fit([*lines, *pairs_text(doc), *_tail(doc, probed)]))


_GUEST = {"vsphere": ", ESXi guest", "libvirt": ", KVM guest", "container": ", container"}
GROUPED = 5  # identical hosts summarised as one shape from this many on
T = TypeVar("T")
N = TypeVar("N")


def _shapes(
    items: Sequence[T], name: Callable[[T], N], shape: Callable[[T], Hashable]
) -> list[tuple[list[N], T]]:
    """Items of one shape together (the first one standing for them), in the order each
    shape first comes: a plan of 1,000 identical servers is one line, not 1,000."""
    groups: dict[Hashable, tuple[list[N], T]] = {}
    for item in items:
        groups.setdefault(shape(item), ([], item))[0].append(name(item))
    out: list[tuple[list[N], T]] = []
    for names, first in groups.values():
        if len(names) >= GROUPED:
            out.append((names, first))
        else:  # a few hosts are each listed, in their order
            out += [([name(i)], i) for i in items if name(i) in names]
    return out


def _server_shape(s: PlanServer) -> Hashable:
    return (
        s.planned,
        s.stored,
        s.skipped,
        tuple(s.configs.items()),
        tuple(s.clients.items()),
        tuple((r.points, r.reason) for r in s.skip_reasons),
        (s.host, *s.stands_for) if s.stands_for else (),  # a sample stands for its own
    )


def _tail(doc: PlanDocument, probed: bool) -> list[str]:
    """The playbook runs and the pre-flight verdict."""
    lines: list[str] = []
    runs = ", ".join(
        f"{pb.playbook} x{pb.runs}" + ("+" if (pb.note or "").startswith("at least") else "")
        for pb in doc.playbooks
    )
    lines.append(f"playbooks: {runs}")
    if not probed and doc.preflight:
        lines.append("inventory problems (checked offline; the run would stop before any load):")
        lines += _bullets(doc.preflight)
        lines.append("pre-flight on the hosts: not run offline (--probe reads them and runs it)")
    elif not probed:
        lines.append("pre-flight: not run offline (--probe reads the hosts and runs it)")
    elif doc.preflight:
        lines.append("pre-flight problems (the run would stop before any load):")
        lines += _bullets(doc.preflight)
    else:
        lines.append("pre-flight: all checks pass")
    return lines


def _bullets(problems: Sequence[str]) -> list[str]:
    """``  - problem`` lines, 100 columns, continued under their text."""
    import textwrap

    out: list[str] = []
    for p in problems:
        out += textwrap.wrap(
            p,
            width=100,
            initial_indent="  - ",
            subsequent_indent="    ",
            break_on_hyphens=False,
            break_long_words=False,
        )
    return out
