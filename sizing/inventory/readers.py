"""Ansible's inventory readers without the costs that change nothing they read.

Reading a 3,300-host inventory through Ansible as it is took four fifths of an offline
plan; each cut here leaves what Ansible returns equal (the real-inventory tests compare
sizing's view with ``ansible-inventory --list``):

- A file loaded with ``cache='none'`` is parsed afresh for its one caller and cached for
  no one, yet Ansible deep-copies it before returning it (every tagged string copied
  again): it is returned as parsed.
- The ``auto`` inventory plugin parses a whole YAML file only to look for a top-level
  ``plugin:`` key (an inventory plugin's configuration), then the ``yaml`` plugin parses
  it again: a file loaded with ``cache='none'`` is parsed once per reading of the
  inventory, and the second caller gets the first parse (neither changes it).
- ``VariableManager.get_vars`` cleans a host's cached facts even when it has none: with
  none (an inventory read, no play has run) the cleaning returns an empty dict, which is
  what it returns here without scanning the connection plugins on disk for every host.
- The vars plugins (``group_vars/`` beside the inventory, ...) are asked once per group
  list, not once per host of the groups: their answer for a group is the group's.

ansible-core is imported only when an inventory is read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing.yamlfile import refuse_bombs

if TYPE_CHECKING:
    from ansible.parsing.dataloader import DataLoader

__all__ = ["ansible_loader", "quick_vars"]


def ansible_loader() -> type[DataLoader]:
    """Ansible's DataLoader, with the first two cuts above (one instance per reading)."""
    from ansible.parsing.dataloader import DataLoader

    class Loader(DataLoader):  # type: ignore[misc]  # ansible-core has no types
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            self._parsed_once: dict[tuple[str, bool], Any] = {}
            self._checked: set[str] = set()

        def load_from_file(
            self, file_name: str, cache: str = "all", unsafe: bool = False, *a: Any, **kw: Any
        ) -> Any:
            if str(file_name) not in self._checked:
                # an alias bomb or absurd nesting hangs Ansible's parser: refused first
                refuse_bombs(Path(str(file_name)), "inventory")
                self._checked.add(str(file_name))
            if cache != "none" or a or set(kw) - {"trusted_as_template"}:
                return super().load_from_file(file_name, cache, unsafe, *a, **kw)
            # auto asks untrusted, the yaml and constructed plugins trusted for templating:
            # one parse, trusted as the plugins that read the values ask
            key = (str(file_name), bool(unsafe))
            if key not in self._parsed_once:
                self._parsed_once[key] = super().load_from_file(
                    file_name, cache, True, trusted_as_template=True
                )
            return self._parsed_once[key]

    return Loader


@contextmanager
def quick_vars() -> Iterator[None]:
    """``VariableManager.get_vars`` with the last two cuts above, while the block runs
    (the functions it calls are swapped in its module and put back after)."""
    import ansible.vars.manager as vm
    from ansible.inventory.group import Group

    clean, from_sources, from_path = (
        vm.clean_facts,
        vm.get_vars_from_inventory_sources,
        vm.get_vars_from_path,
    )
    memo: dict[tuple[Any, ...], Any] = {}

    def clean_facts(facts: Any) -> Any:
        return {} if not facts else clean(facts)

    def once(kind: str, where: Any, entities: Sequence[Any], stage: str, call: Any) -> Any:
        if not all(isinstance(e, Group) for e in entities):
            return call()  # a host's own: asked once anyway
        key = (kind, str(where), tuple(e.name for e in entities), stage)
        if key not in memo:
            memo[key] = call()
        return memo[key]

    def sources_vars(loader: Any, sources: Any, entities: Any, stage: str) -> Any:
        return once(
            "sources",
            sources,
            entities,
            stage,
            lambda: from_sources(loader, sources, entities, stage),
        )

    def path_vars(loader: Any, path: Any, entities: Any, stage: str) -> Any:
        return once("path", path, entities, stage, lambda: from_path(loader, path, entities, stage))

    vm.clean_facts = clean_facts
    vm.get_vars_from_inventory_sources = sources_vars
    vm.get_vars_from_path = path_vars
    try:
        yield
    finally:
        vm.clean_facts = clean
        vm.get_vars_from_inventory_sources = from_sources
        vm.get_vars_from_path = from_path
