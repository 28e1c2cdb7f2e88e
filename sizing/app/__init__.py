"""The application layer: the use cases the commands call, one per command, each taking a
typed request and returning a typed outcome (:mod:`sizing.app.run`), the environment a
command runs in (:class:`Environment`) and the one function that turns an outcome into the
exit status (:func:`exit_status`). The CLI parses, makes one call and renders; nothing here
prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sizing.app.env import Environment

if TYPE_CHECKING:
    from sizing.app.status import exit_status

__all__ = ["Environment", "exit_status"]


def __getattr__(name: str) -> Any:
    # deferred: the outcomes name the whole record vocabulary (sizing.model), which a
    # command's start (`sizing --help`, `sizing demand`) does not need (issues 58 and 60)
    if name == "exit_status":
        from sizing.app.status import exit_status

        return exit_status
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
