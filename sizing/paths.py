"""Where the bundled resources live (playbooks, templates, profiles, inventories).

The package runs from a checkout (``pip install -e .``); resources sit beside it at the
repository root. ``SIZING_HOME`` overrides that root.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(os.environ.get("SIZING_HOME", Path(__file__).resolve().parent.parent))
PLAYBOOKS = ROOT / "playbooks"
TEMPLATES = ROOT / "templates"
PROFILES = ROOT / "profiles"
INVENTORIES = ROOT / "inventories"
DEFAULT_INVENTORY = INVENTORIES / "local.yml"


def default_db() -> Path:
    """The results database: ``$SIZING_DB``, else ``./results/sizing.sqlite``."""
    env = os.environ.get("SIZING_DB")
    if env:
        return Path(env)
    return Path.cwd() / "results" / "sizing.sqlite"
