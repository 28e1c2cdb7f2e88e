"""A plain-text table for the terminal, without tabulate (whose import costs more than the
whole engine): the table of ``run``/``results`` and the engine commands' tables."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["grid"]


def grid(
    headers: Sequence[str], rows: Sequence[Sequence[object]], left: set[int] | None = None
) -> str:
    """A plain-text table: right-aligned columns (``left`` ones left-aligned). A cell
    holding line breaks (a long name folded to fit) takes as many lines as it has, the
    row's other cells on its first.

    Hand-rolled rather than tabulate, whose import costs more than the whole engine.
    """
    cells = [[str(c).split("\n") for c in row] for row in rows]
    widths = [max([len(h), *(len(x) for r in cells for x in r[i])]) for i, h in enumerate(headers)]
    left = left or set()

    def line(values: Sequence[str]) -> str:
        parts = [
            v.ljust(w) if i in left else v.rjust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    out = [line(headers), "  ".join("-" * w for w in widths)]
    for r in cells:
        for k in range(max(len(c) for c in r)):
            out.append(line([c[k] if k < len(c) else "" for c in r]))
    return "\n".join(out)
