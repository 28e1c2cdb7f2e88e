"""The Kubernetes option beside bare metal and the hypervisors (issue 59): when the catalog
prices a Kubernetes licence (OpenShift per socket pair, say), the same demand is sized on
Kubernetes in the same answer, on the same workload as the others, or the answer says
why it is not priced.

Its figures are, first, a measured container leg of that workload (``sizing_platform:
container``, ``inventories/container-lab.yml``: NGINX in a Podman container on a measured
host, priced with the catalog's Kubernetes licence, :func:`sizing.engine.licences.applying`),
else the bundled reference data of that workload (``reference/kubernetes``: the article's
NGINX Ingress Controller table, a reverse proxy to a 1 KB backend). A figure keeps its
basis and its flags; the option names the basis it was sized on. Figures of another
workload, another customer's replay, or without the demand's profiles never price it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sizing.engine.basis import Basis
from sizing.engine.choice import Choice
from sizing.engine.roles import role_of
from sizing.engine.workload_use import PROFILES_OF, role_name
from sizing.model import FigureKind
from sizing.workload import ROLE_WORDS, Role

__all__ = ["KUBERNETES", "KubernetesOption", "kubernetes_option"]

KUBERNETES = "kubernetes"
# The basis platforms that price the Kubernetes option: a measured container leg first.
_PLATFORMS = ("container", KUBERNETES)


@dataclass(frozen=True)
class KubernetesOption:
    """The basis that prices Kubernetes for the answer's workload (with the words that name
    it), or why none does (``basis`` None)."""

    basis: Basis | None
    words: str

    @property
    def platform(self) -> str:
        return KUBERNETES if self.basis is None else self.basis.platform


def _roles(choice: Choice) -> tuple[Role, ...]:
    """The workload roles the answer was sized on."""
    if choice.workload is not None and choice.workload.sized:
        return choice.workload.sized
    return tuple(dict.fromkeys(r for b in choice.bases if (r := role_of(b)) is not None))


def _words(roles: Sequence[Role]) -> str:
    return " and ".join(f"{ROLE_WORDS[r]} ({role_name(r)})" for r in roles) or "no known role"


def _named(b: Basis) -> str:
    """``reference/kubernetes (reference data: ...)``: the basis and how it was made."""
    if b.origin == FigureKind.REFERENCE:
        kind = "the published reference data (NGINX Ingress Controller), labelled reference"
        if any(f.lower_bound for f in b.figures):
            kind += "; its client-bound figures are lower bounds"
    else:
        kind = (
            "a measured container leg (NGINX in a Podman container: the container network "
            "path, not an Ingress Controller)"
        )
    return f"sized on {b.id} ({b.workload.label()}): {kind}"


def kubernetes_option(
    bases: Sequence[Basis],
    choice: Choice,
    profiles: Sequence[str],
    *,
    include_virtualized: bool,
    include_emulated: bool,
) -> KubernetesOption:
    """The Kubernetes option's basis for the workload ``choice`` sized on (see the
    module), or the reason it is not priced."""
    roles = _roles(choice)
    customer = {b.workload.customer for b in choice.bases}
    mine = [b for b in bases if b.platform in _PLATFORMS]
    why_not: list[str] = []
    for platform in _PLATFORMS:
        for b in (b for b in mine if b.platform == platform):
            role = role_of(b)
            if role not in roles:
                what = "an unknown workload" if role is None else _words((role,))
                why_not.append(f"{b.id} is of {what}, another workload")
                continue
            if b.workload.customer not in customer:
                why_not.append(f"{b.id} is not your replayed workload")
                continue
            ok, reason = b.qualifies(
                include_virtualized=include_virtualized, include_emulated=include_emulated
            )
            missing = [p.upper() for p in profiles if p not in b.profiles]
            if ok and missing:
                ok, reason = False, f"has no {' or '.join(missing)} figures"
            if ok:
                return KubernetesOption(b, _named(b))
            why_not.append(f"{b.id}: {reason}")
    run = ""
    measurable = [r for r in roles if r in PROFILES_OF]
    if measurable:
        run = (
            f"; measure a container leg of it (`sizing run -i inventories/container-lab.yml "
            f"--profile {PROFILES_OF[measurable[0]]}`)"
        )
    found = f" ({'; '.join(why_not)})" if why_not else ""
    return KubernetesOption(
        None,
        f"no Kubernetes or container figures of this answer's workload, {_words(roles)}"
        f"{found}{run}",
    )
