"""The gateway's single requests and JWT check (:mod:`sizing.measure.gateway`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GatewayChecks", "JwtCheck"]


@dataclass(frozen=True)
class JwtCheck:
    """The api-jwt profile's check: a bad or missing token is refused and never proxied."""

    bad_signature_status: int | None = None
    missing_token_status: int | None = None
    good_token_status: int | None = None
    rejected_reached_upstream: bool | None = None
    good_reached_upstream: bool | None = None
    ok: bool = False


@dataclass(frozen=True)
class GatewayChecks:
    """Added latency (curl's timings, ms, median of fresh connections) and the JWT check."""

    single_request_direct_ms: dict[str, float] | None = None
    single_request_proxy_ms: dict[str, float] | None = None
    added_latency_ms: dict[str, float] | None = None
    jwt_check: JwtCheck | None = None
