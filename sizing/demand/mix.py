"""The customer's workload from what a log or counters showed: the traffic mix (sizes,
requests per connection, TLS and resumption shares, status classes) and the role the user
stated (logs cannot tell a JWT check from a file served), with the figures the user assumed
where the input is silent. Nothing is invented: a figure the input lacks and nobody stated
is ``None`` and named in ``missing``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sizing.demand.tally import CLASSES, SIZE_EDGES, Tally
from sizing.errors import UsageError
from sizing.workload import ASSUMABLE, Assumed, Bin, Role, WorkloadMix, parse_role

# Requests-per-connection bins: exact up to 10, then wider (the distribution's tail).
CONN_EDGES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 50, 100, 1000)


def parse_assumptions(items: Sequence[str], source: str | None) -> tuple[Assumed, ...]:
    """``--assume tls-share=0.6`` (repeatable) with ``--assume-source``: the figures the
    logs do not give, stated by the user. UsageError in one line for a bad one."""
    if not items:
        if source:
            raise UsageError("--assume-source: give it with --assume NAME=VALUE")
        return ()
    if not source or not source.strip():
        raise UsageError(
            "--assume: say where the figure comes from with --assume-source"
            " (e.g. 'the customer's load balancer statistics, 2026-11')"
        )
    names = ", ".join(n.replace("_", "-") for n in ASSUMABLE)
    out: dict[str, Assumed] = {}
    for item in items:
        name, sep, value = item.partition("=")
        key = name.strip().lower().replace("-", "_")
        if not sep:
            raise UsageError(f"--assume {name.strip()}: give NAME=VALUE (one of {names})")
        if key not in ASSUMABLE:
            raise UsageError(f"--assume: {name.strip()!r} is not one of {names} (NAME=VALUE)")
        text = value.strip()
        try:
            # one % at most ("0.5%%" read as 0.005 before); + 0.0: "-0" is 0, not "-0%"
            number = float(text.removesuffix("%")) / (100 if text.endswith("%") else 1) + 0.0
        except ValueError:
            raise UsageError(f"--assume {name.strip()}: the value is not a number") from None
        share = key != "requests_per_connection"
        if not (0 <= number <= 1 if share else 1 <= number <= 1e9):
            want = "a share from 0 to 1 (or 0% to 100%)" if share else "from 1 to 1,000,000,000"
            raise UsageError(f"--assume {name.strip()}: give {want}")
        if key in out:
            raise UsageError(f"--assume: {name.strip()} given twice")
        out[key] = Assumed(key, number, source.strip())
    return tuple(out.values())


def role_of(text: str | None) -> tuple[Role | None, str]:
    """``--role`` as typed, and where the role comes from."""
    if text is None:
        return None, ""
    try:
        return parse_role(text), "stated with --role"
    except ValueError as exc:
        raise UsageError(f"--role: {exc}") from None


def _size_bins(sizes: Sequence[int]) -> tuple[Bin, ...]:
    total = sum(sizes)
    if not total:
        return ()
    out: list[Bin] = []
    lo = 0
    for i, n in enumerate(sizes):
        hi = SIZE_EDGES[i] if i < len(SIZE_EDGES) else None
        if n:
            out.append((lo, hi, round(n / total, 6)))
        lo = (hi or 0) + 1
    return tuple(out)


def conn_bins(reached: Mapping[int, int]) -> tuple[tuple[Bin, ...], int]:
    """The distribution of requests per connection from the number of connections that
    reached k requests (each logs exactly one line with ``$connection_requests`` = k), and
    the connections counted. Missing lines can make the counts not fall with k: a bin
    never goes below 0."""
    first = reached.get(1, 0)
    if not first:
        return (), 0
    counted: list[tuple[int, int | None, int]] = []
    for i, lo in enumerate(CONN_EDGES):
        nxt = CONN_EDGES[i + 1] if i + 1 < len(CONN_EDGES) else None
        n = reached.get(lo, 0) - (reached.get(nxt, 0) if nxt is not None else 0)
        if n > 0:
            counted.append((lo, None if nxt is None else nxt - 1, n))
    total = sum(n for _, _, n in counted) or 1
    return tuple((lo, hi, round(n / total, 6)) for lo, hi, n in counted), first


def mix_of_tally(
    t: Tally,
    have: frozenset[str],
    *,
    role: Role | None,
    role_source: str,
    assumed: tuple[Assumed, ...],
) -> WorkloadMix:
    """The workload of a log's tallies (what the format logs: ``have``)."""
    missing: list[str] = []
    size_field = (
        "bytes_sent"
        if "bytes_sent" in have
        else "body_bytes_sent"
        if "body_bytes_sent" in have
        else ""
    )
    sizes = _size_bins(t.sizes) if size_field else ()
    if not sizes:
        missing.append("the response-size mix ($bytes_sent)")
    reached: Mapping[int, int] = getattr(t, "conn_requests", {}) or {}
    per_conn, _ = conn_bins(reached) if "connection_requests" in have else ((), 0)
    new = t.new_connections.total()
    rpc = round(t.requests.total() / new, 3) if new else None
    if rpc is None:
        missing.append("requests per connection ($connection_requests)")
    tls_share: float | None = None
    tls = getattr(t, "tls_connections", None)
    plain = getattr(t, "plain_connections", None)
    if tls is not None and plain is not None and "ssl_session_reused" in have and tls + plain:
        tls_share = round(tls / (tls + plain), 6)
    else:
        missing.append("the TLS share of connections ($ssl_session_reused)")
    full, resumed = t.full_handshakes.total(), t.resumed.total()
    resumption = round(resumed / (full + resumed), 6) if full + resumed else None
    if resumption is None:
        missing.append("the resumption share ($ssl_session_reused)")
    counts = {c: t.classes[c].total() for c in CLASSES}
    total = sum(counts.values())
    status = tuple((c, round(n / total, 6)) for c, n in counts.items() if n) if total else ()
    if role is None:
        missing.append("the role (logs cannot tell it: --role static, lb, proxy or api-jwt)")
    return _with_assumed(
        WorkloadMix(
            role=role,
            role_source=role_source,
            sizes=sizes,
            size_field=size_field,
            per_connection=per_conn,
            requests_per_connection=rpc,
            tls_share=tls_share,
            resumption_share=resumption,
            status=status,
            missing=tuple(missing),
        ),
        assumed,
    )


def mix_of_counters(
    requests_per_connection: float | None,
    resumption_share: float | None,
    *,
    role: Role | None,
    role_source: str,
    assumed: tuple[Assumed, ...],
) -> WorkloadMix:
    """The workload counters give: requests per connection and the resumption share."""
    missing = ["the response-size mix (an access log)", "the TLS share of connections"]
    if requests_per_connection is None:
        missing.append("requests per connection (accepted connections)")
    if resumption_share is None:
        missing.append("the resumption share (the NGINX Plus API's ssl counters)")
    if role is None:
        missing.append("the role (counters cannot tell it: --role static, lb, proxy or api-jwt)")
    return _with_assumed(
        WorkloadMix(
            role=role,
            role_source=role_source,
            requests_per_connection=requests_per_connection,
            resumption_share=resumption_share,
            missing=tuple(missing),
        ),
        assumed,
    )


def _with_assumed(mix: WorkloadMix, assumed: tuple[Assumed, ...]) -> WorkloadMix:
    """The mix with the user's assumptions for figures the input lacks; one the input has
    is refused (a measured figure is never overridden by a stated one)."""
    for a in assumed:
        if getattr(mix, a.figure) is not None:
            raise UsageError(
                f"--assume {a.figure.replace('_', '-')}: the input gives it"
                f" ({getattr(mix, a.figure):g}); a logged figure is not assumed"
            )
    if not assumed:
        return mix
    stated = {a.figure for a in assumed}
    missing = tuple(m for m in mix.missing if not any(_names(m, s) for s in stated))
    return replace(mix, assumed=assumed, missing=missing)


_WORDS = {
    "tls_share": "TLS share",
    "resumption_share": "resumption share",
    "requests_per_connection": "requests per connection",
}


def _names(missing: str, figure: str) -> bool:
    """Whether a missing figure's words are those of ``figure`` (then it is stated)."""
    return _WORDS[figure] in missing
