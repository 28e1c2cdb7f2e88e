"""``-e/--extra-vars`` with ansible-playbook's meaning: ``key=value`` pairs, a YAML or JSON
document (``{...}``/``[...]``), or ``@file``; later ones override earlier ones.

Parsed with Ansible's own parsers (``parse_kv``, ``DataLoader``), as
``ansible.utils.vars.load_extra_vars`` does; a value that is not a mapping is refused in
one line. The result overrides every inventory variable, in the inventory that sizing
validates as in every playbook it runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sizing.errors import UsageError

__all__ = ["parse_extra_vars"]


def parse_extra_vars(values: Sequence[str]) -> dict[str, Any]:
    """The merged extra vars of every ``-e`` value, or :class:`UsageError`."""
    if not values:
        return {}
    from ansible.errors import AnsibleError
    from ansible.parsing.dataloader import DataLoader
    from ansible.parsing.splitter import parse_kv
    from ansible.utils.vars import combine_vars

    loader = DataLoader()
    merged: dict[str, Any] = {}
    for text in values:
        if not text:
            continue
        try:
            if text.startswith("@"):
                path = Path(text[1:]).expanduser()
                if not path.is_file():
                    raise UsageError(f"-e {text}: no such file")
                data = loader.load_from_file(str(path.resolve()))
            elif text[0] in "/.":
                raise UsageError(f"-e {text}: prepend a file name with '@' (-e @{text})")
            elif text[0] in "[{":
                data = loader.load(text)
            else:
                data = parse_kv(text)
        except AnsibleError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(f"-e {text[:60]}: {first}") from None
        if not isinstance(data, dict):
            raise UsageError(f"-e {text[:60]}: not a mapping of variables")
        merged = combine_vars(merged, data)
    # Plain JSON values: what ansible-runner writes to its extravars file.
    return dict(json.loads(json.dumps(merged, default=str)))
