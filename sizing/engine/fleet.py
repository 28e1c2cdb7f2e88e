"""The cheapest fleet, searched exactly, and how likely it is to carry the demand. Pure.

**The problem.** Server types i (core counts of one basis, platform and HT mode) cost c_i
and carry a share m_i of the demand at 100% CPU: for a demand of RPS and TPS served in the
same mix on every server, m_i = 1 / Σ_j D_j / cap_ij. A fleet of x_i ≥ 0 servers (integers)
carries the demand within the headroom h when

    Σ m_i · x_i ≥ R = 1 / (1 − h)

and with N+1 when it still does after losing its largest server. :func:`cheapest` returns
the minimum of Σ c_i · x_i exactly: a depth-first branch and bound over the types in order
of cost per share, pruned by the linear relaxation's bound (the rest of the need bought at
the best remaining cost per share). N+1 is solved as: for each type k taken as the largest
server present, one k plus the cheapest cover of R by types no larger than k. The tests
prove it against an integer-program solver (SciPy's ``milp``) on generated catalogs.

**Confidence.** Given bootstrap draws of every type's share (identical servers share one
draw: their error is the same error), the confidence of a fleet is the share of draws in
which it carries the demand within the headroom (:func:`confidence`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

_EPS = 1e-9  # a demand exactly at capacity fits: float noise must not add a server


@dataclass(frozen=True)
class Offer:
    """One server type: what it costs and the share of the demand it carries at 100%."""

    price: float
    share: float


def _cover(offers: Sequence[Offer], need: float) -> tuple[float, tuple[int, ...]]:
    """The cheapest integer counts with Σ share · x ≥ need (exact branch and bound)."""
    n = len(offers)
    if need <= _EPS:
        return 0.0, (0,) * n
    order = sorted(range(n), key=lambda i: (offers[i].price / offers[i].share, offers[i].price))
    # greedy start: the best cost per share alone
    first = order[0]
    k0 = math.ceil(need / offers[first].share - _EPS)
    best_cost = k0 * offers[first].price
    best = [0] * n
    best[first] = k0
    counts = [0] * n
    tol = 1e-9 * max(1.0, best_cost)

    def dfs(pos: int, left: float, cost: float) -> None:
        nonlocal best_cost, best
        if left <= _EPS:
            if cost < best_cost - tol:
                best_cost, best = cost, counts.copy()
            return
        if pos == len(order):
            return
        i = order[pos]
        o = offers[i]
        if cost + left * (o.price / o.share) >= best_cost - tol:
            return  # even the best remaining cost per share cannot beat the incumbent
        top = math.ceil(left / o.share - _EPS)
        # the children's bound: the best cost per share after this type; fewer of this
        # type only raises it (its own cost per share is the lowest left), so the first
        # count whose child cannot beat the incumbent ends the loop
        nxt = min(
            (offers[j].price / offers[j].share for j in order[pos + 1 :]), default=math.inf
        )
        cheapest_left = min((offers[j].price for j in order[pos + 1 :]), default=math.inf)
        for x in range(top, -1, -1):
            rest = left - x * o.share
            here = cost + x * o.price
            if rest > _EPS:
                bound = here + max(rest * nxt, cheapest_left)
                if bound >= best_cost - tol:
                    break
            counts[i] = x
            dfs(pos + 1, rest, here)
        counts[i] = 0

    dfs(0, need, 0.0)
    return best_cost, tuple(best)


def cheapest(
    offers: Sequence[Offer], need: float, *, n_plus_1: bool = False
) -> tuple[float, tuple[int, ...]] | None:
    """The cheapest counts per offer that carry ``need`` (R = 1/(1−h)), with N+1 when
    asked; None when there is no offer."""
    usable = [o for o in offers if o.share > 0.0 and o.price >= 0.0]
    if not usable:
        return None
    if not n_plus_1:
        return _cover(offers, need) if len(usable) == len(offers) else _sub(offers, need, None)
    best: tuple[float, tuple[int, ...]] | None = None
    for k, ok in enumerate(offers):
        if ok.share <= 0.0:
            continue
        got = _sub(offers, need, ok.share)
        if got is None:
            continue
        cost = got[0] + ok.price
        counts = list(got[1])
        counts[k] += 1
        if best is None or cost < best[0] - 1e-9 * max(1.0, cost):
            best = (cost, tuple(counts))
    return best


def _sub(
    offers: Sequence[Offer], need: float, at_most: float | None
) -> tuple[float, tuple[int, ...]] | None:
    """:func:`_cover` over the offers with a positive share no larger than ``at_most``."""
    idx = [
        i
        for i, o in enumerate(offers)
        if o.share > 0.0 and (at_most is None or o.share <= at_most + 1e-15)
    ]
    if not idx:
        return None
    cost, counts = _cover([offers[i] for i in idx], need)
    full = [0] * len(offers)
    for j, i in enumerate(idx):
        full[i] = counts[j]
    return cost, tuple(full)


def identical(offer: Offer, need: float, *, n_plus_1: bool = False) -> int:
    """Servers of one type that carry ``need`` (one more with N+1)."""
    return max(1, math.ceil(need / offer.share - _EPS)) + (1 if n_plus_1 else 0)


def carries(shares: Sequence[float], counts: Sequence[int], need: float, n_plus_1: bool) -> bool:
    """Whether a fleet with these per-type shares carries ``need``."""
    total = sum(s * x for s, x in zip(shares, counts, strict=True))
    if n_plus_1:
        total -= max((s for s, x in zip(shares, counts, strict=True) if x > 0), default=0.0)
    return total >= need - _EPS


def confidence(
    draws: Sequence[Sequence[float]], counts: Sequence[int], need: float, n_plus_1: bool
) -> float:
    """The share of draws in which the fleet carries ``need``: ``draws[i][b]`` is type
    i's share in draw b (types used with a zero count may have any draws)."""
    used = [i for i, x in enumerate(counts) if x > 0]
    if not used:
        return 0.0
    n = min(len(draws[i]) for i in used)
    ok = 0
    for b in range(n):
        shares = [draws[i][b] if counts[i] > 0 else 0.0 for i in range(len(counts))]
        ok += carries(shares, counts, need, n_plus_1)
    return ok / n if n else 0.0
