"""Every platform in one answer (issues 44, 59): bare metal against the hypervisors'
guests and the Kubernetes option, each sized alone for the same demand on the same
workload, and the platforms the catalog prices that nothing sizes, each with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from sizing.app.assumed import what_would_price
from sizing.app.kubernetes import KUBERNETES, kubernetes_option
from sizing.engine import Demand, build_table
from sizing.engine.predict import Bootstrapper
from sizing.engine.recommend import Recommendation
from sizing.engine.versus import PlatformComparison, Side, guest_platform, overheads
from sizing.model import HYPERVISOR_PLATFORMS, Figure
from sizing.sources import BasisInputs

__all__ = ["compare_platforms"]

# sizes the answer's figures on some platforms, or other figures (the Kubernetes option's)
# on one, with the words naming them
Sized = Callable[..., Recommendation]


class Fitting(Protocol):
    """How the answer's series are fitted (:class:`sizing.app.sizing.EngineRequest`)."""

    @property
    def allow_extrapolation(self) -> bool:
        """``--allow-extrapolation``."""

    @property
    def bootstrapper(self) -> Bootstrapper | None:
        """The fit cache."""


def _kubernetes(
    inputs: BasisInputs, demand: Demand, sized: Sized, include: tuple[bool, bool]
) -> Side | None:
    """The Kubernetes option when the catalog prices a Kubernetes licence: sized on a
    container leg or the reference data of the answer's workload, or not priced, why said
    (:mod:`sizing.app.kubernetes`); None when the catalog prices none."""
    if KUBERNETES not in inputs.catalog.licences:
        return None
    got = kubernetes_option(
        inputs.bases,
        inputs.choice,
        demand.profiles,
        include_virtualized=include[0],
        include_emulated=include[1],
    )
    if got.basis is None:
        return Side(KUBERNETES, sized([KUBERNETES], (), got.words), not_priced=got.words)
    result = sized([got.platform], got.basis.figures, got.words)
    return Side(got.platform, result, sized_on=got.words)


def compare_platforms(
    figures: Sequence[Figure],
    inputs: BasisInputs,
    demand: Demand,
    sized: Sized,
    how: Fitting,
    include: tuple[bool, bool] = (False, False),
) -> PlatformComparison | None:
    """Bare metal against the other platforms for the demand, when the chosen figures
    hold bare metal and a hypervisor's guests, or the catalog prices Kubernetes: each
    sized alone, and the observed overheads between bare metal and the guests.
    ``include``: (virtualized hosts, emulated guests) may price the Kubernetes option."""
    present = {f.platform for f in figures}
    if "baremetal" not in present:
        return None
    guest = guest_platform(figures)
    kube = _kubernetes(inputs, demand, sized, include)
    if guest is None and kube is None:
        return None
    sides = [Side("baremetal", sized(["baremetal"]))]
    if guest is not None:
        sides.append(Side(guest, sized([guest])))
    others = [Side(p, sized([p])) for p in HYPERVISOR_PLATFORMS if p != guest and p in present]
    unpriced = [(p, what_would_price(p)) for p in HYPERVISOR_PLATFORMS if p not in present]
    if kube is not None and (guest is None or not kube.not_priced):
        # compared with bare metal when no guest is, else priced beside the guests
        (sides if guest is None else others).append(kube)
    elif kube is not None:
        unpriced.append((KUBERNETES, kube.not_priced))
    table = build_table(
        figures,
        sides[0].result.catalog or inputs.catalog,
        bases=inputs.bases,
        prices=inputs.prices,
        article_prices=inputs.article_prices,
        allow_extrapolation=how.allow_extrapolation,
        bootstrapper=how.bootstrapper,
        observed_only=True,  # only the observed overheads are read from it
    )
    return PlatformComparison(
        demand,
        sides[0],
        sides[1],
        # every measured guest's shares, the compared one's first (KVM beside ESXi)
        tuple(
            o
            for p in (guest, *(s.platform for s in others))
            if p is not None
            for o in overheads(table, p)
        ),
        inputs.catalog.currency,
        # the answer's period (--years when asked), not the catalog file's own
        sides[0].result.cost_basis,
        others=tuple(others),
        unpriced=tuple(unpriced),
    )
