"""Ask, do not switch: when the bases chosen for a request cannot answer what it asks
(an HT mode, a platform, a confidence), say in one line what exists and the command that
asks for it, instead of answering from another workload."""

from __future__ import annotations

from collections.abc import Sequence

from sizing.engine import Demand
from sizing.engine.basis import Basis
from sizing.engine.choice import Choice
from sizing.errors import UsageError
from sizing.model import HYPERVISOR_PLATFORMS, FigureKind, HtChoice
from sizing.sizing_request import SizingRequest
from sizing.sources import BasisInputs

__all__ = ["refuse_confidence", "what_exists"]

# The reference data's platforms in the words the article uses for them.
_REFERENCE_WORDS = {
    "baremetal": "bare metal",
    "esxi": "the article's hypervisor (ESXi)",
    "kubernetes": "the Kubernetes Ingress Controller",
}


def refuse_confidence(choice: Choice) -> None:
    """``--confidence`` draws from the repetitions of measured figures: the reference data
    have none, and a figure of one repetition has nothing to draw from."""
    if any(len(f.reps) > 1 for f in choice.figures):
        return
    if all(b.origin == FigureKind.REFERENCE for b in choice.bases):
        raise UsageError(
            "--confidence: reference data have no repetitions: --confidence needs measured "
            "runs (sizing run); without it the answer states how likely it is to carry the "
            "demand"
        )
    raise UsageError(
        "--confidence: the figures chosen have a single repetition each, nothing to draw "
        "from: measure with --repeat 3 or more, or drop --confidence"
    )


def _who(b: Basis, profiles: Sequence[str] = ()) -> str:
    what = "".join(p.upper() + ", " for p in profiles)
    if b.origin == FigureKind.REFERENCE:
        return f"{_REFERENCE_WORDS.get(b.platform, b.platform)} ({what}reference data)"
    return f"{b.id} ({what}measured)"


def _platform_flag(b: Basis) -> str:
    return f"--platform {b.platform}" if b.origin == FigureKind.REFERENCE else f"--basis {b.id}"


def _ht_line(req: SizingRequest, profiles: Sequence[str], inputs: BasisInputs) -> str:
    """The HT mode asked is not in the chosen bases: where it was measured."""
    ht = req.ht.value
    chosen = inputs.choice.bases
    if any(f.ht == ht and f.profile in profiles for b in chosen for f in b.figures):
        return ""
    holders = [
        (b, sorted({f.profile for f in b.figures if f.ht == ht}))
        for b in inputs.bases
        if b not in chosen and any(f.ht == ht for f in b.figures)
    ]
    asked = "/".join(p.upper() for p in profiles)
    if not holders:
        return (
            f"HT {ht} was not measured for {asked}, neither by you nor in the reference data: "
            f"measure it (`sizing run --ht {ht}`) or drop --ht"
        )
    where = "; ".join(_who(b, ps) for b, ps in holders)
    serving = [b for b, ps in holders if all(p in ps for p in profiles)]
    if serving:
        cmd = f"`{_platform_flag(serving[0])} --ht {ht}`"
        return f"HT {ht} was measured only for {where}: {cmd}"
    return (
        f"HT {ht} was measured only for {where}, not for {asked}: measure it "
        f"(`sizing run --ht {ht}`) or drop --ht"
    )


def _platform_line(req: SizingRequest, inputs: BasisInputs) -> str:
    """The platform asked has no figures: which platforms of its family do."""
    asked = str(req.platform)
    if any(b.platform == asked for b in inputs.choice.bases):
        return ""
    family = set(HYPERVISOR_PLATFORMS) if asked in HYPERVISOR_PLATFORMS else {asked}
    others = [b for b in inputs.bases if b.platform in family and b.platform != asked]
    if not others:
        return (
            f"{asked} was neither measured nor published in the reference data: measure a "
            f"{asked} host (`sizing run` with an inventory that declares one)"
        )
    b = others[0]
    if asked in HYPERVISOR_PLATFORMS:
        return (
            f"{_who(b)} has {b.platform} figures; to price {asked}: measure a {asked} guest "
            f"(`sizing run -i INVENTORY`, an inventory that declares one: "
            f"inventories/{asked}-lab.yml shows how), or size it from a stated guest share "
            f"of bare metal's figures: `--assume guest-share={asked}:SHARE --assume-source "
            "TEXT`"
        )
    if b.origin == FigureKind.REFERENCE and b.platform == "esxi":
        return (
            f"the article's hypervisor is ESXi ({asked} was not measured): "
            "`--platform esxi` (or `--platform hypervisor` for either)"
        )
    return f"{_who(b)} has {b.platform} figures: `{_platform_flag(b)}`"


def what_exists(req: SizingRequest, demand: Demand, inputs: BasisInputs) -> str:
    """One line for an answer that could not be given because the request asked for what
    the chosen bases do not hold; empty when that is not why."""
    if req.p95 is not None:
        return ""
    if req.platform is not None and str(req.platform) != "hypervisor":
        line = _platform_line(req, inputs)
        if line:
            return line
    if req.ht in (HtChoice.ON, HtChoice.OFF):
        return _ht_line(req, demand.profiles, inputs)
    return ""
