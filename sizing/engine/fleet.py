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

Offers dominated by another (no cheaper, no larger) are dropped first: replacing one by its
dominator never raises the cost nor breaks a constraint, N+1 included. Exact ties in cost
per share leave the linear bound unable to tell branches apart; the search therefore has a
node budget (:data:`NODE_BUDGET`, far above what a real catalog needs): past it, the best
fleet found is returned marked not proven optimal, with its gap to the linear lower bound,
and the answer says so.

**Confidence.** Given bootstrap draws of every type's share (identical servers share one
draw: their error is the same error), the confidence of a fleet is the share of draws in
which it carries the demand within the headroom (:func:`confidence`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

_EPS = 1e-9  # a demand exactly at capacity fits: float noise must not add a server
NODE_BUDGET = 200_000


@dataclass(frozen=True)
class Solution:
    """The cheapest fleet found: its cost, the count of each offer, whether it is proven
    optimal, and the linear lower bound on any fleet's cost."""

    cost: float
    counts: tuple[int, ...]
    exact: bool = True
    bound: float = 0.0

    @property
    def gap(self) -> float:
        """How far above the lower bound the fleet may be (0 when proven optimal)."""
        return 0.0 if self.exact or self.cost <= 0 else max(0.0, 1.0 - self.bound / self.cost)


@dataclass(frozen=True)
class Offer:
    """One server type: what it costs and the share of the demand it carries at 100%."""

    price: float
    share: float


def _undominated(offers: Sequence[Offer], idx: Sequence[int]) -> list[int]:
    """The offers of ``idx`` that no other offer dominates (cheaper or equal and larger or
    equal; of identical ones the first)."""
    keep = []
    for i in idx:
        a = offers[i]
        beaten = any(
            (b.price <= a.price and b.share >= a.share)
            and (b.price < a.price or b.share > a.share or j < i)
            for j in idx
            if j != i
            for b in (offers[j],)
        )
        if not beaten:
            keep.append(i)
    return keep


def _cover(offers: Sequence[Offer], need: float) -> Solution:
    """The cheapest integer counts with Σ share · x ≥ need (branch and bound)."""
    n = len(offers)
    if need <= _EPS:
        return Solution(0.0, (0,) * n)
    order = sorted(range(n), key=lambda i: (offers[i].price / offers[i].share, offers[i].price))
    # greedy start: the best cost per share alone
    first = order[0]
    # a positive need takes a server, however large it is (need / share may be below _EPS)
    k0 = max(1, math.ceil(need / offers[first].share - _EPS))
    best_cost = k0 * offers[first].price
    best = [0] * n
    best[first] = k0
    counts = [0] * n
    tol = 1e-9 * max(1.0, best_cost)
    nodes = 0
    lp_bound = need * offers[first].price / offers[first].share

    class _Budget(Exception):
        pass

    def dfs(pos: int, left: float, cost: float) -> None:
        nonlocal best_cost, best, nodes
        nodes += 1
        if nodes > NODE_BUDGET:
            raise _Budget
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
        top = max(1, math.ceil(left / o.share - _EPS))
        # The children's linear bound, here + rest x (the best cost per share after this
        # type), never falls as this type's count falls (its own cost per share is the
        # lowest left): the first count whose linear bound cannot beat the incumbent ends
        # the loop. "At least one more server" is a bound too, but not monotone: it only
        # skips a count.
        nxt = min((offers[j].price / offers[j].share for j in order[pos + 1 :]), default=math.inf)
        cheapest_left = min((offers[j].price for j in order[pos + 1 :]), default=math.inf)
        for x in range(top, -1, -1):
            rest = left - x * o.share
            here = cost + x * o.price
            if rest > _EPS:
                if here + rest * nxt >= best_cost - tol:
                    break
                if here + cheapest_left >= best_cost - tol:
                    continue
            counts[i] = x
            dfs(pos + 1, rest, here)
        counts[i] = 0

    try:
        dfs(0, need, 0.0)
    except _Budget:
        return Solution(best_cost, tuple(best), exact=False, bound=lp_bound)
    return Solution(best_cost, tuple(best), bound=lp_bound)


def cheapest(offers: Sequence[Offer], need: float, *, n_plus_1: bool = False) -> Solution | None:
    """The cheapest counts per offer that carry ``need`` (R = 1/(1−h)), with N+1 when
    asked; None when there is no usable offer."""
    idx = _undominated(
        offers, [i for i, o in enumerate(offers) if o.share > 0.0 and o.price >= 0.0]
    )
    if not idx:
        return None
    if not n_plus_1:
        return _sub(offers, need, idx, None)
    best: Solution | None = None
    exact = True
    bound = math.inf
    for k in idx:
        got = _sub(offers, need, idx, offers[k].share)
        if got is None:
            continue
        exact = exact and got.exact
        bound = min(bound, got.bound + offers[k].price)
        counts = list(got.counts)
        counts[k] += 1
        cost = got.cost + offers[k].price
        if best is None or cost < best.cost - 1e-9 * max(1.0, cost):
            best = Solution(cost, tuple(counts))
    if best is None:
        return None
    return Solution(best.cost, best.counts, exact=exact, bound=bound)


def _sub(
    offers: Sequence[Offer], need: float, idx: Sequence[int], at_most: float | None
) -> Solution | None:
    """:func:`_cover` over the offers of ``idx`` no larger than ``at_most``."""
    use = [i for i in idx if at_most is None or offers[i].share <= at_most + 1e-15]
    if not use:
        return None
    got = _cover([offers[i] for i in use], need)
    full = [0] * len(offers)
    for j, i in enumerate(use):
        full[i] = got.counts[j]
    return Solution(got.cost, tuple(full), got.exact, got.bound)


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
