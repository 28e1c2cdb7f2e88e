"""``-e/--extra-vars`` with ansible-playbook's meaning: ``key=value`` pairs, a YAML or JSON
document (``{...}``/``[...]``), or ``@file``; later ones override earlier ones.

Parsed with Ansible's own parsers (``parse_kv``, ``DataLoader``), as
``ansible.utils.vars.load_extra_vars`` does; a value that is not a mapping is refused in
one line. The result overrides every inventory variable, in the inventory that sizing
validates as in every playbook it runs.

A value given with ``-e`` may be a secret (``ansible_become_pass=...``): what is kept of a
command line (:func:`redact_argv`) keeps the variables' names and never their values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from sizing.errors import UsageError

__all__ = ["REDACTED", "parse_extra_vars", "redact_argv"]

REDACTED = "<redacted>"

# sizing's short options that take a value (``-i FILE``, ``-l PATTERN``, ``-o FILE``): in a
# cluster of short options (``-ve X``) the letters after one of them are its value.
_SHORT_WITH_VALUE = frozenset("ilo")
_QUOTED = re.compile(r"(['\"])(.*?)\1")


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
    for n, text in enumerate(values, start=1):
        if not text:
            continue
        # A value may be a password: a refusal names the -e by its place and the file by its
        # name (which holds no value), never the text given (docs/run.md, "-e").
        shown = text if text.startswith("@") else f"value {n}"
        try:
            if text.startswith("@"):
                path = Path(text[1:]).expanduser()
                if not path.is_file():
                    raise UsageError(f"-e {text}: no such file")
                data = loader.load_from_file(str(path.resolve()))
            elif text[0] in "/.":
                raise UsageError(f"-e value {n}: a file name needs '@' before it (-e @FILE)")
            elif text[0] in "[{":
                data = loader.load(text)
            else:
                data = parse_kv(text)
        except AnsibleError as exc:
            raise UsageError(f"-e {shown}: {_reason(exc, text)}") from None
        if not isinstance(data, dict):
            raise UsageError(f"-e {shown}: not a mapping of variables (key=value, {{...}}, @FILE)")
        merged = combine_vars(merged, data)
    # Plain JSON values: what ansible-runner writes to its extravars file.
    return dict(json.loads(json.dumps(merged, default=str)))


def _reason(exc: Exception, text: str) -> str:
    """Why Ansible could not read one ``-e`` value, without any of the value: its parser's
    messages quote what they stopped at (``failed at splitting arguments ...: <the value>``,
    a YAML tag, a file's line)."""
    if text[0] not in "@[{":  # parse_kv's only complaint ends with the whole value
        return "not key=value pairs: unbalanced quotes or an unclosed {{ }} or {% %}"
    message = str(getattr(exc, "message", None) or exc).strip()
    first = message.splitlines()[0] if message else type(exc).__name__
    # Ansible's YAML messages are fixed phrases; what they quote (a tag, a key) came from
    # the value, but for the one character the parser expected (',' or '}').
    first = _QUOTED.sub(lambda m: m.group() if len(m.group(2)) <= 1 else "'…'", first)
    return first if first.startswith("YAML") else f"cannot read it: {first}"


def redact_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with every ``-e``/``--extra-vars`` value replaced by its variables' names
    (``name=<redacted>``), in each spelling: ``-e V``, ``-eV``, ``-ve V``, ``--extra-vars V``,
    ``--extra-vars=V``; an ``@file`` keeps its file name, which holds no value. A value
    that cannot be read as variables is replaced whole."""
    out: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--":  # the rest are not options
            out += [arg, *args]
            break
        if arg == "--extra-vars":
            out += [arg, *(_redacted(v) for v in _next(args))]
        elif arg.startswith("--extra-vars="):
            out.append("--extra-vars=" + _redacted(arg.split("=", 1)[1]))
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            at = _short_e(arg)
            if at is None:
                out.append(arg)
            elif at + 1 < len(arg):
                out.append(arg[: at + 1] + _redacted(arg[at + 1 :]))
            else:
                out += [arg, *(_redacted(v) for v in _next(args))]
        else:
            out.append(arg)
    return out


def _next(args: Iterator[str]) -> list[str]:
    return [v for v in [next(args, None)] if v is not None]


def _short_e(arg: str) -> int | None:
    """Where ``-e`` is in a cluster of short options, or None: a letter that takes a value
    ends the cluster (``-iexample.yml`` names an inventory)."""
    for i, c in enumerate(arg[1:], start=1):
        if c == "e":
            return i
        if c in _SHORT_WITH_VALUE or not c.isalpha():
            return None
    return None


def _redacted(value: str) -> str:
    """One ``-e`` value without its values: ``@file`` as it is, else ``name=<redacted>``
    for each variable it sets, or :data:`REDACTED` whole."""
    if value.startswith("@"):
        return value
    try:
        names = list(parse_extra_vars([value]))
    except Exception:  # anything unreadable may still hold a secret: nothing of it is kept
        return REDACTED
    if not names:
        return REDACTED if value.strip() else value
    return " ".join(f"{_printable_name(n)}={REDACTED}" for n in names)


def _printable_name(name: str) -> str:
    return name if name.isidentifier() else REDACTED
