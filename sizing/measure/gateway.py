"""Reverse-proxy and API-gateway profiles (``role: proxy`` and ``role: api-jwt``).

NGINX under test proxies to an upstream web server, itself an nginx
(``playbooks/upstream.yml``, ``templates/nginx-upstream.conf.j2``): on the hosts of the
inventory's ``upstreams`` group, or else a second instance on the server host itself,
pinned to the CPUs the server's nginx does not use. The proxy keeps ``keepalive``
connections to it (HTTP/1.1, ``Connection`` header cleared), as in the API-gateway
article. ``api-jwt`` validates an HS256 JWT on every request with njs (the NGINX
JavaScript module from Debian, ``templates/sizing-jwt.js.j2``) before proxying; a missing
or wrong token gets 401 and is never proxied.

Before its load windows a gateway point measures, from its first client, with curl:

* **added latency**: the timing breakdown (connect, TLS, first byte, total; median of
  ``SINGLE_REQUESTS`` fresh connections each, alternating, after a warm-up pair) of one
  request straight to the upstream and one through the proxy, and their difference;
* **JWT check** (api-jwt): a request with a wrong signature must get 401 and a good one
  200, and the upstream's probe log (requests carrying ``X-Sizing-Probe``) must hold the
  good request's nonce and not the bad one's: the bad request never reached it.

A failed JWT check makes the point invalid. The tokens are :mod:`sizing.plan.jwt`'s; the
upstream and its variables are :mod:`sizing.provision.upstream`'s.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace

from sizing.errors import SizingError, ToolError
from sizing.load import curl
from sizing.loadproto import Command, LoadSpec, WindowSpec
from sizing.measure.evaluate import Measurement
from sizing.measure.measure_context import MeasureContext
from sizing.measure.throughput import Throughput
from sizing.measure.windows import WindowRunner
from sizing.model import PointResult, Sample, Status
from sizing.plan.jwt import bad_token
from sizing.plan.loadspec import request_headers, url_for
from sizing.plan.points import PlannedPoint
from sizing.profiles import Profile
from sizing.provision.platforms.base import Target
from sizing.provision.upstream import (
    gateway_vars,
    upstream_url,
)
from sizing.records import GatewayChecks, JwtCheck, SampleMeta, dump

__all__ = ["SINGLE_REQUESTS", "Gateway", "gateway_transfers", "judge_gateway", "single_requests"]

SINGLE_REQUESTS = 5
SINGLE_LEAD_S = 2.0  # one client, one window: a short lead


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
            curl.Transfer(
                "bad_jwt",
                proxy_url,
                (f"Authorization: Bearer {bad_token(token)}", f"X-Sizing-Probe: bad-{nonce}"),
            ),
            curl.Transfer("no_jwt", proxy_url, (f"X-Sizing-Probe: none-{nonce}",)),
            curl.Transfer("good_jwt", proxy_url, (*auth, f"X-Sizing-Probe: good-{nonce}")),
            curl.Transfer("probe_log", probe_url, body_to_stdout=True),
        ]
    return out


def judge_gateway(profile: Profile, stdout: str, nonce: str) -> GatewayChecks:
    """Added latency and the JWT verdict from curl's output (pure)."""
    timings = curl.parse(stdout)
    direct = curl.summary(timings, "direct")
    proxied = curl.summary(timings, "proxy")
    jwt = None
    if profile.role == "api-jwt":
        codes = {t.label: t.code for t in timings}
        log_lines = stdout.split("sizing_curl label=good_jwt", 1)[-1]
        bad_seen = f"bad-{nonce}" in log_lines or f"none-{nonce}" in log_lines
        good_seen = f"good-{nonce}" in log_lines
        ok = (
            codes.get("bad_jwt") == 401
            and codes.get("no_jwt") == 401
            and codes.get("good_jwt") == 200
            and good_seen
            and not bad_seen
        )
        jwt = JwtCheck(
            bad_signature_status=codes.get("bad_jwt"),
            missing_token_status=codes.get("no_jwt"),
            good_token_status=codes.get("good_jwt"),
            rejected_reached_upstream=bad_seen,
            good_reached_upstream=good_seen,
            ok=ok,
        )
    return GatewayChecks(
        single_request_direct_ms=direct,
        single_request_proxy_ms=proxied,
        added_latency_ms={k: proxied[k] - direct[k] for k in curl.TIMINGS},
        jwt_check=jwt,
    )


def single_requests(ctx: MeasureContext, point: PlannedPoint, target: Target) -> GatewayChecks:
    """Run the curl requests from the first client through ``load.yml``; judge them."""
    client = point.clients[0]
    up = upstream_url(ctx.inventory, point, target)
    name = point.profile.path.rstrip("/").rsplit("/", 1)[-1]
    nonce = secrets.token_hex(6)
    transfers = gateway_transfers(
        point.profile,
        f"{up}/{name}",
        url_for(point, target.address),
        f"{up}/sizing-probe-log",
        ctx.token,
        nonce,
    )
    argv = curl.build_argv(transfers)
    spec = {client.name: LoadSpec(windows=[WindowSpec(0, 0.0, 1.0, [Command(argv)])])}
    (out,) = WindowRunner(ctx).run(spec, lead_s=SINGLE_LEAD_S, mark_lost=False)
    if out.unreadable:
        raise ToolError(f"{client.name}: unreadable single-request output: {out.problem}")
    if out.windows is None:
        raise ToolError(f"{client.name}: single requests did not run: {out.problem}")
    try:
        stdout = out.windows[0].commands[0].stdout
    except IndexError as exc:
        raise ToolError(f"{client.name}: unreadable single-request output: {exc}") from exc
    return judge_gateway(point.profile, stdout, nonce)


@dataclass
class Gateway:
    """A gateway point: single requests and the JWT check, then the closed-loop windows."""

    throughput: Throughput = field(default_factory=Throughput)

    def measure(self, ctx: MeasureContext, point: PlannedPoint, target: Target) -> Measurement:
        try:
            gw = single_requests(ctx, point, target)
        except SizingError as exc:
            return PointResult(point.key, Status.FAILED, f"gateway checks: {exc}"), []
        result, samples = self.throughput.measure(ctx, point, target)
        pool = gateway_vars(ctx.inventory, point, target).get("sizing_upstreams") or [None]
        # the pool's first upstream: the one the single-request baseline went to
        meta = replace(
            result.metadata,
            gateway=gw,
            workload=replace(result.metadata.workload, role=point.profile.role),
            env=replace(result.metadata.env, upstream=pool[0]),
        )
        flags = list(result.flags)
        reason = result.reason
        status = result.status
        jwt = gw.jwt_check
        if jwt is not None and not jwt.ok:
            flags.append("jwt-check-failed")
            reason = "; ".join(filter(None, [reason, f"JWT check failed: {dump(jwt)}"]))
            if status is Status.MEASURED:
                status = Status.INVALID
        added = (gw.added_latency_ms or {}).get("total", 0.0)
        samples.append((0, Sample("added_latency_ms", added, "ms", SampleMeta(gateway=gw))))
        return replace(
            result, status=status, reason=reason, flags=tuple(flags), metadata=meta
        ), samples
