"""Where the socket ends: a prediction beyond the cores of one socket, from figures all
measured within one socket, crosses what was never measured (a second memory controller,
NUMA, interrupts across the interconnect), exactly where scaling changes.

Such a prediction is refused unless extrapolation is allowed; allowed, it is labelled
``beyond-socket``, its interval is widened down to "no gain beyond one socket", and it
carries no draws (no stated confidence rests on it). Measuring across the boundary (16
cores on a 2 × 8 host) removes the label.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sizing.model import PREDICTED, Figure

__all__ = ["BEYOND_SOCKET", "beyond_socket", "crosses"]

BEYOND_SOCKET = "beyond-socket"


def crosses(socket_cores: int | None, measured_top: int, cores: int) -> bool:
    """True when ``cores`` lies beyond one socket of ``socket_cores`` cores and every
    figure was measured within one socket (up to ``measured_top`` cores)."""
    return socket_cores is not None and measured_top <= socket_cores < cores


def beyond_socket(
    got: Figure | str,
    *,
    cores: int,
    socket_cores: int | None,
    measured_top: int,
    at: Callable[[int], Figure | str],
    allow: bool,
    name: str,
) -> Figure | str:
    """The socket rule applied to a prediction ``got`` at ``cores`` (module docstring);
    ``at`` gives the series' figure at ``socket_cores`` (the widened interval's low end:
    no gain beyond one socket)."""
    if isinstance(got, str) or got.source not in PREDICTED:
        return got
    if socket_cores is None or not crosses(socket_cores, measured_top, cores):
        return got
    if not allow:
        return (
            f"no figure at {cores} cores on {name}: beyond one socket ({socket_cores} cores) "
            f"while every figure was measured within one socket (up to {measured_top} "
            f"cores): not measured; measure across the socket boundary (e.g. --cores "
            f"{2 * socket_cores} on this {socket_cores}-core-per-socket host), or pass "
            "--allow-extrapolation to predict it, labelled and widened"
        )
    at_socket = at(socket_cores)
    floor = at_socket.conservative if isinstance(at_socket, Figure) else None
    low = got.ci_low if got.ci_low is not None else got.value
    if floor is not None:
        low = min(low, floor)
    words = (
        f"{got.interval}; beyond one socket: not measured, widened down to no gain beyond "
        f"{socket_cores} cores"
    ).lstrip("; ")
    return replace(
        got,
        ci_low=low,
        ci_high=got.ci_high if got.ci_high is not None else got.value,
        flags=tuple(dict.fromkeys((*got.flags, BEYOND_SOCKET))),
        coverage=None,
        interval=words,
    )
