"""The strict checks an inventory file passes before Ansible reads it: YAML with duplicate
keys and lines (sizing's strict reader), names, group cycles, nesting and alias bombs refused
in one line, non-UTF-8 text refused, ``group_vars/`` and ``host_vars/`` files checked alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from sizing.errors import InputError
from sizing.yamlfile import StrictLoader, read_yaml

if TYPE_CHECKING:
    pass

from sizing.inventory.model import CONTROL, YAML_SUFFIXES


class _InventoryLoader(StrictLoader):
    """The strict loader, reading what Ansible's YAML reads (for the pre-check only):
    ``!vault`` and ``!unsafe`` values, and merge keys (``<<: *defaults``)."""


def _construct_vault(loader: Any, node: yaml.Node) -> str:
    """An inline ansible-vault value (``!vault |``): Ansible decrypts it; the strict
    pre-check only needs to know that it is a scalar."""
    return "<vault-encrypted>"


def _construct_unsafe(loader: Any, node: yaml.Node) -> Any:
    """An ``!unsafe`` value (never templated by Ansible): the plain value underneath."""
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


def _construct_mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> Any:
    """Duplicate keys refused with both lines; merge keys (``<<``) are not keys but the
    mappings merged in, where a later key overrides a merged one, as in YAML."""
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r} (first at line {seen[key] + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_InventoryLoader.add_constructor("!vault", _construct_vault)
_InventoryLoader.add_constructor("!unsafe", _construct_unsafe)
_InventoryLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

# What Ansible skips in an inventory directory (INVENTORY_IGNORE_EXTS, INVENTORY_IGNORE).
_IGNORED_SUFFIXES = (
    ".pyc",
    ".pyo",
    ".swp",
    ".bak",
    "~",
    ".rpm",
    ".md",
    ".txt",
    ".rst",
    ".orig",
    ".ini~",
    ".cfg",
    ".retry",
)
_IGNORED_NAMES = ("group_vars", "host_vars", "vars_plugins")


def check_sources(path: Path) -> list[Path]:
    """The strict checks of an inventory file, or of every file of an inventory directory
    (what ``ansible.cfg``'s ``inventory =`` often names), and of the ``group_vars/`` and
    ``host_vars/`` beside them. Returns the files Ansible will read as INI."""
    if path.is_dir():
        files = sorted(
            f
            for f in path.iterdir()
            if f.is_file()
            and not f.name.startswith(".")
            and f.name not in _IGNORED_NAMES
            and not f.name.endswith(_IGNORED_SUFFIXES)
        )
        if not files:
            raise InputError(str(path), ["an inventory directory without inventory files"])
        base = path
    else:
        files, base = [path], path.parent
    ini = [f for f in files if _check_file(f)]
    check_vars_dirs(base)
    return ini


def _check_file(path: Path) -> bool:
    """Check one inventory file as what Ansible will read it as; True for INI. A file
    without a suffix (Ansible's default name is ``hosts``) is YAML when it reads as a
    YAML mapping, as Ansible's YAML plugin tries it before the INI one."""
    suffix = path.suffix.lower()
    if suffix in YAML_SUFFIXES:
        check_yaml_inventory(path)
        return False
    if suffix == ".toml" or (suffix in (".py", ".sh") and path.stat().st_mode & 0o111):
        return False  # Ansible's toml and script plugins; nothing of sizing's to check
    check_text(path)
    if suffix == "" and _looks_yaml(path):
        check_yaml_inventory(path)
        return False
    return True


def _looks_yaml(path: Path) -> bool:
    """An extensionless file that starts as a YAML document or reads as a YAML mapping."""
    text = path.read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if lines and (lines[0].startswith("---") or lines[0].rstrip().endswith(":")):
        return True
    try:
        return isinstance(yaml.load(text, Loader=_InventoryLoader), dict)  # noqa: S506
    except yaml.YAMLError:
        return False


def check_yaml_inventory(path: Path) -> None:
    """Strict YAML (duplicate keys, syntax with its line) and the inventory's shape.

    Ansible's YAML plugin keeps the last of two duplicate keys and skips unknown keys with
    a warning; a sizing inventory is refused instead, with every problem named.
    """
    shown = str(path)
    data = read_yaml(path, "inventory", _InventoryLoader)
    if data is None:
        raise InputError(shown, ["empty inventory; expected an 'all:' mapping"])
    if not isinstance(data, dict):
        raise InputError(shown, ["expected a mapping of groups at the top (all: ...)"])
    problems = _shape_problems(data)
    if problems:
        raise InputError(shown, problems)


MAX_GROUP_DEPTH = 32  # groups within groups
MAX_DEPTH = 64  # any value within values (variables included)
MAX_NODES = 200_000  # values in one file, aliases counted each time they are used


def _key_problem(key: Any, what: str, where: str) -> str | None:
    """A host or group name must be a non-empty string without control characters."""
    if not isinstance(key, str):
        shown = "null" if key is None else f"{key!r} ({type(key).__name__})"
        return f"{where}: {what} name {shown} is not a string; quote it or remove it"
    if not key.strip():
        return f"{where}: empty {what} name"
    if CONTROL.search(key):
        return f"{where}: {what} name {key!r}: control characters not allowed"
    return None


def _shape_problems(data: dict[Any, Any]) -> list[str]:
    """Every problem of an inventory's shape, without recursion: unknown keys, names
    that are not strings, group cycles, groups nested too deep, values nested too deep
    or too many (YAML aliases can multiply them)."""
    problems: list[str] = []
    edges: dict[str, set[str]] = {}
    # (body, where, group name, group depth)
    stack: list[tuple[Any, str, str, int]] = []
    for top, body in reversed(list(data.items())):
        bad = _key_problem(top, "group", "top level")
        if bad:
            problems.append(bad)
            continue
        if top != "all":  # Ansible takes other top-level groups as children of all
            edges.setdefault("all", set()).add(top)
        stack.append((body, str(top), top, 1))
    while stack:
        body, where, group, depth = stack.pop()
        if depth > MAX_GROUP_DEPTH:
            problems.append(f"{where}: groups nested deeper than {MAX_GROUP_DEPTH} levels")
            break
        if body is None:
            continue
        if not isinstance(body, dict):
            problems.append(f"{where}: expected a mapping with hosts, vars or children")
            continue
        for key in body:
            if key not in ("hosts", "vars", "children"):
                problems.append(f"{where}.{key}: unknown key (expected hosts, vars, children)")
        variables = body.get("vars") or {}
        if not isinstance(variables, dict):
            problems.append(f"{where}.vars: expected a mapping")
        else:
            problems.extend(_vars_problems(variables, f"{where}.vars"))
        hosts = body.get("hosts") or {}
        if not isinstance(hosts, dict):
            problems.append(f"{where}.hosts: expected a mapping of host names")
        else:
            for hname, hvars in hosts.items():
                bad = _key_problem(hname, "host", f"{where}.hosts")
                if bad:
                    problems.append(bad)
                elif hvars is not None and not isinstance(hvars, dict):
                    problems.append(f"{where}.hosts.{hname}: expected a mapping of variables")
                elif hvars:
                    problems.extend(_vars_problems(hvars, f"{where}.hosts.{hname}"))
        children = body.get("children") or {}
        if not isinstance(children, dict):
            problems.append(f"{where}.children: expected a mapping of groups")
            continue
        for cname, cbody in reversed(list(children.items())):
            bad = _key_problem(cname, "group", f"{where}.children")
            if bad:
                problems.append(bad)
                continue
            edges.setdefault(group, set()).add(cname)
            stack.append((cbody, f"{where}.children.{cname}", cname, depth + 1))
        if len(problems) > 50:
            break
    cycle = _find_cycle(edges)
    if cycle:
        problems.append("group cycle: " + " -> ".join(cycle) + " (a group cannot contain itself)")
    return problems


def _vars_problems(variables: dict[Any, Any], where: str) -> list[str]:
    """Variable names are strings; values are nested at most MAX_DEPTH levels deep and
    number at most MAX_NODES (counted without recursion)."""
    problems = [
        f"{where}: variable name {k!r} is not a string" for k in variables if not isinstance(k, str)
    ]
    stack: list[tuple[Any, int]] = [(variables, 0)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            problems.append(f"{where}: more than {MAX_NODES} values (YAML aliases?)")
            break
        if depth > MAX_DEPTH:
            problems.append(f"{where}: values nested deeper than {MAX_DEPTH} levels")
            break
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return problems


def _find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle in the group graph (parent -> children), as a list of names, or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    for root in sorted(edges):
        if state.get(root):
            continue
        path: list[str] = [root]
        iters = [iter(sorted(edges.get(root, ())))]
        state[root] = 1
        while iters:
            child = next(iters[-1], None)
            if child is None:
                state[path.pop()] = 2
                iters.pop()
                continue
            if state.get(child) == 1:
                return path[path.index(child) :] + [child]
            if not state.get(child):
                state[child] = 1
                path.append(child)
                iters.append(iter(sorted(edges.get(child, ()))))
    return None


def check_text(path: Path) -> None:
    """An INI inventory is UTF-8 text (Ansible would read other bytes as odd host names)."""
    try:
        path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise InputError(str(path), [f"cannot read: {exc.strerror or exc}"]) from exc
    except UnicodeDecodeError as exc:
        raise InputError(
            str(path), [f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})"]
        ) from exc


def check_vars_dirs(base: Path) -> None:
    """The YAML files of ``group_vars/`` and ``host_vars/`` beside the inventory, strictly.

    Whole-file vault files (``$ANSIBLE_VAULT;...``) are left to Ansible, which decrypts them.
    """
    for sub in ("group_vars", "host_vars"):
        top = base / sub
        if not top.is_dir():
            continue
        for f in sorted(top.rglob("*")):
            rel = f.relative_to(top)
            if not f.is_file() or any(part.startswith(".") for part in rel.parts):
                continue
            if f.suffix.lower() not in ("", *YAML_SUFFIXES):
                continue
            try:
                if f.read_bytes().lstrip().startswith(b"$ANSIBLE_VAULT"):
                    continue
            except OSError as exc:
                raise InputError(str(f), [f"cannot read: {exc}"]) from exc
            data = read_yaml(f, "variables", _InventoryLoader)
            if data is not None and not isinstance(data, dict):
                raise InputError(str(f), ["expected a mapping of variables"])
            if data:
                problems = _vars_problems(data, "variables")
                if problems:
                    raise InputError(str(f), problems)


# -- Ansible's reading -----------------------------------------------------------------
