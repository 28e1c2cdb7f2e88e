"""The closed loop of a replay (issue 57): the mix the lab nginx's own log showed, read
back into the customer's classes, compared with the customer's mix, and the verdict.

The lab log is sizing's own (``MIX_LOG_FORMAT``, tallied per window on the server host by
``playbooks/files/loadgen.py`` into a :class:`~sizing.loadproto.MixCounts`: bounded
counts, never lines). Its figures, as :mod:`sizing.demand` reads a customer's:

* requests per connection: a connection that reached k requests logs one line with each
  ``$connection_requests`` 1..k, so ``n(k)`` lines with k are the connections that reached
  k; the share of connections with ``lo..hi`` requests is ``(n(lo) - n(hi + 1)) / n(1)``
  and the mean is all lines over ``n(1)``. Connections cut by a window's edges make the
  figures approximate by a few connections in thousands;
* TLS and resumption: the first request of each connection (``$connection_requests`` 1):
  ``$ssl_session_reused`` ``-`` plain, ``.`` a full handshake, ``r`` resumed;
* sizes: each logged size (``$bytes_sent`` or ``$body_bytes_sent``, the field the customer
  counted) in the customer's size classes; status: the share of each class.

A replay outside any tolerance (:data:`sizing.workload.TOLERANCE`) is a ``mix-mismatch``:
an invalid verdict, so the point is kept and never sized.
"""

from __future__ import annotations

from collections.abc import Mapping

from sizing.loadproto import MixCounts
from sizing.records.guards import Verdict
from sizing.records.replay import MixRowRecord, ReplayRecord
from sizing.workload import Bin, MixComparison, WorkloadMix, compare

__all__ = ["MIX_MISMATCH", "replay_record", "replayed_mix", "verdict", "words"]

MIX_MISMATCH = "mix-mismatch"


def _per_connection(n: Mapping[int, int], bins: tuple[Bin, ...]) -> tuple[Bin, ...]:
    conns = n.get(1, 0)
    if conns <= 0:
        return ()
    out: list[Bin] = []
    for lo, hi, _ in bins:
        reached = n.get(lo, 0) - (n.get(hi + 1, 0) if hi is not None else 0)
        out.append((lo, hi, max(0, reached) / conns))
    return tuple(out)


def _sizes(sizes: Mapping[str, int], bins: tuple[Bin, ...]) -> tuple[Bin, ...]:
    counts = [0] * len(bins)
    for text, count in sizes.items():
        size = int(text)
        for i, (lo, hi, _) in enumerate(bins):
            if lo <= size and (hi is None or size <= hi):
                counts[i] += count
                break
    total = sum(sizes.values())
    if total <= 0:
        return ()
    return tuple((lo, hi, c / total) for (lo, hi, _), c in zip(bins, counts, strict=True))


def replayed_mix(counts: MixCounts, yours: WorkloadMix) -> WorkloadMix:
    """The lab log's mix in the classes of the customer's (see the module)."""
    n = {int(k): v for k, v in counts.per_conn.items()}
    conns = n.get(1, 0)
    plain, full, resumed = (counts.first.get(k, 0) for k in ("-", ".", "r"))
    tls = full + resumed
    sizes = counts.body_sizes if yours.size_field == "body_bytes_sent" else counts.sizes
    total_status = sum(counts.status.values())
    return WorkloadMix(
        role=yours.role,
        sizes=_sizes(sizes, yours.sizes),
        size_field=yours.size_field,
        per_connection=_per_connection(n, yours.per_connection),
        requests_per_connection=counts.requests / conns if conns else None,
        tls_share=tls / (plain + tls) if plain + tls else None,
        resumption_share=resumed / tls if tls else None,
        status=tuple(sorted((k, v / total_status) for k, v in counts.status.items()))
        if total_status
        else (),
    )


def words(yours: WorkloadMix, replayed: WorkloadMix, comparison: MixComparison) -> str:
    """The comparison as the guide says it: 'requests per connection 8.1 (yours 8.0),
    TLS 60% (yours 60%), ...', each shape by its distance and tolerance."""
    parts: list[str] = []
    for row in comparison.rows:
        if row.yours or row.replayed:
            parts.append(f"{row.figure} {row.replayed} (yours {row.yours})")
        else:
            parts.append(f"{row.figure} {row.distance:.2f} (within {row.tolerance:.2f})")
    return ", ".join(parts)


def replay_record(key: str, yours: WorkloadMix, counts: MixCounts) -> ReplayRecord:
    """What the point stores of its replay: the comparison of the logged mix with yours."""
    replayed = replayed_mix(counts, yours)
    comparison = compare(yours, replayed)
    return ReplayRecord(
        key=key,
        rows=tuple(
            MixRowRecord(r.figure, r.yours, r.replayed, r.distance, r.tolerance, r.ok)
            for r in comparison.rows
        ),
        not_compared=comparison.not_compared,
        ok=comparison.ok and counts.requests > 0,
        words=words(yours, replayed, comparison),
        requests_logged=counts.requests,
    )


def verdict(record: ReplayRecord) -> Verdict | None:
    """``mix-mismatch`` (invalid) with the figures side by side, or None when it matched."""
    if record.ok:
        return None
    if record.requests_logged <= 0:
        return Verdict(MIX_MISMATCH, "mix-mismatch: the lab log recorded no request")
    bad = [
        f"{r.figure} {r.replayed} (yours {r.yours})"
        if r.yours or r.replayed
        else f"{r.figure} {r.distance:.2f} (tolerance {r.tolerance:.2f})"
        for r in record.rows
        if not r.ok
    ]
    return Verdict(MIX_MISMATCH, "mix-mismatch: the replay was not your mix: " + "; ".join(bad))
