"""Which workload an answer was sized on, against the one it was asked for (issue 57).

A basis never mixes workloads (DESIGN.md), and a customer's workload has a role
(:class:`sizing.workload.Role`: static files, load balancing, reverse proxy, an API gateway
validating a JWT). :class:`WorkloadUse` is what the choice of bases says about it, in
every rendering: the role sized, the role needed and who stated it, the direction of the
error when the user allowed another role's figures (``--allow-other-workload``), and the
other workloads the figures hold, each with a basis to name and the option that sizes on it.

Pure, and beside :mod:`sizing.engine.choice`, which carries it in its :class:`Choice`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sizing.workload import ROLE_WORDS, Role, other_workload_error, parse_role

__all__ = ["PROFILES_OF", "WorkloadUse", "measuring_run", "role_name", "role_of_text"]

# The bundled profiles that measure each role's sizing figures (`sizing run --profile`).
PROFILES_OF = {
    Role.STATIC: "static-rps,static-tps",
    Role.LOAD_BALANCE: "rps,tps",
    Role.PROXY: "proxy",
    Role.API_JWT: "api-jwt",
}


def role_of_text(text: str) -> Role | None:
    """A basis workload's role (``static``, ``load-balance``, ``proxy``, ``api-jwt``) as a
    :class:`Role`; None for a role this version does not know."""
    try:
        return parse_role(text)
    except ValueError:
        return None


def measuring_run(role: Role, cores: str = "1,2,4,8") -> str:
    """The run that measures a role's sizing figures, as a user types it."""
    return f"sizing run -i INVENTORY --cores {cores} --profile {PROFILES_OF[role]}"


def _words(role: Role | None) -> str:
    return "an unknown workload" if role is None else ROLE_WORDS[role]


def role_name(role: Role) -> str:
    """A role as a basis' workload names it (``static``, not the profiles' ``web``)."""
    return "static" if role is Role.STATIC else role.value


@dataclass(frozen=True)
class WorkloadUse:
    """The workload an answer was sized on and the one it was asked for (see the module).

    ``needed`` is None when no role was asked (``--rps``/``--tps`` alone): the default
    choice, the load-balancing and static-file figures that always sized. ``stated_by``
    says who asked (``--role``, ``the demand file``). ``others`` are the other workloads the
    figures hold: (role, a basis of it)."""

    sized: tuple[Role, ...]
    needed: Role | None = None
    stated_by: str = ""
    others: tuple[tuple[Role, str], ...] = ()
    others_simulated: bool = False  # the others' figures are made up (examples/simulated.py)

    @property
    def other_workload(self) -> bool:
        """Sized on figures of another role than the one asked (``--allow-other-workload``)."""
        return self.needed is not None and any(r is not self.needed for r in self.sized)

    @property
    def error(self) -> str:
        """The direction of the error in words when sized on another role; else empty."""
        if not self.other_workload or self.needed is None:
            return ""
        sized = next(r for r in self.sized if r is not self.needed)
        return other_workload_error(sized, self.needed)

    def sentence(self) -> str:
        """The workload in words: what was sized, as asked or flagged, and the others."""
        sized = " and ".join(f"{_words(r)} ({role_name(r)})" for r in self.sized) or "no workload"
        if self.needed is None and self.stated_by:
            text = f"workload: {sized}, as {self._stated()}"
        elif self.needed is None:
            text = f"workload: {sized}, the default (--role sizes another)"
        elif not self.other_workload:
            text = f"workload: {sized}, as {self._stated()}"
        else:
            text = (
                f"OTHER WORKLOAD: {self.stated_by or 'the request'} asks for "
                f"{_words(self.needed)} ({role_name(self.needed)}), sized on {sized} figures "
                f"(--allow-other-workload): {self.error}"
            )
        if self.others:
            text += "; " + self.others_line()
        return text

    def _stated(self) -> str:
        """``asked with --role`` or ``the demand file states``."""
        if not self.stated_by:
            return "asked"
        if self.stated_by.startswith("--"):
            return f"asked with {self.stated_by}"
        return f"{self.stated_by} states"

    def others_line(self) -> str:
        """The other workloads held, in one line; empty when there are none."""
        if not self.others:
            return ""
        said = "also simulated: " if self.others_simulated else "also measured: "
        return said + ", ".join(
            f"{_words(r)} ({basis}; --role {role_name(r)})" for r, basis in self.others
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "sized": [role_name(r) for r in self.sized],
            "sized_words": [ROLE_WORDS[r] for r in self.sized],
            "needed": None if self.needed is None else role_name(self.needed),
            "stated_by": self.stated_by or None,
            "other_workload": self.other_workload,
            "error_direction": self.error or None,
            "others": [
                {"role": role_name(r), "words": ROLE_WORDS[r], "basis": b} for r, b in self.others
            ],
            "sentence": self.sentence(),
        }
