"""Ansible's internal poll interval, as sizing asks (SIZING_ANSIBLE_POLL_INTERVAL, seconds).

Ansible's strategy loop waits for its workers by sleeping DEFAULT_INTERNAL_POLL_INTERVAL
(1 ms) at a time: about 900 wake-ups a second in the controller for as long as a task runs.
While a load window runs on the same small host (the local inventory: controller, server
and client on two cores), those wake-ups took 8 to 10% of the TLS handshakes nginx served
(docs/validity.md, "Fidelity"). ansible-core reads the interval only from an ansible.cfg
(``internal_poll_interval``; it has no environment variable), and a user's own ansible.cfg
must stay theirs: this callback, next to the playbooks, sets it when Ansible loads it,
before the first task. It prints nothing and is always loaded (it needs no enabling).
"""

from __future__ import annotations

import os

from ansible import constants as C
from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: sizing_poll
    type: aggregate
    short_description: sets Ansible's internal poll interval from SIZING_ANSIBLE_POLL_INTERVAL
    description: Sets the controller's internal poll interval from the environment.
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "sizing_poll"
    CALLBACK_NEEDS_ENABLED = False

    def __init__(self) -> None:
        super().__init__()
        wanted = os.environ.get("SIZING_ANSIBLE_POLL_INTERVAL", "")
        try:
            seconds = float(wanted)
        except ValueError:
            return
        if 0 < seconds <= 1:
            C.DEFAULT_INTERNAL_POLL_INTERVAL = seconds
