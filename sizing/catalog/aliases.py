"""The inventory's platform names a catalog's licences may use for the engine's: shared by
the fast path (:mod:`sizing.catalog`) and the full validation (:mod:`sizing.catalog.models`)
without importing pydantic on the fast path."""

from __future__ import annotations

__all__ = ["LICENCE_ALIASES"]

LICENCE_ALIASES = {"libvirt": "kvm", "vsphere": "esxi"}
