"""The application layer: the use cases the commands call, one per command, each taking a
typed request and returning a typed outcome (:mod:`sizing.app.run`), the environment a
command runs in (:class:`Environment`) and the one function that turns an outcome into the
exit status (:func:`exit_status`). The CLI parses, makes one call and renders; nothing here
prints.
"""

from sizing.app.env import Environment
from sizing.app.status import exit_status

__all__ = ["Environment", "exit_status"]
