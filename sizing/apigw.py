"""Reverse-proxy and API-gateway profiles (``role: proxy`` and ``role: api-jwt``).

NGINX under test proxies to an upstream web server, itself an nginx
(``playbooks/upstream.yml``, ``templates/nginx-upstream.conf.j2``): on the hosts of the
inventory's ``upstreams`` group, or else a second instance on the server host itself,
pinned to the CPUs the server's nginx does not use. The proxy keeps ``keepalive``
connections to it (HTTP/1.1, ``Connection`` header cleared), as in the API-gateway
article. ``api-jwt`` validates an HS256 JWT on every request with njs (the NGINX
JavaScript module from Debian, ``templates/sizing-jwt.js.j2``) before proxying; a missing
or wrong token gets 401 and is never proxied.

Before its wrk windows a gateway point measures, from its first client, with curl:

* **added latency**: the timing breakdown (connect, TLS, first byte, total; median of
  ``SINGLE_REQUESTS`` fresh connections each, alternating, after a warm-up pair) of one
  request straight to the upstream and one through the proxy, and their difference;
* **JWT check** (api-jwt): a request with a wrong signature must get 401 and a good one
  200, and the upstream's probe log (requests carrying ``X-Sizing-Probe``) must hold the
  good request's nonce and not the bad one's: the bad request never reached it.

A failed JWT check makes the point invalid. Pure helpers (tokens, URLs, variables) plus
:func:`measure`, which the sweep calls for these profiles.

The HS256 secret is a fixed benchmark value (``JWT_SECRET``): it protects nothing, it only
makes the gateway do the work of a real validation.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import TYPE_CHECKING, Any

from sizing.errors import SizingError, ToolError
from sizing.load import curl
from sizing.model import PointResult, Sample, Status
from sizing.provision import run_playbook
from sizing.topology import affinity_masks

if TYPE_CHECKING:
    from sizing.inventory import Host
    from sizing.plan import PlannedPoint
    from sizing.platforms import Target
    from sizing.profiles import Profile
    from sizing.runner import Sweep

__all__ = [
    "JWT_SECRET",
    "bad_token",
    "gateway_vars",
    "make_token",
    "measure",
    "request_headers",
    "verify_token",
]

JWT_SECRET = "sizing-benchmark-hs256-secret"  # not a secret: see the module docstring
UPSTREAM_PORT = 8090
SINGLE_REQUESTS = 5
GATEWAY_ROLES = ("proxy", "api-jwt")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def make_token(secret: str = JWT_SECRET, *, now: float | None = None, ttl_s: int = 86400) -> str:
    """An HS256 JWT (``sub: sizing``) valid for ``ttl_s`` seconds."""
    issued = int(now if now is not None else time.time())
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"sub": "sizing", "iat": issued, "exp": issued + ttl_s}
    payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
    sig = hmac.new(secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(sig)}"


def bad_token(token: str) -> str:
    """The same token with a wrong signature (its last signature byte changed)."""
    head, payload, sig = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4)))
    raw[-1] ^= 0xFF
    return f"{head}.{payload}.{_b64(bytes(raw))}"


def verify_token(token: str, secret: str = JWT_SECRET, *, now: float | None = None) -> bool:
    """What the njs validator checks, in Python (for the tests): HS256 signature, ``exp``."""
    try:
        head, payload, sig = token.split(".")
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (ValueError, TypeError):
        return False
    if header.get("alg") != "HS256":
        return False
    want = hmac.new(secret.encode(), f"{head}.{payload}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(_b64(want), sig):
        return False
    exp = claims.get("exp")
    return exp is None or float(exp) > (now if now is not None else time.time())


def request_headers(profile: Profile, token: str | None = None) -> tuple[str, ...]:
    """Extra request headers the load generator sends for ``profile`` (the JWT)."""
    if profile.role == "api-jwt":
        return (f"Authorization: Bearer {token or make_token()}",)
    return ()


def upstream_host(sweep: Sweep, point: PlannedPoint) -> Host:
    """The upstream's inventory host: the first ``upstreams`` host, else the server."""
    ups = sweep.inventory.upstreams
    return ups[0] if ups else point.server


def upstream_port(host: Host) -> int:
    return int(host.variables.get("sizing_upstream_port") or UPSTREAM_PORT)


def upstream_cpus(sweep: Sweep, point: PlannedPoint, host: Host) -> tuple[int, ...]:
    """Where the upstream's worker runs: on the server host, the CPUs nginx does not use
    (the last one: locally the client's core, shared); elsewhere unpinned."""
    if host.name != point.server.name or point.allocation is None:
        return ()
    facts = sweep.facts.get(host.name)
    if facts is None:
        return ()
    used = set(point.allocation.server_cpus)
    free = [c.id for c in facts.topology.cpus if c.id not in used]
    return (free[-1],) if free else ()


def upstream_address(sweep: Sweep, point: PlannedPoint, target: Target) -> str:
    host = upstream_host(sweep, point)
    if host.name == point.server.name:
        return "127.0.0.1" if target.address in ("127.0.0.1", "localhost") else target.address
    return host.address


def gateway_vars(sweep: Sweep, point: PlannedPoint, target: Target) -> dict[str, Any]:
    """The nginx.yml variables that make the instance a proxy or an API gateway."""
    prof = point.profile
    if prof.role not in GATEWAY_ROLES:
        return {}
    host = upstream_host(sweep, point)
    return {
        "sizing_nginx_role": prof.role,
        "sizing_upstream": f"{upstream_address(sweep, point, target)}:{upstream_port(host)}",
        "sizing_jwt_secret": JWT_SECRET,
    }


def provision_upstream(sweep: Sweep, point: PlannedPoint) -> Host:
    """Start (or keep) the upstream nginx with ``playbooks/upstream.yml``."""
    host = upstream_host(sweep, point)
    cpus = upstream_cpus(sweep, point, host)
    extra = {
        "sizing_hosts": host.name,
        "sizing_upstream_affinity": affinity_masks(cpus) if cpus else "",
    }
    if sweep.extras.get("upstream_applied") == extra:
        return host
    sweep.progress.step(f"provisioning the upstream nginx on {host.name}")
    res = run_playbook("upstream.yml", sweep.inventory.path, extravars=extra, limit=[host.name],
                       debug=sweep.opts.debug)
    if not res.ok:
        why = res.problems().get(host.name) or f"playbook {res.status} (rc {res.rc})"
        raise ToolError(f"{host.name}: provisioning the upstream nginx failed: {why}")
    sweep.extras["upstream_applied"] = extra
    return host


def gateway_transfers(
    profile: Profile, direct_url: str, proxy_url: str, probe_url: str, token: str, nonce: str
) -> list[curl.Transfer]:
    """The single requests of a gateway point (see the module docstring), in order."""
    auth = request_headers(profile, token)
    # A warm-up pair (not counted), then direct and proxied requests alternate, so that
    # drift on a busy machine weighs on both sides of the difference alike.
    out = [curl.Transfer("warm_direct", direct_url), curl.Transfer("warm_proxy", proxy_url, auth)]
    for _ in range(SINGLE_REQUESTS):
        out += [curl.Transfer("direct", direct_url), curl.Transfer("proxy", proxy_url, auth)]
    if profile.role == "api-jwt":
        out += [
            curl.Transfer("bad_jwt", proxy_url,
                          (f"Authorization: Bearer {bad_token(token)}",
                           f"X-Sizing-Probe: bad-{nonce}")),
            curl.Transfer("no_jwt", proxy_url, (f"X-Sizing-Probe: none-{nonce}",)),
            curl.Transfer("good_jwt", proxy_url, (*auth, f"X-Sizing-Probe: good-{nonce}")),
            curl.Transfer("probe_log", probe_url, body_to_stdout=True),
        ]
    return out


def judge_gateway(profile: Profile, stdout: str, nonce: str) -> dict[str, Any]:
    """Added latency and the JWT verdict from curl's output (pure)."""
    timings = curl.parse(stdout)
    direct = curl.summary(timings, "direct")
    proxied = curl.summary(timings, "proxy")
    out: dict[str, Any] = {
        "single_request_direct_ms": direct,
        "single_request_proxy_ms": proxied,
        "added_latency_ms": {k: proxied[k] - direct[k] for k in curl.TIMINGS},
    }
    if profile.role == "api-jwt":
        codes = {t.label: t.code for t in timings}
        log_lines = stdout.split("sizing_curl label=good_jwt", 1)[-1]
        bad_seen = f"bad-{nonce}" in log_lines or f"none-{nonce}" in log_lines
        good_seen = f"good-{nonce}" in log_lines
        ok = (codes.get("bad_jwt") == 401 and codes.get("no_jwt") == 401
              and codes.get("good_jwt") == 200 and good_seen and not bad_seen)
        out["jwt_check"] = {
            "bad_signature_status": codes.get("bad_jwt"),
            "missing_token_status": codes.get("no_jwt"),
            "good_token_status": codes.get("good_jwt"),
            "rejected_reached_upstream": bad_seen,
            "good_reached_upstream": good_seen,
            "ok": ok,
        }
    return out


def _single_requests(
    sweep: Sweep, point: PlannedPoint, target: Target, token: str
) -> dict[str, Any]:
    """Run the curl requests from the first client through ``load.yml``; judge them."""
    from sizing.runner import _url

    client = point.clients[0]
    host = upstream_host(sweep, point)
    up = f"http://{upstream_address(sweep, point, target)}:{upstream_port(host)}"
    name = point.profile.path.rstrip("/").rsplit("/", 1)[-1]
    nonce = secrets.token_hex(6)
    transfers = gateway_transfers(point.profile, f"{up}/{name}", _url(point, target.address),
                                  f"{up}/sizing-probe-log", token, nonce)
    argv = curl.build_argv(transfers)
    spec = {client.name: {"start_at": time.time() + 2.0, "sample_cpu": False,
                          "windows": [{"index": 0, "offset": 0.0, "duration": 1.0,
                                       "commands": [argv]}]}}
    res = run_playbook("load.yml", sweep.inventory.path,
                       extravars={"sizing_hosts": client.name, "sizing_specs": spec},
                       limit=[client.name], timeout=180, debug=sweep.opts.debug)
    out = res.result(client.name, "Run the windows")
    if out is None:
        raise ToolError(f"{client.name}: single requests did not run: "
                        f"{res.problems().get(client.name, res.status)}")
    try:
        doc = json.loads(str(out.get("stdout", "")))
        stdout = doc["windows"][0]["commands"][0]["stdout"]
    except (ValueError, KeyError, IndexError) as exc:
        raise ToolError(f"{client.name}: unreadable single-request output: {exc}") from exc
    return judge_gateway(point.profile, stdout, nonce)


def measure(
    sweep: Sweep, point: PlannedPoint, target: Target, token: str
) -> tuple[PointResult, list[tuple[int, Sample]]]:
    """A gateway point: single requests and the JWT check, then the wrk windows."""
    try:
        gw = _single_requests(sweep, point, target, token)
    except SizingError as exc:
        return PointResult(point.key, Status.FAILED, f"gateway checks: {exc}"), []
    result, samples = sweep._measure(point, target, plain=True)
    meta = {**result.metadata, **gw, "role": point.profile.role,
            "upstream": gateway_vars(sweep, point, target).get("sizing_upstream")}
    flags = list(result.flags)
    reason = result.reason
    status = result.status
    jwt = gw.get("jwt_check")
    if jwt is not None and not jwt["ok"]:
        flags.append("jwt-check-failed")
        reason = "; ".join(filter(None, [reason, f"JWT check failed: {jwt}"]))
        if status is Status.MEASURED:
            status = Status.INVALID
    samples.append((0, Sample("added_latency_ms", gw["added_latency_ms"]["total"], "ms",
                              {k: gw[k] for k in gw})))
    from dataclasses import replace

    return replace(result, status=status, reason=reason, flags=tuple(flags), metadata=meta), \
        samples
