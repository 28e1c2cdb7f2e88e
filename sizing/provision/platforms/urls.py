"""URLs and URIs that may carry a secret, made safe to show (pure).

A vSphere SDK URL or a libvirt URI from an inventory is refused when it carries a
password or a secret-looking query parameter, and the refusal never repeats the value:
``redact_url`` is the only form in which such a value reaches a message, a plan, the
output of ``inventory check`` or the stored metadata.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

__all__ = ["SECRET_KEY", "redact_url", "url_secret"]

# query parameters whose value is a secret (password=, token=, api_key=, auth=, ...)
# (libvirt's keyfile=, pkipath= or sshauth= name files and methods, not secrets)
SECRET_KEY = re.compile(
    r"pass|pwd|secret|token|api_?key|^auth|cred|session|signature|^key$|^sig$", re.IGNORECASE
)
HIDDEN = "***"


def url_secret(url: str) -> str | None:
    """What secret ``url`` carries ("a password", "a user and password", "a secret query
    parameter ..."), or None. Looks before anything else about the URL is judged."""
    netloc = url.split("://", 1)[1].split("/", 1)[0] if "://" in url else ""
    userinfo = netloc.rpartition("@")[0] if "@" in netloc else ""
    if ":" in userinfo:
        return "a user and password"
    query = url.split("?", 1)[1].split("#", 1)[0] if "?" in url else ""
    for key, _ in parse_qsl(query, keep_blank_values=True):
        if SECRET_KEY.search(key):
            return f"a secret query parameter ({key[:40]}=)"
    return None


def redact_url(url: str, *, keep_user: bool = True) -> str:
    """``url`` with any password, secret query value and fragment hidden; the user name
    kept unless ``keep_user`` is false (a vSphere user is a credential, an SSH one not)."""
    if "://" not in url:  # not a URL: shown only when it cannot hold a credential
        return HIDDEN if "@" in url or url_secret(url) or "?" in url else url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        scheme = url.split("://", 1)[0] if "://" in url else ""
        return f"{scheme[:20]}://{HIDDEN} (unparseable)" if scheme else HIDDEN
    if ":" in host:
        host = f"[{host}]"
    user = ""
    if parts.username is not None or parts.password is not None:
        name = parts.username if keep_user and parts.username else HIDDEN
        user = name + (f":{HIDDEN}" if parts.password is not None else "") + "@"
    query = "&".join(
        f"{k}={HIDDEN if SECRET_KEY.search(k) else v}"
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    )
    out = f"{parts.scheme}://{user}{host}{port}{parts.path}"
    return out + (f"?{query}" if query else "")
