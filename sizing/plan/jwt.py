"""HS256 JSON Web Tokens for the ``api-jwt`` profile (pure).

The secret is a fixed benchmark value (``JWT_SECRET``): it protects nothing, it only
makes the gateway do the work of a real validation.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

__all__ = ["JWT_SECRET", "bad_token", "make_token", "verify_token"]

JWT_SECRET = "sizing-benchmark-hs256-secret"  # not a secret: see the module docstring


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
