"""Reading the YAML files users hand to sizing (inventories, cost catalogs, reference data).

One strict loader: safe (no Python objects), libyaml when available, and duplicate mapping
keys are an error with both lines (YAML itself, and Ansible, keep the last silently). Every
problem is an :class:`~sizing.errors.InputError` naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import yaml

from sizing.errors import InputError

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available


class StrictLoader(_Base):  # type: ignore[misc]
    """A safe loader that refuses duplicate mapping keys."""


def _construct_mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
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


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

# The longest integer a file sizing reads may write. Python refuses to read a decimal of
# more than 4,300 digits (a ValueError, which the loader does not mark with a line); no
# count, price or port needs more than twenty.
MAX_INT_CHARS = 1000


def _construct_int(loader: Any, node: yaml.ScalarNode) -> Any:
    text = loader.construct_scalar(node)
    if len(text) > MAX_INT_CHARS:
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of {len(text):,} characters: too long", node.start_mark
        )
    return yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)


StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


MAX_DEPTH = 100  # nested mappings and lists; no sizing file needs more than a few
# Nodes a document may hold once its aliases are expanded. An alias bomb ("billion laughs":
# a few lines of anchors, each aliased ten times by the next) expands to billions; the
# loader shares the aliased objects, but whatever walks the result (validation, copying,
# printing) walks them all. The largest file sizing reads (an inventory of thousands of hosts)
# holds a few hundred thousand nodes.
MAX_NODES = 2_000_000


def _check_depth(text: str, loader: type[Any]) -> None:
    """Refuse absurd nesting and alias bombs from the event stream, before the (recursive)
    composer and constructor see it: thousands of nested ``[`` overflow them, even the C
    stack, and an alias bomb's expansion is counted here in time linear in the text."""
    depth = 0
    counts = [0]  # expanded nodes of each open collection, the document's at the bottom
    anchors: list[str | None] = []
    expanded: dict[str, int] = {}  # an anchor's expanded node count
    total = 0
    events = yaml.parse(text, Loader=loader)
    while True:
        try:
            event = next(events, None)
        except yaml.MarkedYAMLError as exc:
            # libyaml >= 0.2.6 (PyYAML 6.0.4's wheels) stops at 1,000 levels itself, while
            # its scanner reads ahead, before the event that crosses MAX_DEPTH comes out.
            if "nesting depth" not in str(exc.problem):
                raise
            _too_deep(exc.problem_mark)
        if event is None:
            return
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                _too_deep(event.start_mark)
            counts.append(0)
            anchors.append(event.anchor)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            n = counts.pop() + 1
            anchor = anchors.pop()
            if anchor is not None:
                expanded[anchor] = n
            counts[-1] += n
        elif isinstance(event, yaml.ScalarEvent):
            counts[-1] += 1
            total += 1
            if event.anchor is not None:
                expanded[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            n = expanded.get(event.anchor or "", 1)
            counts[-1] += n
            total += n
        if total > MAX_NODES:
            mark = event.start_mark
            where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
            raise AliasBomb(
                f"{where}its aliases expand to more than {MAX_NODES:,} values (an alias bomb?)"
            )


def _too_deep(mark: Any) -> NoReturn:
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    raise ShapeError(f"{where}nested deeper than {MAX_DEPTH} levels")


class ShapeError(yaml.YAMLError):
    """A YAML document nested too deep or whose aliases expand past :data:`MAX_NODES`."""


class AliasBomb(ShapeError):
    """A YAML document whose aliases expand past :data:`MAX_NODES`."""


def refuse_bombs(path: Path, what: str) -> None:
    """An InputError when ``path`` is a YAML alias bomb, for a file that another parser
    reads afterwards (Ansible's inventory plugins: ``ansible-inventory`` itself hangs on
    one). Anything else (text that is not YAML, deep nesting) is left to that parser and to
    the checks of what it read."""
    try:
        with path.open("rb") as f:
            raw = f.read(64 << 20)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return
    try:
        _check_depth(text, _Base)
    except AliasBomb as exc:
        raise InputError(str(path), [f"YAML: {exc}"]) from None
    except yaml.YAMLError:
        return


def read_yaml(
    path: Path, what: str, loader: type[Any] = StrictLoader, *, max_bytes: int | None = None
) -> Any:
    """Parse ``path`` (a ``what`` file: "inventory", "catalog", ...) or raise InputError;
    ``max_bytes``: a larger file is refused before it is parsed (nothing past the limit is
    read, so a device or a pipe that never ends is refused too)."""
    shown = str(path)
    article = "an" if what[:1] in "aeiou" else "a"
    if not path.exists():
        raise InputError(shown, [f"no such {what} file"])
    if path.is_dir():
        raise InputError(shown, [f"is a directory; give {article} {what} YAML file"])
    try:
        if max_bytes is None:
            text = path.read_text(encoding="utf-8")
        else:
            text = _read_bounded(path, what, max_bytes)
    except OSError as exc:
        raise InputError(shown, [f"cannot read: {exc.strerror or exc}"]) from exc
    except UnicodeDecodeError as exc:
        raise InputError(
            shown, [f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})"]
        ) from exc
    try:
        _check_depth(text, loader)
        return yaml.load(text, Loader=loader)  # noqa: S506 (a safe loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise InputError(shown, [f"YAML syntax: {where}{exc.problem or exc}"]) from exc
    except yaml.YAMLError as exc:
        raise InputError(shown, [f"YAML: {exc}"]) from exc
    except RecursionError as exc:  # thousands of nested [ or { (the reader recurses)
        raise InputError(shown, ["YAML nested too deep"]) from exc


def _read_bounded(path: Path, what: str, max_bytes: int) -> str:
    with path.open("rb") as f:
        raw = f.read(max_bytes + 1)
    if len(raw) > max_bytes:
        size = path.stat().st_size if path.is_file() else 0
        held = f"{size:,} bytes, over" if size > max_bytes else "over"
        raise InputError(str(path), [f"{held} the {max_bytes:,} bytes a {what} file may hold"])
    return raw.decode("utf-8")
