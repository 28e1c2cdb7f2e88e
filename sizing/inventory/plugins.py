"""What sizing derives for the hosts an inventory plugin added: a VM that vCenter's plugin
(``community.vmware.vmware_vm_inventory``) lists is an ESXi guest.

For such a host that sizing uses, and only where the user's own variables (``compose`` in
the plugin's configuration, ``group_vars/``, ``host_vars/``, ``-e``) say nothing:
``sizing_platform: vsphere``; ``sizing_vm.name``, the VM's name (``config.name``);
``sizing_hypervisor``, the vCenter the plugin read, its credentials from the environment
variables the plugin reads them from (``VMWARE_USER``, ``VMWARE_PASSWORD``: never from the
configuration), TLS verified as the plugin's ``validate_certs`` says.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sizing.inventory.model import ROLE_GROUPS
from sizing.inventory.sources import VMWARE_PLUGIN, plugin_name

if TYPE_CHECKING:
    from sizing.inventory.resolve import Resolved

__all__ = ["derive_plugin_vars", "vcenter_hypervisor"]

# The plugin's own environment variables (its documentation's ``env:`` entries).
VMWARE_USER_ENV, VMWARE_PASSWORD_ENV = "VMWARE_USER", "VMWARE_PASSWORD"


def _flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def vcenter_hypervisor(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """``sizing_hypervisor`` for the vCenter a vmware_vm_inventory configuration reads, or
    None when its host is not written down (a template sizing does not render)."""
    host = config.get("hostname") or os.environ.get("VMWARE_HOST")
    if not isinstance(host, str) or not host or "{" in host:
        return None
    port = config.get("port") or os.environ.get("VMWARE_PORT") or 443
    verify = _flag(config.get("validate_certs", os.environ.get("VMWARE_VALIDATE_CERTS")), True)
    shown = f"[{host}]" if ":" in host else host
    return {
        "kind": "vsphere",
        "url": f"https://{shown}:{int(port)}/sdk",
        "user_env": VMWARE_USER_ENV,
        "password_env": VMWARE_PASSWORD_ENV,
        "verify_tls": verify,
    }


def derive_plugin_vars(resolved: Resolved) -> None:
    """Fill in the ``sizing_*`` variables of the used hosts vCenter's plugin added, in
    place, where the user's variables do not set them."""
    config = resolved.plugin_configs.get(VMWARE_PLUGIN) or next(
        (c for p, c in resolved.plugin_configs.items() if plugin_name(p) == VMWARE_PLUGIN), None
    )
    for name, plugin in resolved.plugins.items():
        if plugin_name(plugin) != VMWARE_PLUGIN or name not in resolved.hosts:
            continue
        groups, variables = resolved.hosts[name]
        if not groups & ROLE_GROUPS.keys():
            continue  # not used: its variables were never read
        variables.setdefault("sizing_platform", "vsphere")
        if variables["sizing_platform"] != "vsphere":
            continue  # the user said otherwise
        vm = variables.get("sizing_vm")
        vm = dict(vm) if isinstance(vm, Mapping) else {}
        vm.setdefault("name", str(variables.get("config.name") or _vm_name(variables, name)))
        variables["sizing_vm"] = vm
        if "sizing_hypervisor" not in variables and config is not None:
            hyp = vcenter_hypervisor(config)
            if hyp is not None:
                variables["sizing_hypervisor"] = hyp


def _vm_name(variables: Mapping[str, Any], host: str) -> str:
    config = variables.get("config")
    if isinstance(config, Mapping) and config.get("name"):
        return str(config["name"])
    return str(variables.get("name") or host)
