"""The guide's "Your traffic, replayed" chapter (issue 57): for every point that replayed a
customer's workload (``sizing run --workload``), the mix the lab nginx's own log showed
beside the customer's, in words, and whether the point may size."""

from __future__ import annotations

from collections.abc import Sequence

from sizing.report.data.blocks import Block, p
from sizing.sources.rundata import RunData

__all__ = ["replayed_blocks"]


def replayed_blocks(runs: Sequence[RunData], key: str | None = None) -> list[Block]:
    """One paragraph per point that replayed the workload ``key`` (the demand file's:
    another customer's replays never appear in this customer's guide; None: every one),
    newest run first; none when nothing was replayed."""
    out: list[Block] = []
    for run in sorted(runs, key=lambda r: r.record.id, reverse=True):
        for point in run.points:
            replay = point.result.metadata.replay
            if replay is None or (key is not None and replay.key != key):
                continue
            k = point.result.key
            if replay.requests_logged <= 0:
                verdict = "the lab's log recorded no request (the point failed): nothing compared"
            elif replay.ok:
                verdict = "within every tolerance"
            else:
                verdict = "outside a tolerance: flagged mix-mismatch and not used for sizing"
            out.append(
                p(
                    f"Your traffic, replayed on {k.host} at {k.cores} core"
                    f"{'s' if k.cores != 1 else ''} (run {run.record.id}, basis {replay.key}):"
                    f" {replay.words + '; ' if replay.words else ''}{verdict}."
                )
            )
    return out
