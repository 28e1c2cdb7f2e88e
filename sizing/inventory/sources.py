"""Ansible's InventoryManager loading the sources as ``ansible-inventory -i A -i B`` does,
with what it says kept instead of printed: which plugin read each file, the hosts each
file added, why a file could not be read, and Ansible's warnings (a duplicate YAML key, a
file no plugin could read), each as one line.

Sizing reads no file itself: a directory's files, ``group_vars/``, ``host_vars/`` and the
inventory plugins' configurations (``plugin:`` at the top of a YAML file, through Ansible's
``auto`` plugin) are read by Ansible alone. The plugins sizing reads are the ones that run
beside a lab without a cloud account: Ansible's own (``constructed``, ``generator``, ...),
vCenter's (``community.vmware.vmware_vm_inventory``) and libvirt's
(``community.libvirt.libvirt``). Another plugin is refused in one line naming it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing.errors import InputError

if TYPE_CHECKING:
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader

__all__ = [
    "OFFLINE_PLUGINS",
    "Loaded",
    "SourceOutcome",
    "kept_display",
    "load_sources",
    "plugin_name",
]

# Inventory plugins that read files or a lab's own endpoints (vCenter, libvirtd): the
# others (aws_ec2, azure_rm, gcp_compute, ...) need a cloud account and its API.
VMWARE_PLUGIN = "community.vmware.vmware_vm_inventory"
LIBVIRT_PLUGIN = "community.libvirt.libvirt"
OFFLINE_PLUGINS = (
    "constructed",
    "generator",
    "yaml",
    "ini",
    "toml",
    "host_list",
    "advanced_host_list",
    VMWARE_PLUGIN,
    LIBVIRT_PLUGIN,
)
# The file names a plugin accepts (its verify_file), said when a configuration has another.
_NAMES = {VMWARE_PLUGIN: "*.vmware.yml or *.vmware.yaml", LIBVIRT_PLUGIN: "*.libvirt.yml"}
# Where each plugin comes from, when it is not installed.
_COLLECTION_HINT = {
    VMWARE_PLUGIN: "scripts/install-collections installs it",
    LIBVIRT_PLUGIN: "scripts/install-collections installs it",
}


def plugin_name(name: str) -> str:
    """A plugin's name as sizing knows it: ``ansible.builtin.constructed`` is
    ``constructed``; a collection's keeps its FQCN."""
    for prefix in ("ansible.builtin.", "ansible.legacy."):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


@dataclass
class SourceOutcome:
    """One file Ansible was given (or found in a given directory)."""

    source: str
    given: bool  # named by -i itself, not found in a directory
    parsed: bool = False
    plugin: str | None = None  # the ``plugin:`` of a plugin configuration
    config: dict[str, Any] = field(default_factory=dict)  # that configuration, as read
    hosts: list[str] = field(default_factory=list)  # the hosts it added
    failures: list[tuple[str, str]] = field(default_factory=list)  # (plugin, why it failed)
    refused: str | None = None  # why sizing did not run its plugin


@dataclass
class Loaded:
    """The loaded inventory, per file what became of it, and Ansible's warnings."""

    manager: Any
    outcomes: list[SourceOutcome]
    warnings: list[str]


def _origin(obj: Any) -> str:
    """Where a tagged value came from (``file:line``), or ''."""
    try:
        from ansible._internal._datatag._tags import Origin
    except ImportError:  # pragma: no cover - another ansible-core
        return ""
    tag = obj if isinstance(obj, Origin) else Origin.get_tag(obj) if obj is not None else None
    if tag is None or not getattr(tag, "path", None):
        return ""
    line = getattr(tag, "line_num", None)
    return f"{tag.path}:{line}" if line else str(tag.path)


def _cause(exc: BaseException) -> str:
    """The innermost message of an Ansible error chain, in one line, with the line of the
    file it names (a YAML syntax error's)."""
    chain = [exc]
    while chain[-1].__cause__ is not None and len(chain) < 10:
        chain.append(chain[-1].__cause__)
    lines = [w.rsplit(":", 1)[1] for e in chain if ":" in (w := _origin(getattr(e, "obj", None)))]
    at = f" (line {lines[0]})" if lines else ""
    for e in reversed(chain):
        text = str(getattr(e, "message", None) or e).strip()
        if text:
            return without_line_text(" ".join(text.split())) + at
    return type(exc).__name__ + at


# Ansible's INI and YAML plugins end some messages with the line (or the data) they could
# not read: `got: <the line>`, `host definition '<the line>'`. A line may be a password
# (`ansible_become_pass s3cr3t`): the message keeps what was wrong and drops the text.
_LINE_TEXT = (
    (re.compile(r"(?s)(Error parsing host definition) '.*': "), r"\1: "),
    (re.compile(r"(?s)(,? (?:and )?got):.*\Z"), r"\1 something else (its text is not shown)"),
)


def without_line_text(message: str) -> str:
    """An Ansible parse message without the text of the line it quotes."""
    for pattern, repl in _LINE_TEXT:
        message = pattern.sub(repl, message)
    return message


@contextmanager
def kept_display(warnings: list[str], failure: Any) -> Iterator[None]:
    """Ansible's display warnings kept in ``warnings``; a plugin's failure on a file (shown
    only when no plugin read it) handed to ``failure``."""
    from ansible.utils.display import Display

    display = Display()
    names = ("warning", "error_as_warning", "deprecated")
    saved = [display.__dict__.get(n) for n in names]

    def warning(msg: str, formatted: bool = False, **kw: Any) -> None:
        if msg.startswith("Unable to parse ") and msg.endswith(" as an inventory source"):
            return  # said per file by the outcome
        where = _origin(kw.get("obj"))
        text = " ".join(str(msg).split())
        warnings.append(f"{where}: {text}" if where else text)

    def error_as_warning(msg: str | None, exception: BaseException, **kw: Any) -> None:
        failure(str(msg or ""), exception)

    def deprecated(*_a: Any, **_kw: Any) -> None:
        """A plugin's own future (a collection's deprecations): not the inventory's."""

    display.warning = warning
    display.error_as_warning = error_as_warning
    display.deprecated = deprecated
    try:
        yield
    finally:
        for name, value in zip(names, saved, strict=True):
            if value is None:
                display.__dict__.pop(name, None)
            else:
                setattr(display, name, value)


def _manager_class() -> type[InventoryManager]:
    from ansible.inventory.manager import InventoryManager

    class Manager(InventoryManager):  # type: ignore[misc]  # ansible-core has no types
        outcomes: list[SourceOutcome]
        given: set[str]

        def parse_source(self, source: str, cache: bool = False) -> bool:
            if Path(source).is_dir():
                return bool(super().parse_source(source, cache=cache))
            outcome = SourceOutcome(source, given=source in self.given)
            outcome.plugin, outcome.config = _declared_plugin(self._loader, source)
            self.outcomes.append(outcome)
            outcome.refused = _refused_plugin(outcome.plugin)
            if outcome.refused:
                return False  # never run: it would reach a cloud, or it is not there
            before = set(self._inventory.hosts)
            outcome.parsed = bool(super().parse_source(source, cache=cache))
            outcome.hosts = [h for h in self._inventory.hosts if h not in before]
            return outcome.parsed

    return Manager


def _declared_plugin(loader: DataLoader, source: str) -> tuple[str | None, dict[str, Any]]:
    """The ``plugin:`` of a YAML plugin configuration and the configuration, as Ansible's
    ``auto`` plugin reads it (the loader parses the file once for both), or None."""
    if not source.endswith((".yml", ".yaml")):
        return None, {}
    try:
        data = loader.load_from_file(source, cache="none")
    except Exception:  # noqa: BLE001 - Ansible's own parse says why, as it reads it
        return None, {}
    name = data.get("plugin") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        return None, {}
    return str(name), {str(k): v for k, v in data.items()}


def load_sources(loader: DataLoader, sources: Sequence[Path]) -> Loaded:
    """Ansible's InventoryManager over ``sources`` in order (repeated ``-i``, merged as
    Ansible merges them). A plugin configuration naming a plugin sizing does not read, or
    that its plugin could not read, is refused in one line; so is a file named by ``-i``
    that no plugin could read. A file of a directory that no plugin read is a warning, as
    Ansible has it."""
    from ansible.plugins.loader import init_plugin_loader
    from ansible.utils.collection_loader import AnsibleCollectionConfig

    if AnsibleCollectionConfig.collection_finder is None:  # as Ansible's CLIs start
        init_plugin_loader()  # collections found by FQCN (ansible.builtin.constructed, ...)
    warnings: list[str] = []
    outcomes: list[SourceOutcome] = []
    given = {str(p.resolve()) for p in sources}
    Manager = _manager_class()

    def failure(msg: str, exc: BaseException) -> None:
        if outcomes:
            found = re.search(r"with '([^']+)' plugin", msg)
            outcomes[-1].failures.append((found.group(1) if found else "", _cause(exc)))

    Manager.outcomes = outcomes
    Manager.given = given
    with kept_display(warnings, failure):
        manager = Manager(loader=loader, sources=[str(p.resolve()) for p in sources])
    problems = []
    for o in outcomes:
        if o.parsed:
            continue
        if o.refused:
            problems.append((o.source, o.refused))
            continue
        why = _best_failure(o)
        if o.plugin and "could not be verified by inventory plugin" in why:
            suffix = _NAMES.get(plugin_name(o.plugin), "the name its documentation gives")
            problems.append(
                (o.source, f"inventory plugin {o.plugin} reads only files named {suffix}")
            )
        elif o.plugin:
            problems.append((o.source, f"inventory plugin {o.plugin}: {why}"))
        elif o.given:
            problems.append((o.source, f"Ansible cannot read it: {why}"))
        else:
            warnings.append(f"{_as_given(o.source, sources)}: not read as an inventory ({why})")
    if problems:
        source, line = problems[0]
        raise InputError(_as_given(source, sources), [ln for src, ln in problems if src == source])
    for p in sources:  # the files as the user named them
        top = str(p.resolve())
        warnings = [w.replace(top, str(p)) for w in warnings]
    return Loaded(manager, outcomes, warnings)


def _as_given(source: str, sources: Sequence[Path]) -> str:
    """A file as the user named it: under the ``-i`` path it came from."""
    for p in sources:
        top = str(p.resolve())
        if source == top:
            return str(p)
        if source.startswith(top + "/"):
            return str(p / source[len(top) + 1 :])
    return source


def _best_failure(o: SourceOutcome) -> str:
    """The failure that says most, without Ansible's framing: a plugin configuration's own
    (through ``auto``); the YAML plugin's for a YAML file (a ``.yml`` file, or one whose
    first line the INI plugin cannot read as a host: ``all:``); else the INI plugin's."""
    if not o.failures:
        return "no inventory plugin accepts this file"
    why = dict(o.failures)
    if o.plugin:
        text = why.get("auto") or o.failures[0][1]
    elif "yaml" in why and (
        o.source.endswith((".yml", ".yaml", ".json"))
        or "ini" not in why
        or re.search(r"Invalid host pattern '[^']*:'", why["ini"])
    ):
        text = why["yaml"]
        line = re.search(r" \(line \d+\)$", why.get("auto", ""))
        if line and not text.endswith(")"):
            text += line.group(0)  # where the YAML parser stopped (what auto's parse saw)
    else:
        text = why.get("ini") or o.failures[-1][1]
    for prefix in ("Failed to parse inventory: ", "Failed to parse inventory source: "):
        text = text.removeprefix(prefix)
    return text


def _refused_plugin(name: str | None) -> str | None:
    """Why sizing does not run a configuration's plugin (a cloud's, or one not installed),
    or None."""
    if name is None:
        return None
    short = plugin_name(name)
    if short not in OFFLINE_PLUGINS:
        return f"inventory plugin {name} needs a cloud (sizing reads files, vCenter, libvirt)"
    from ansible.plugins.loader import inventory_loader

    if not inventory_loader.has_plugin(name):
        hint = _COLLECTION_HINT.get(short, "install its collection")
        return f"inventory plugin {name} is not installed; {hint}"
    return None
