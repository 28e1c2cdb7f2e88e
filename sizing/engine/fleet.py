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

**Order minimums and 2N.** A licence billing at least M units an order adds
p · max(0, M − Σ u_i · x_i) to a fleet's cost (:class:`Minimum`): each leaf of the search is
costed with it, and the linear bounds, which it never lowers, stay valid lower bounds, so
the search stays exact. 2N (``mirrored``) searches one half at twice the price and units
and buys its twin. ``fixed`` (growth) holds the servers already bought.

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
from collections.abc import Callable, Sequence
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


@dataclass(frozen=True)
class Minimum:
    """An order minimum (a licence that bills at least ``least`` units an order): each
    offer i pays ``units[i]`` units at ``price`` each (its offer price includes them), and
    a fleet paying fewer than ``least`` pays for the shortfall too."""

    price: float
    units: tuple[float, ...]
    least: float

    def shortfall(self, counts: Sequence[int]) -> float:
        """What this minimum adds to a fleet of ``counts``."""
        paid = sum(u * x for u, x in zip(self.units, counts, strict=True))
        return self.price * max(0.0, self.least - paid)


def order_cost(
    offers: Sequence[Offer], counts: Sequence[int], minimums: Sequence[Minimum] = ()
) -> float:
    """What a fleet of ``counts`` costs: its offers' prices and its order minimums."""
    linear = sum(o.price * x for o, x in zip(offers, counts, strict=True))
    return linear + sum(m.shortfall(counts) for m in minimums)


def _undominated(
    offers: Sequence[Offer], idx: Sequence[int], minimums: Sequence[Minimum] = ()
) -> list[int]:
    """The offers of ``idx`` that no other offer dominates (cheaper or equal and larger or
    equal; of identical ones the first). Under an order minimum an offer paying fewer
    units is charged, against the other, the most the shortfall can grow by."""
    keep = []
    for i in idx:
        a = offers[i]
        beaten = False
        for j in idx:
            if j == i:
                continue
            b = offers[j]
            price = b.price + sum(m.price * max(0.0, m.units[i] - m.units[j]) for m in minimums)
            if (price <= a.price and b.share >= a.share) and (
                price < a.price or b.share > a.share or j < i
            ):
                beaten = True
                break
        if not beaten:
            keep.append(i)
    return keep


def _cover(
    offers: Sequence[Offer], need: float, extra: Callable[[Sequence[int]], float]
) -> Solution:
    """The cheapest integer counts with Σ share · x ≥ need (branch and bound); a fleet's
    cost is Σ price · x + ``extra(counts)`` (its order minimums' shortfall, never
    negative), so the linear bounds stay lower bounds and the search stays exact."""
    n = len(offers)
    if need <= _EPS:
        zero = (0,) * n
        return Solution(extra(zero), zero)
    order = sorted(range(n), key=lambda i: (offers[i].price / offers[i].share, offers[i].price))
    # greedy start: the best cost per share alone
    first = order[0]
    # a positive need takes a server, however large it is (need / share may be below _EPS)
    k0 = max(1, math.ceil(need / offers[first].share - _EPS))
    best = [0] * n
    best[first] = k0
    best_cost = k0 * offers[first].price + extra(best)
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
            total = cost + extra(counts)
            if total < best_cost - tol:
                best_cost, best = total, counts.copy()
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


def cheapest(
    offers: Sequence[Offer],
    need: float,
    *,
    n_plus_1: bool = False,
    mirrored: bool = False,
    minimums: Sequence[Minimum] = (),
    fixed: Sequence[int] | None = None,
) -> Solution | None:
    """The cheapest counts per offer that carry ``need`` (R = 1/(1−h)), with N+1 when
    asked, or 2N (``mirrored``: every server has an identical twin, and either half
    carries the demand alone); None when there is no usable offer.

    ``fixed``: servers already bought (a year's fleet under growth): the counts returned
    are those to add, the cost is that of the fleet with them (the order minimums are the
    whole fleet's, the fixed servers' prices left out)."""
    n = len(offers)
    have = tuple(fixed) if fixed is not None else (0,) * n
    if mirrored:  # one half at twice the price and units, then its twin
        twin = [Offer(o.price * 2.0, o.share) for o in offers]
        mins = [Minimum(m.price, tuple(2 * u for u in m.units), m.least) for m in minimums]
        got = cheapest(twin, need, minimums=mins, fixed=[x // 2 for x in have])
        if got is None:
            return None
        return Solution(got.cost, tuple(2 * x for x in got.counts), got.exact, got.bound)
    idx = _undominated(
        offers, [i for i, o in enumerate(offers) if o.share > 0.0 and o.price >= 0.0], minimums
    )
    if not idx:
        return None
    carried = sum(o.share * x for o, x in zip(offers, have, strict=True))
    if not n_plus_1:
        return _sub(offers, need - carried, idx, None, minimums, have)
    present = [i for i in range(n) if have[i] > 0]
    top = max((offers[i].share for i in present), default=0.0)
    best: Solution | None = None
    exact = True
    bound = math.inf
    for k in dict.fromkeys([*idx, *present]):
        if offers[k].share < top:
            continue  # the largest server present is at least the largest bought
        # k is the largest present: the fleet less one k carries the need
        forced = [0] * n
        if not have[k]:
            forced[k] = 1
        rest = need - carried + (offers[k].share if have[k] else 0.0)
        base = [h + f for h, f in zip(have, forced, strict=True)]
        got = _sub(offers, rest, idx, offers[k].share, minimums, base)
        if got is None:
            continue
        exact = exact and got.exact
        own = offers[k].price * forced[k]
        bound = min(bound, got.bound + own)
        counts = [x + f for x, f in zip(got.counts, forced, strict=True)]
        cost = got.cost + own
        if best is None or cost < best.cost - 1e-9 * max(1.0, cost):
            best = Solution(cost, tuple(counts))
    if best is None:
        return None
    return Solution(best.cost, best.counts, exact=exact, bound=bound)


def _sub(
    offers: Sequence[Offer],
    need: float,
    idx: Sequence[int],
    at_most: float | None,
    minimums: Sequence[Minimum],
    have: Sequence[int],
) -> Solution | None:
    """:func:`_cover` over the offers of ``idx`` no larger than ``at_most``, the fleet
    ``have`` already counted in its order minimums."""
    use = [i for i in idx if at_most is None or offers[i].share <= at_most + 1e-15]
    if not use:
        return None

    def full(sub: Sequence[int]) -> list[int]:
        out = list(have)
        for j, i in enumerate(use):
            out[i] += sub[j]
        return out

    def extra(sub: Sequence[int]) -> float:
        return sum(m.shortfall(full(sub)) for m in minimums) if minimums else 0.0

    got = _cover([offers[i] for i in use], need, extra)
    added = [0] * len(offers)
    for j, i in enumerate(use):
        added[i] = got.counts[j]
    return Solution(got.cost, tuple(added), got.exact, got.bound)


def identical(offer: Offer, need: float, *, n_plus_1: bool = False, mirrored: bool = False) -> int:
    """Servers of one type that carry ``need`` (one more with N+1, twice as many with 2N)."""
    n = max(1, math.ceil(need / offer.share - _EPS))
    return 2 * n if mirrored else n + (1 if n_plus_1 else 0)


def carries(
    shares: Sequence[float],
    counts: Sequence[int],
    need: float,
    n_plus_1: bool,
    mirrored: bool = False,
) -> bool:
    """Whether a fleet with these per-type shares carries ``need`` (2N: with half of it)."""
    total = sum(s * x for s, x in zip(shares, counts, strict=True))
    if n_plus_1:
        total -= max((s for s, x in zip(shares, counts, strict=True) if x > 0), default=0.0)
    if mirrored:
        total /= 2.0
    return total >= need - _EPS


def confidence(
    draws: Sequence[Sequence[float]],
    counts: Sequence[int],
    need: float,
    n_plus_1: bool,
    mirrored: bool = False,
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
        ok += carries(shares, counts, need, n_plus_1, mirrored)
    return ok / n if n else 0.0
