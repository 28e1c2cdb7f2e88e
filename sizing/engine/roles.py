"""The workload's role in the choice of bases (issue 57): a demand is sized on figures of
its own role, or refused, or (when the user allows it) sized on the closest role with the
direction of the error said on every rendering. Never silently another role.

- No role asked (``--rps``/``--tps`` alone): the default choice of :func:`choose` over the
  measured bases of the roles that always sized (load balancing and static files) and the
  reference data, as before; the answer names the workload it sized on and lists the
  other workloads measured, each with the ``--role`` that sizes on it.
- A role asked (``--role``, or the demand file's workload): the choice among that role's
  bases alone (measured first, then the reference data of that role). None: a
  :class:`UsageError` in one line naming the run that measures it, or with
  ``allow_other`` the closest role's choice (:data:`sizing.workload.ROLE_COST_RANK`,
  measured before reference), flagged.
- ``--basis`` names the bases: taken as asked, refused when a role asked differs (unless
  allowed, then flagged).

Pure: the bases come from :mod:`sizing.sources`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sizing.engine.basis import Basis
from sizing.engine.choice import Choice, choose
from sizing.engine.workload_use import (
    PROFILES_OF,
    WorkloadUse,
    measuring_run,
    role_name,
    role_of_text,
)
from sizing.errors import UsageError
from sizing.model import FigureKind
from sizing.workload import ROLE_COST_RANK, ROLE_WORDS, Role

__all__ = ["DEFAULT_ROLES", "WorkloadAsk", "choose_workload", "role_of"]

# The roles whose measured figures size when no role is asked: those that always did.
DEFAULT_ROLES = frozenset({Role.STATIC, Role.LOAD_BALANCE})
# Among roles as far from the one needed, the closer in kind first.
_ORDER = (Role.LOAD_BALANCE, Role.PROXY, Role.STATIC, Role.API_JWT)


@dataclass(frozen=True)
class WorkloadAsk:
    """The workload asked: its role (None: none asked), who stated it (``--role``, ``the
    demand file``) and whether another role's figures may size it, flagged."""

    role: Role | None = None
    stated_by: str = ""
    allow_other: bool = False
    # the demand file's own workload (WorkloadMix.key()): a replay of it in the lab sizes it
    customer: str = ""
    demand_file: str = ""  # its path, as given: the replay run a refusal names


def role_of(b: Basis) -> Role | None:
    """A basis' workload role."""
    return role_of_text(b.workload.role)


def choose_workload(
    bases: Sequence[Basis],
    requested: Sequence[str] | None = None,
    ask: WorkloadAsk | None = None,
    **how: Any,
) -> Choice:
    """The bases to size from for the workload ``ask`` (see the module); ``how``:
    :func:`choose`'s options."""
    ask = ask or WorkloadAsk()
    if requested:
        return _as_asked(bases, requested, ask, how)
    replayed, why_not = _replayed(bases, ask, how)
    if replayed is not None:
        return _finish(replayed, bases, ask)
    if why_not:  # a replay of this very workload exists, but cannot size: said, then the role
        got = _by_role(bases, ask, how)
        return replace(got, why=f"{got.why}; {why_not}")
    return _by_role(bases, ask, how)


def _replayed(
    bases: Sequence[Basis], ask: WorkloadAsk, how: dict[str, Any]
) -> tuple[Choice | None, str]:
    """The bases that replayed the demand's own workload in the lab (issue 57): measured
    with the customer's mix, they size its demand before any profile's figures; or why a
    replay of it that exists cannot size ("" when there is none)."""
    if not ask.customer:
        return None, ""
    mine = [b for b in bases if b.workload.customer == ask.customer]
    if not mine:
        return None, ""
    usable: list[Basis] = []
    reasons: list[str] = []
    for b in mine:
        ok, why = b.qualifies(
            include_virtualized=bool(how.get("include_virtualized")),
            include_emulated=bool(how.get("include_emulated")),
        )
        serves = how.get("serves")
        if serves is not None:  # the replay's RPS carries the mix's TLS work: no TPS asked
            serves = replace(serves, profiles=tuple(p for p in serves.profiles if p != "tps"))
        if ok and serves is not None and not serves.met_by(b):
            ok, why = False, f"has no {serves.describe()} figures"
        if ok:
            usable.append(b)
        else:
            reasons.append(f"{b.id}: {why}")
    if not usable:
        return None, (
            "your own workload was replayed in the lab but cannot size it ("
            + "; ".join(reasons)
            + ")"
        )
    ids = ", ".join(b.id for b in usable)
    why = (
        f"your own workload, replayed in the lab ({ids}): measured with your traffic's mix"
        " (sizes, requests per connection, TLS and resumption) and checked against it"
    )
    chosen = {b.id for b in usable}
    passed = tuple(
        (b.id, "not your workload's replay: yours was measured")
        for b in bases
        if b.id not in chosen
    )
    return Choice(tuple(usable), why, passed), ""


def _by_role(bases: Sequence[Basis], ask: WorkloadAsk, how: dict[str, Any]) -> Choice:
    """The choice by the workload's role (see the module)."""
    if ask.role is None:
        offered = [b for b in bases if b.origin != FigureKind.MEASURED or _default(b)]
        return _finish(choose(offered, **how), bases, ask)
    mine = _pick(bases, ask.role, how)
    if mine is not None:
        return _finish(mine, bases, ask)
    others = [(r, c) for r in Role if r is not ask.role for c in [_pick(bases, r, how)] if c]
    closest = _closest(others, ask.role)
    if not ask.allow_other or closest is None:
        raise UsageError(_refusal(bases, ask, closest, how))
    return _finish(closest[1], bases, ask)


def _closest(others: Sequence[tuple[Role, Choice]], role: Role) -> tuple[Role, Choice] | None:
    """The other role's choice closest to ``role``: nearest in CPU cost per request, then
    measured before reference, then the closer in kind."""
    if not others:
        return None
    need = ROLE_COST_RANK[role]
    return min(
        others,
        key=lambda rc: (
            abs(ROLE_COST_RANK[rc[0]] - need),
            not _measured(rc[1]),
            _ORDER.index(rc[0]),
        ),
    )


def _default(b: Basis) -> bool:
    return role_of(b) in DEFAULT_ROLES


def _measured(c: Choice) -> bool:
    return any(b.origin == FigureKind.MEASURED for b in c.bases)


def _pick(bases: Sequence[Basis], role: Role, how: dict[str, Any]) -> Choice | None:
    """The choice among ``role``'s bases alone; None when none can size."""
    # a customer's replay sizes only that customer's demand (_replayed) or when named
    subset = [b for b in bases if role_of(b) is role and not b.workload.customer]
    if not subset:
        return None
    got = choose(subset, **how)
    return got if got.bases else None


def _as_asked(
    bases: Sequence[Basis], requested: Sequence[str], ask: WorkloadAsk, how: dict[str, Any]
) -> Choice:
    """``--basis``: the bases named; a role asked that they are not of is refused in one
    line, or flagged when allowed."""
    got = choose(bases, requested, **how)
    sized = [role_of(b) for b in got.bases]
    if ask.role is not None and any(r is not ask.role for r in sized) and not ask.allow_other:
        of = ", ".join(
            f"{b.id} ({role_name(r) if r else b.workload.role})"
            for b, r in zip(got.bases, sized, strict=True)
            if r is not ask.role
        )
        raise UsageError(
            f"--basis {of} is not {ROLE_WORDS[ask.role]} ({role_name(ask.role)}), which "
            f"{ask.stated_by or 'the request'} asks for: name a basis of that workload, "
            "or add --allow-other-workload to size on it anyway, flagged"
        )
    if ask.role is None:  # the workload is the one the bases named are of
        ask = replace(ask, stated_by="--basis")
    return _finish(got, bases, ask)


def _finish(got: Choice, bases: Sequence[Basis], ask: WorkloadAsk) -> Choice:
    """The choice with its workload said: the roles sized, the one asked, the other
    workloads measured, and the bases of other roles passed over as such."""
    sized = tuple(dict.fromkeys(r for b in got.bases if (r := role_of(b)) is not None))
    held: dict[Role, Basis] = {}
    for b in sorted(bases, key=lambda b: b.id):
        r = role_of(b)
        if (
            r is not None
            and r not in sized
            and b.origin == FigureKind.MEASURED
            and b.figures
            and not b.pooled_into
        ):
            held.setdefault(r, b)
    use = WorkloadUse(
        sized=sized,
        needed=ask.role,
        stated_by=ask.stated_by,
        others=tuple(
            sorted(((r, b.id) for r, b in held.items()), key=lambda rb: _ORDER.index(rb[0]))
        ),
        # an example store's made-up figures are never called measured
        others_simulated=bool(held) and all("simulated" in b.flags for b in held.values()),
    )
    seen = {b.id for b in got.bases} | {i for i, _ in got.passed_over}
    passed = got.passed_over + tuple(
        (b.id, f"another workload: {ROLE_WORDS[r] if r else b.workload.role}")
        for b in bases
        if b.id not in seen
        for r in [role_of(b)]
    )
    return replace(got, why=f"{got.why}; {use.sentence()}", passed_over=passed, workload=use)


def _refusal(
    bases: Sequence[Basis],
    ask: WorkloadAsk,
    closest: tuple[Role, Choice] | None,
    how: dict[str, Any],
) -> str:
    """One line: the workload needed, why none of its bases sizes, the run that measures
    it, and (when another role could size it) the option that would, flagged."""
    assert ask.role is not None
    role = ask.role
    mine = [
        b
        for b in bases
        if role_of(b) is role and b.workload.customer in ("", ask.customer)  # not another's
    ]
    why = ""
    if mine:
        reasons = choose(mine, **how).passed_over
        why = " (" + "; ".join(f"{i}: {r}" for i, r in reasons) + ")" if reasons else ""
    cores = "1,2,4,8"  # the measured hardware's counts, when the closest was measured
    if closest is not None and _measured(closest[1]):
        cores = ",".join(str(n) for n in closest[1].bases[0].core_counts()) or cores
    asks = f"{ask.stated_by or 'the request'} asks for {ROLE_WORDS[role]} ({role_name(role)})"
    if mine:  # measured, but not what this demand needs (a gateway has no TPS figures)
        text = (
            f"{asks}, and its figures cannot size this demand{why}: measure what they lack"
            f" (`{measuring_run(role, cores)}` measures {PROFILES_OF[role]} only)"
        )
    else:
        text = (
            f"{asks}, and no basis holds figures of it{why}: measure it with"
            f" `{measuring_run(role, cores)}`"
        )
    if ask.customer:  # the demand's own mix can be measured too
        text += (
            ", or replay the demand's own mix: `sizing run -i INVENTORY --cores "
            f"{cores} --workload {ask.demand_file or 'DEMAND_FILE'}`"
        )
    if closest is not None:
        r, c = closest
        text += (
            f", or size on the closest workload, {ROLE_WORDS[r]} ({', '.join(c.ids)}), with"
            " --allow-other-workload (flagged)"
        )
    return text
