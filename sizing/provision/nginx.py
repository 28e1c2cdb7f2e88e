"""The nginx under test: its playbook variables per point, applied once per change."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sizing.errors import ToolError
from sizing.plan.points import PlannedPoint
from sizing.plan.replay import lab_ports, point_plan
from sizing.profiles import Profile
from sizing.provision.ansible import Playbooks
from sizing.provision.platforms.base import Target
from sizing.topology import affinity_masks

__all__ = ["NginxProvisioner", "nginx_vars"]


def nginx_vars(
    point: PlannedPoint, workers: Sequence[int], tls_from: Profile | None = None
) -> dict[str, Any]:
    """The nginx.yml variables of a point.

    A plain-HTTP point never uses the TLS server, so it takes its TLS settings from
    ``tls_from`` (the run's handshake profile): rps and tps then share one provisioning
    per configuration instead of restarting nginx between them.
    """
    prof = point.profile
    if prof.scheme == "http" and tls_from is not None:
        prof = tls_from
    sz = point.server.sizing
    extra: dict[str, Any] = {
        "sizing_nginx_workers": len(workers),
        "sizing_nginx_affinity": affinity_masks(workers),
        "sizing_http_port": sz.http_port,
        "sizing_https_port": sz.https_port,
        "sizing_tls_key_type": prof.tls_key or "rsa2048",
        "sizing_tls_session_reuse": prof.tls_session_reuse,
    }
    if prof.tls_key == "ecdsa-p256":
        extra["sizing_tls_ciphers"] = "ECDHE-ECDSA-AES256-GCM-SHA384"
    if prof.tls_protocols:  # latency profiles: TLS 1.2 only, so the suite above is used
        extra["sizing_tls_protocols"] = prof.tls_protocols
    if point.profile.workload:  # a replayed customer workload: its files, log, listener
        ports = lab_ports(point, "")
        extra["sizing_mix_log"] = True
        extra["sizing_mix_files"] = point_plan(point, "").files
        extra["sizing_https_resume_port"] = ports.resume
    return extra


class NginxProvisioner:
    """Runs ``playbooks/nginx.yml`` on a target when its variables changed."""

    def __init__(self, playbooks: Playbooks) -> None:
        self.playbooks = playbooks
        self.applied: dict[str, dict[str, Any]] = {}  # host -> nginx vars applied

    def forget(self, host: str) -> None:
        """``host`` was prepared anew (a fresh guest): its nginx must be applied again."""
        self.applied.pop(host, None)

    def apply(self, target: Target, variables: Mapping[str, Any]) -> None:
        """Provision nginx on ``target`` with ``variables``; a failure raises ToolError."""
        extra = dict(variables)
        if self.applied.get(target.host) == extra:
            return
        res = self.playbooks.run(
            "nginx.yml", [target.host], extravars={"sizing_hosts": target.host, **extra}
        )
        if not res.ok:
            why = res.why(target.host)
            if "nginx -t" in why or "validat" in why.lower() or "configuration" in why.lower():
                why = f"nginx failed its config test: {why}"
            raise ToolError(f"{target.host}: provisioning nginx failed: {why}")
        self.applied[target.host] = extra
