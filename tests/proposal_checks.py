"""The invariants of issue 59, checked on one case's three renderings (``recommend``,
``recommend --json``, ``guide --format md``): :func:`check`. Each reads what a user reads
(the printed text, the JSON document, the Markdown guide) and fails with what it found.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from sizing.report.data.format import amount, currency_sign
from tests.proposal_cases import OTHER_CPU, Case
from tests.proposal_rules import (
    differences_subtract,
    every_platform,
    licence_rules,
    one_period,
)

WIDTH = 100  # the terminal's tables fit 100 columns


# -- reading the renderings ----------------------------------------------------------------


def _flat(text: str) -> str:
    return " ".join(text.split())


def money_re(currency: str) -> str:
    """An amount as printed in ``currency`` (``$1,234.50``, ``EUR 1,234``)."""
    return re.escape(currency_sign(currency)) + r"-?\d[\d,]*(?:\.\d\d)?"


def _named(doc: dict[str, Any]) -> set[str]:
    """Every catalog server the JSON names: in a fleet, an alternative, or refused."""
    names: set[str] = set()
    for c in [doc.get("recommendation"), *doc.get("alternatives", [])]:
        if c:
            names.add(c["server_name"])
    fleet = doc.get("cheapest_fleet")
    for part in fleet["servers"] if fleet else []:
        names.add(part["server_name"])
    names.update(r.get("server", "") for r in doc.get("rejected", []))
    return names


def _costs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cost breakdown of the JSON, each with the total it belongs to."""
    out = []
    sides = []
    platforms = doc.get("platforms") or {}
    for key in ("baremetal", "guest"):
        if platforms.get(key):
            sides.append(platforms[key])
    sides += list(platforms.get("others") or [])
    configs = [doc.get("recommendation"), *doc.get("alternatives", [])]
    for s in sides:
        configs.append(s.get("identical"))
    for c in configs:
        if c:
            out.append({**c["cost"], "_total": c["total_cost"]})
    fleets = [doc.get("cheapest_fleet"), *(s.get("fleet") for s in sides)]
    for f in fleets:
        if f:
            out.append({**f["cost"], "_total": f["total_cost"]})
    return out


def _plans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    platforms = doc.get("platforms") or {}
    sides = [platforms.get("baremetal"), platforms.get("guest"), *(platforms.get("others") or [])]
    plans = [doc.get("cash_flow"), *(s.get("cash_flow") for s in sides if s)]
    return [p for p in plans if p]


def _products(text: str, currency: str) -> list[tuple[int, str, str]]:
    """Every ``N × X = Y`` of money in ``text``."""
    m = money_re(currency)
    return [
        (int(n.replace(",", "")), x, y)
        # not the last term of a sum (``1 × $1,300 + 1 × $2,200 = $3,500``: _sums's)
        for n, x, y in re.findall(rf"(?<!\+ )(?<![\d,.])(\d[\d,]*) × ({m}) = ({m})", text)
    ]


def _capacities(text: str) -> list[tuple[int, str, str]]:
    """Every ``N servers × X = Y`` of capacity in ``text``."""
    return [
        (int(n), x, y) for n, x, y in re.findall(r"(\d+) servers? × ([\d,]+) = ≥?([\d,]+)", text)
    ]


def _half(text: str) -> float:
    """The most a printed amount is off its value: half a cent, or half a unit when
    printed in whole units (each line is rounded on its own: the issue's "to the cent")."""
    return 0.005 if "." in text else 0.5


def _number(text: str) -> float:
    return float(re.sub(r"[^\d.]", "", text))


def _sums(text: str, currency: str) -> list[tuple[list[tuple[int, str]], str]]:
    """Every ``A + B + ... = T`` of money in ``text`` (a cost told part by part), each
    term as (count, amount): ``2 × $1,300`` is (2, "$1,300"), a plain amount (1, it)."""
    m = money_re(currency)
    out = []
    # a sum runs from the last ":", ";", "|" or "=" before it (a table's cell, a line's
    # label) to its "= T"; terms without an amount ("no hypervisor licence") add nothing
    for left, total in re.findall(rf"([^=;|:]* \+ [^=;|:]*?{m}) = ({m})", text):
        terms = []
        for term in left.split(" + "):
            got = re.search(rf"(?:(\d[\d,]*) × )?({m})", term)
            if got:
                terms.append((int((got.group(1) or "1").replace(",", "")), got.group(2)))
        out.append((terms, total))
    return out


def _md_table(md: str, title: str) -> list[list[str]]:
    """The rows of the guide's Markdown table under ``### title`` (its cells, stripped)."""
    lines = md.splitlines()
    at = next((i for i, x in enumerate(lines) if x.startswith(f"### {title}")), None)
    if at is None:
        return []
    rows = []
    started = False
    for line in lines[at + 1 :]:
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if not set(line) <= set("|:- "):  # not the header's rule
                rows.append(cells)
        elif started:
            break
    return rows


# -- the invariants ------------------------------------------------------------------------


def check(case: Case, text: Any, js: Any, md: Any) -> str:
    """Every invariant of issue 59 on one case's three renderings; what the case showed of
    the Kubernetes option (for the run's statistics)."""
    assert "Traceback" not in text.output + js.output + md.output
    assert text.exit_code == js.exit_code, (text.output, js.output)
    if js.exit_code not in (0, 1):
        # a refusal: one clear line, the same from every command
        assert js.stderr.strip() and md.exit_code == js.exit_code, js.output
        return "refused"
    doc = json.loads(js.stdout)
    term, guide = _flat(text.stdout), _flat(md.stdout)
    cur = case.currency
    _every_server(case, doc)
    _json_adds_up(doc)
    _text_adds_up(term, cur)
    _text_adds_up(guide, cur)
    _cost_table_adds_up(md.stdout, case)
    _one_fleet(case, doc, term, guide)
    _currency(case, text.stdout + md.stdout)
    _redundancy(case, doc, term, guide)
    _platforms(case, doc, term, md.stdout)
    _figures(doc, term)
    _fits(text.stdout, doc, term)
    licence_rules(case, doc)
    one_period(case, doc, term, guide)
    differences_subtract(case, doc, guide)
    return every_platform(case, doc, term, guide)


def _every_server(case: Case, doc: dict[str, Any]) -> None:
    """Every catalog server is sized, passed over or refused by name, never dropped."""
    named = _named(doc)
    whole = any(r["cores_per_server"] is None for r in doc["rejected"])
    for s in case.servers:
        assert s["name"] in named or whole, (s, doc["rejected"])
    for r in doc["rejected"]:
        # refused for its CPU (a measured basis of another CPU): the run that would size it
        # targets a host of its CPU; passed over for a cheaper server of its core count on
        # the same (reference) figures, it is named with both prices instead
        if r.get("server") and f"has the CPU {OTHER_CPU}" in r["reason"]:
            assert f"add an {OTHER_CPU} host to the inventory" in r["reason"]


def _json_adds_up(doc: dict[str, Any]) -> None:
    """Every breakdown's parts make its total, its licence lines its licence."""
    for c in _costs(doc):
        parts = c["hardware"] + c["licence"] + c["support"] + c["power"]
        assert parts == pytest.approx(c["total"], abs=0.02), c
        assert c["total"] == pytest.approx(c["_total"], abs=0.02), c
        if c["licences"]:
            assert sum(x["cost"] for x in c["licences"]) == pytest.approx(c["licence"], abs=0.02)
    for plan in _plans(doc):
        rows = plan["rows"]
        assert sum(r["total"] for r in rows) == pytest.approx(plan["total"], abs=0.05)
        for r in rows:
            parts = r["hardware"] + r["licence"] + r["support"] + r["power"]
            assert parts == pytest.approx(r["total"], abs=0.02), r
            if r["licences"]:
                assert sum(x["cost"] for x in r["licences"]) == pytest.approx(
                    r["licence"], abs=0.02
                )
    rec = doc.get("recommended")
    if rec is not None:
        n = sum(p["count"] for p in rec["servers"])
        assert n == rec["server_count"]


def _text_adds_up(text: str, cur: str) -> None:
    """Every ``N × X = Y`` multiplies and every ``A + B = T`` adds, as printed (each
    printed amount rounded to whole units from 100 on: half a unit each)."""
    for n, x, y in _products(text, cur):
        slack = n * _half(x) + _half(y) + 1e-6
        assert n * _number(x) == pytest.approx(_number(y), abs=slack), (n, x, y)
    for n, x, y in _capacities(text):
        assert n * _number(x) == pytest.approx(_number(y), abs=0.5 * n + 0.5), (n, x, y)
    for terms, total in _sums(text, cur):
        slack = sum(n * _half(p) for n, p in terms) + _half(total) + 1e-6
        got = sum(n * _number(p) for n, p in terms)
        assert got == pytest.approx(_number(total), abs=slack), (terms, total)


def _cost_table_adds_up(md: str, case: Case) -> None:
    """The guide's cost table: each column's parts make its total; NGINX Plus (a line of
    ``all``) under its own name, never inside the hypervisor's row."""
    rows = _md_table(md, "What each option costs")
    if not rows:
        return
    head, body = rows[0], {r[0]: r[1:] for r in rows[1:]}
    assert "Total" in body, rows
    m = money_re(case.currency)
    for col in range(len(head) - 1):
        parts = [
            re.findall(m, v[col])[-1]
            for k, v in body.items()
            if k != "Total" and re.findall(m, v[col])
        ]
        total = _number(body["Total"][col])
        slack = sum(_half(p) for p in (*parts, body["Total"][col])) + 1e-6
        assert sum(_number(p) for p in parts) == pytest.approx(total, abs=slack), (head, body)
    for key, line in case.licence_lines():
        if key == "all":
            label = f"{line['name']} licence"
            paid = any(v != "–" for v in body.get(label, []))
            assert label in body and paid, (label, list(body))


def _one_fleet(case: Case, doc: dict[str, Any], term: str, guide: str) -> None:
    """The fleet called recommended, its total and the difference between options are
    one in the terminal, the JSON and the guide."""
    rec = doc.get("recommended")
    if rec is None:
        assert doc["recommendation"] is None
        return
    cur = case.currency
    total = amount(rec["total_cost"], cur)
    assert f"Recommended: {rec['label']}, {total}" in term, rec
    plan = doc.get("cash_flow")
    if plan and plan.get("growth_per_year"):
        headline = f"for {amount(plan['total'], cur)} over {plan['years']} years"
    else:
        headline = f"for {total}"
    assert headline in guide, headline
    # the recommendation box's headline, not only the summary's lead
    box = re.search(r"\*\*Recommendation for [^*]*:\*\* (.*?)(?: - \*\*| Figures|$)", guide)
    assert box is not None and box.group(1).endswith(headline), (box, headline)
    fleet = doc[rec["fleet"]]
    assert fleet is not None and round(fleet["total_cost"], 2) == rec["total_cost"]
    platforms = doc.get("platforms")
    if platforms and platforms.get("extra_cost") is not None:
        extra = platforms["extra_cost"]
        if abs(extra) >= 0.005:
            more = "more" if extra > 0 else "less"
            said = f"costs {amount(abs(extra), cur)} {more} than on bare metal"
            assert said in term and said in guide, said
    # every sentence comparing a platform with bare metal gives it one difference
    m = money_re(cur)
    stated: dict[tuple[str, str], set[str]] = {}
    for text in (term, guide):
        for name, diff, than in re.findall(
            rf"On (\w+) the same demand needs [^.]{{0,80}}? and costs ({m} (?:more|less)) "
            r"than on ([\w ]+?)[ .:(]",
            text,
        ):
            stated.setdefault((name, than), set()).add(diff)
    for name, diffs in stated.items():
        assert len(diffs) == 1, (name, diffs)


def _currency(case: Case, text: str) -> None:
    """Every amount carries the catalog's currency: no ``$`` on a non-USD catalog (unless
    a licence is listed in USD: its list price is quoted in it)."""
    if case.currency == "USD":
        return
    usd = any(line.get("currency") == "USD" for _, line in case.licence_lines())
    if not usd:
        assert not re.search(r"\$\d", text), re.search(r".{60}\$\d.{20}", text)
    assert "$/1k" not in text


def _redundancy(case: Case, doc: dict[str, Any], term: str, guide: str) -> None:
    """2N is one half of the fleet, N+1 one spare: each described as what it is."""
    if doc.get("recommendation") is None:
        return
    if case.redundancy == "2n":
        assert "(one spare)" not in term and "(one spare)" not in guide
        assert "(one half of the" in term
    elif case.redundancy == "none":
        assert "(one spare)" not in guide and "(one half of the" not in guide


def _platforms(case: Case, doc: dict[str, Any], term: str, md: str) -> None:
    """Every measured platform in every table that lists platforms."""
    measured = {"esxi": ["ESXi"], "esxi+kvm": ["ESXi", "KVM"]}.get(case.lab, [])
    if not measured or doc.get("recommendation") is None or not doc.get("platforms"):
        return
    options = _md_table(md, "The options side by side")
    names = [r[0] for r in options[1:]]
    for p in measured:
        assert any(n.startswith(p) for n in names), (p, names)
    for head in (r[0] for r in [_md_table(md, "Throughput per server")] if r):
        for p in measured:
            assert f"RPS – {p}" in head or f"SSL TPS – {p}" in head, head


def _figures(doc: dict[str, Any], term: str) -> None:
    """A figure's flags travel with it; no interval or coverage without repetitions."""
    for c in [doc.get("recommendation"), *doc.get("alternatives", [])]:
        if not c:
            continue
        assert set(c["flags"]) == {g for f in c["figures"] for g in f["flags"]}
        for f in c["figures"]:
            runs = re.search(r"of (\d+) runs", f["interval"] or "")
            if f["coverage"] is not None:
                # a coverage says what it covers: the runs of a measured point (two or
                # more), or the prediction it was made by
                assert f["interval"], f
                if f["source"] == "measured":
                    assert runs and int(runs.group(1)) >= 2, f
            if f["source"] == "reference":
                assert f["coverage"] is None and not runs, f
    best = doc.get("recommendation")
    if best:
        for flag in best["flags"]:
            assert flag in term, flag


def _fits(text: str, doc: dict[str, Any], term: str) -> None:
    """The terminal fits 100 columns, and keeps every year's total whole."""
    for line in text.splitlines():
        assert len(line) <= WIDTH, line
    plan = doc.get("cash_flow")
    if plan:
        cur = plan["currency"]
        for r in plan["rows"]:
            assert amount(r["total"], cur) in term, (r["year"], amount(r["total"], cur))
