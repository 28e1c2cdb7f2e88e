"""The guide's chapters as one sequence of blocks, rendered to HTML and to Markdown alike
(``templates/guide.html.j2`` and ``templates/guide.md.j2`` each hold one macro per kind of
block, and no chapter's text): every sentence of a chapter is written here, once.

The kinds of block are :mod:`sizing.report.data.blocks`. :data:`CHAPTERS` lists the
chapters in order, each with the function that writes it: a new chapter is one more entry,
and the numbers follow (body 1, 2, ...; appendices A, B, ...). A chapter whose function
returns None is left out (the charts chapter without charts, as for Markdown). The
executive summary is a lead chapter, printed right after the cover.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sizing.model import FigureKind
from sizing.report.data.blocks import (
    Block,
    Chapter,
    Charts,
    Facts,
    Heading,
    Headlines,
    HostBlock,
    Legend,
    Para,
    Pre,
    RecommendationBlock,
    Run,
    Table,
    code,
    facts,
    h3,
    p,
    table,
)
from sizing.report.data.format import PLATFORM_LABELS
from sizing.report.data.model import Guide
from sizing.report.data.replayed import replayed_blocks

__all__ = ["CHAPTERS", "Chapter", "Facts", "Heading", "Para", "Table", "chapters"]


@dataclass(frozen=True)
class _Spec:
    """A chapter of the guide's order: its builder returns its blocks, or None when the
    guide has nothing for it (the chapter is then left out and the numbers close up)."""

    id: str
    title: str
    build: Callable[[Guide, Sequence[str]], Sequence[Block] | None]
    appendix: bool = False
    lead: bool = False


def _charts(g: Guide, chart_ids: Sequence[str]) -> Sequence[Block] | None:
    return (Charts(),) if chart_ids else None


def _limits_all(g: Guide, chart_ids: Sequence[str]) -> Sequence[Block] | None:
    return None if g.limits_all is None else table(g.limits_all, "limits")


def _provenance(g: Guide, chart_ids: Sequence[str]) -> Sequence[Block]:
    return (
        p(
            "Every throughput of the sizing table, where it comes from, and its interval: "
            "for a measured figure the interval of its median, with the share of the time "
            "it holds the true median."
        ),
        *table(g.provenance, "provenance", show_title=False),
    )


def chapters(g: Guide, chart_ids: Sequence[str]) -> list[Chapter]:
    """The guide's chapters (see the module); ``chart_ids``: the charts drawn (none for
    Markdown). Body chapters are numbered 1, 2, ...; appendices A, B, ..."""
    out: list[Chapter] = []
    for spec in CHAPTERS:
        blocks = spec.build(g, chart_ids)
        if blocks is None:
            continue
        same = [c for c in out if c.appendix == spec.appendix]
        num = chr(ord("A") + len(same)) if spec.appendix else str(len(same) + 1)
        out.append(Chapter(spec.id, spec.title, num, tuple(blocks), spec.appendix, spec.lead))
    return out


def _replayed(g: Guide) -> Sequence[Block] | None:
    """The replays of the demand's own workload (``guide --demand``), or nothing: another
    customer's replays are never shown, and a guide without a demand has no traffic."""
    t = g.request.traffic
    if t is None or t.workload is None:
        return None
    return replayed_blocks(g.runs, t.workload.key()) or None


def _traffic(g: Guide) -> Sequence[Block] | None:
    """The customer's own traffic (``guide --demand``), or nothing."""
    if g.request.traffic is None:
        return None
    from sizing.report.data.traffic import traffic_blocks  # the demand package: --demand only

    t = g.request.traffic
    best = None if g.recommendation is None else g.recommendation.result.recommendation
    key = "" if t.workload is None else t.workload.key()
    replayed = bool(key) and best is not None and key in (best.basis or "")
    return traffic_blocks(t, g.request.peak, replayed=replayed)


def _proposal(g: Guide) -> list[Block]:
    """The page a buyer reads first: the options, the recommendation, the assumptions."""
    prop = g.proposal
    blocks: list[Block] = []
    if prop is not None:
        blocks.append(p(prop.lead, cls="lead"))
        blocks += table(prop.options, "options")
    if prop is not None:
        blocks += table(prop.costs, "costs")
    if g.recommendation is not None:
        blocks.append(RecommendationBlock(g.recommendation))
    if prop is not None:
        blocks += table(prop.bought, "cash-flow-bought")
        blocks += table(prop.cash_flow, "cash-flow")
        blocks += table(prop.capacity, "capacity")
    blocks += table(g.assumptions, "assumptions")
    if g.reference_only:
        blocks.append(
            p(
                "Every capacity here is the published reference figure of the test hardware, "
                "not a measurement of yours: measure your own servers with ",
                code("sizing run"),
                " before you buy.",
                cls="note",
            )
        )
    return blocks


def _certainty(g: Guide, chart_ids: Sequence[str]) -> Sequence[Block] | None:
    """What each interval covers, and the predicted figures with how each was made."""
    if not g.certainty:
        return None
    return [
        *(p(x) for x in g.certainty),
        *table(g.predicted, "predicted"),
        *(p(x) for x in g.certainty_closing),
    ]


def _engineers(g: Guide) -> list[Block]:
    """The identifiers and the model parameters the body leaves out."""
    return [
        p(
            "A basis is one hardware, one platform, one workload and one software stack: "
            "figures of different bases are never mixed. The guide is sized on these, by "
            "their identifiers (as ",
            code("sizing results --bases"),
            " lists them):",
        ),
        facts(g.bases, "bases"),
        *_shares(g),
        *_unpriced(g),
        facts(
            g.methodology.models,
            "models",
            title="Each series' scaling model, fitted to its observed core counts",
        ),
        *_steps(g),
    ]


def _unpriced(g: Guide) -> list[Block]:
    """Why a platform the executive summary compares has no priced option."""
    missing = () if g.proposal is None else g.proposal.unpriced
    return [p(f"Not priced on {PLATFORM_LABELS.get(pl, pl)}: {why}.") for pl, why in missing]


def _shares(g: Guide) -> list[Block]:
    """What a guest carries of bare metal's figure per core count and HT mode, and how
    each share was obtained (the summary says it in one sentence)."""
    if g.versus is None:
        return []
    return [
        p("Core for core, what a guest carries of bare metal's figure:"),
        *table(g.versus.shares, "versus"),
    ]


def _steps(g: Guide) -> list[Block]:
    """The recommendation's reasoning, line by line as the engine gives it (the summary's
    box states the result)."""
    r = g.recommendation
    if r is None or not r.feasible:
        return []
    return [
        p("How the recommendation was reached, step by step:"),
        *(p(line, cls="step") for line in r.explanation),
    ]


def _summary(g: Guide) -> list[Block]:
    """What the proposal rests on: the figures' source, the comparison in a sentence, who
    prepared the guide, the headline figures and the next configurations."""
    lead = g.basis_text + (
        " The figures describe the published test hardware, not yours." if g.reference_only else ""
    )
    blocks: list[Block] = [p(lead, cls="lead")]
    if g.left_out:
        blocks.append(
            p("Not in this guide's figures: " + " ".join(x.sentence() for x in g.left_out))
        )
    if g.versus is not None:  # the per-core-count shares are in the engineers' appendix
        blocks += [h3(g.versus.title, "versus"), p(g.versus.sentence)]
        # an option sized on its own basis (Kubernetes) says which, beside the answer's
        blocks += [
            p(f"{PLATFORM_LABELS.get(s.platform, s.platform)}: {s.sized_on}.")
            for s in g.versus.comparison.sides
            if s.sized_on
        ]
    if g.about:
        blocks.append(facts(g.about, "about", title="About this guide"))
    if g.recommendation is not None:
        blocks += table(g.recommendation.alternatives, "alternatives")
    if g.headlines:
        blocks.append(Headlines(g.headlines))
    ref: list[Run] = []
    if FigureKind.REFERENCE in g.table.sources_used:
        ref = [Run(" Reference figures: "), Run(g.citation)]
        ref += [Run(", "), Run(g.reference_url, url=True)] if g.reference_url else []
        ref.append(Run("."))
    blocks.append(Legend(tuple(ref)))
    return blocks


def _table(g: Guide) -> list[Block]:
    blocks: list[Block] = [
        p(
            "Throughput of one server per CPU core count, in the shape of the published NGINX "
            "sizing guide, with the hardware price of the catalog, the cost per unit of "
            "throughput and the overhead of running NGINX in a hypervisor guest. Costs are in "
            f"{g.currency}, on a {g.cost_basis} basis."
        )
    ]
    for t in g.tables:
        blocks += table(t, "sizing")
    blocks += table(g.overhead_table, "overhead")
    blocks += table(g.ht_gain_table, "ht-gain")
    blocks += table(g.emulated_table, "emulated")
    if g.certainty:
        blocks.append(
            p(
                "How sure each figure is, and how the predicted ones were made: the appendix "
                '"How sure are these figures".'
            )
        )
    if g.limits_text:
        blocks.append(h3("How close to the limit", "how-close"))
        blocks += [p(x) for x in g.limits_text]
        blocks += table(g.limits_table, "limits")
    return blocks


def _latency(g: Guide, chart_ids: Sequence[str]) -> list[Block] | None:
    lat = g.latency
    if lat is None:
        return None
    blocks: list[Block] = [
        p(
            "The latency profiles offer constant request rates, open loop, and record the latency "
            "of every request at each rate: how fast one server answers below its capacity, "
            "where latency explodes (the knee) and, when a latency objective was given, the "
            "highest rate that meets it (the SLO capacity)."
            + (" The curves are in the charts above." if "latency" in chart_ids else "")
        )
    ]
    blocks += table(lat.summary, "latency-summary")
    for t in lat.rates:
        blocks += table(t, "latency-rates")
    if lat.soak:
        blocks += [
            h3("Soak repetitions"),
            p(
                "Each rate was repeated back to back. In these rates one repetition jumped; "
                "every repetition is listed."
            ),
        ]
        for t in lat.soak:
            blocks += table(t, "soak")
    return blocks


def _gateway(g: Guide, chart_ids: Sequence[str]) -> list[Block] | None:
    if g.gateway is None:
        return None
    blocks: list[Block] = [
        p(
            "As in the API-gateway article's CPU figure, the gateway (a reverse proxy, or a "
            "JWT-validating API gateway) was offered constant rates of API calls, open loop, and "
            "the busy share of its pinned CPUs was sampled at each rate: how much CPU a given "
            "call volume costs, and where the core is fully loaded."
            + (" The curve is in the charts above." if "gateway-cpu" in chart_ids else "")
        )
    ]
    for t in g.gateway.tables:
        blocks += table(t, "gateway-cpu")
    return blocks


def _methodology(g: Guide) -> list[Block]:
    m = g.methodology
    blocks: list[Block] = []
    if m.measured:
        blocks += [
            p(
                "Measured figures were produced by ",
                code("sizing run"),
                ": nginx from the "
                "distribution, pinned to the cores under test, loaded by a load generator on cores "
                "of its own, each point repeated until its confidence interval was narrow enough. "
                "Everything below is read from the metadata stored with the figures.",
            ),
            h3("Hardware and software"),
        ]
        blocks += [HostBlock(h) for h in m.hosts]
        blocks.append(h3("Load and measurement"))
        blocks += table(m.workloads, "workloads")
        blocks += [
            facts(m.settings),
            h3("nginx configuration"),
            p("sizing renders ", code("templates/nginx.conf.j2"), " for every point. Per point:"),
            facts(m.nginx_per_point),
        ]
        if m.nginx_directives:
            blocks += [p("Directives common to every point:"), Pre(m.nginx_directives, "nginx")]
    if m.reference:
        where = [Run(" ("), Run(g.reference_url, url=True), Run(")")] if g.reference_url else []
        blocks += [
            h3("Reference data"),
            p(
                "Reference figures are copied from ",
                g.citation,
                *where,
                ". Their test conditions, as published:",
            ),
            facts(m.reference, "reference"),
        ]
    blocks += [
        h3("How the table is computed"),
        p(
            "Each platform, hyper-threading mode and metric forms a series. A core count the "
            "series does not hold is predicted: with three or more core counts measured, by the "
            "Universal Scalability Law fitted to every run, with a bootstrap prediction interval; "
            "with fewer, by the scaling shape of a basis with the same workload (never an "
            "emulated one), or not at all, with the reason. No prediction exceeds linear scaling "
            "from the best measured figure per core. Such figures are marked interpolated or "
            'extrapolated; "How sure are these figures" lists them. The fitted models\' '
            "parameters are in the engineers' appendix."
        ),
        facts(m.cost, title="Cost"),
    ]
    return blocks


def _validity(g: Guide) -> list[Block]:
    aside = [p(x.sentence()) for x in g.left_out]
    if aside:
        aside.insert(0, p("Hosts whose points this guide's figures leave out, and why:"))
    return aside + _validity_points(g)


def _validity_points(g: Guide) -> list[Block]:
    if g.validity is not None:
        return [
            p(
                "A figure is used for sizing only when it measured the server and nothing "
                "else. These points were skipped, failed, judged invalid (kept, never used), "
                "or used with a warning."
            ),
            *table(g.validity, "validity", show_title=False),
        ]
    if g.runs:
        return [
            p(
                "Every point of the runs covered by this guide was measured and passed every "
                "validity check."
            )
        ]
    return [p("No measurement is covered by this guide: it rests on reference data only.")]


# The guide's chapters, in order; a new chapter is one more entry (its number follows).
CHAPTERS: list[_Spec] = [
    _Spec("summary", "Executive summary", lambda g, c: _proposal(g), lead=True),
    _Spec("traffic", "Your traffic", lambda g, c: _traffic(g)),
    _Spec("replayed", "Your traffic, replayed", lambda g, c: _replayed(g)),
    _Spec("figures", "What the proposal rests on", lambda g, c: _summary(g)),
    _Spec("table", "Sizing table", lambda g, c: _table(g)),
    _Spec("charts", "Charts", _charts),
    _Spec("latency", "Latency under steady load", _latency),
    _Spec("gateway", "API gateway: CPU against calls per second", _gateway),
    _Spec("methodology", "Methodology", lambda g, c: _methodology(g)),
    _Spec("validity", "Validity of the measurements", lambda g, c: _validity(g), True),
    _Spec("provenance", "Provenance of every figure", _provenance, True),
    _Spec("limits-all", "How close to the limit: every figure", _limits_all, True),
    # after the appendices the body names by letter (A, B, C)
    _Spec("how-sure", "How sure are these figures", _certainty, True),
    _Spec("engineers", "For engineers: bases and scaling models", lambda g, c: _engineers(g), True),
]
