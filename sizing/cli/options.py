"""The options and fixed choices the commands share: StrEnums, :func:`choice` (one clear
line for a bad value), :func:`metavar` and the ``Annotated`` options."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from sizing.errors import UsageError
from sizing.model import BasisPlatform, HtChoice, Source


class RedundancyChoice(StrEnum):
    """``--redundancy``."""

    NONE = "none"
    N_PLUS_1 = "n+1"


E = TypeVar("E", bound=Enum)


def basis_ids(text: str | None) -> tuple[str, ...]:
    """``--basis a,b``: the ids asked for (empty: the default choice)."""
    if not text:
        return ()
    return tuple(t.strip() for t in text.split(",") if t.strip())


def choice(enum: type[E], value: str, option: str, allowed: Sequence[E] = ()) -> E:
    """Parse a choice ourselves so a bad value is one clear line, not a usage block;
    ``allowed``: the members this option takes (all when empty)."""
    members = list(allowed or enum)
    for m in members:
        if str(m.value) == value.lower():
            return m
    expected = ", ".join(str(m.value) for m in members)
    raise UsageError(f"{option}: unknown value {value!r} (expected {expected})")


def metavar(enum: type[Enum] | Sequence[Enum]) -> str:
    """``a|b|c``: the choices, for --help."""
    return "|".join(str(m.value) for m in enum)


ANY = "any"
PLATFORM_METAVAR = "|".join([*BasisPlatform, ANY])
RUN_HT = (HtChoice.OFF, HtChoice.ON, HtChoice.BOTH)  # run measures each of both
SIZING_HT = (HtChoice.OFF, HtChoice.ON, HtChoice.ANY)  # sizing takes either


def platform_choice(value: str, option: str = "--platform") -> BasisPlatform | None:
    """``--platform``: one basis platform, or None for ``any``."""
    if value.lower() == ANY:
        return None
    try:
        return BasisPlatform(value.lower())
    except ValueError:
        raise UsageError(
            f"{option}: unknown value {value!r} (expected {PLATFORM_METAVAR.replace('|', ', ')})"
        ) from None


SourceOpt = Annotated[
    str,
    typer.Option(
        "--source",
        metavar=metavar(Source),
        help="Bases to choose from: measured only, the bundled reference data only, or both "
        "(the default: a qualifying measured basis, else the reference). --basis names one.",
    ),
]
BasisOpt = Annotated[
    str | None,
    typer.Option(
        "--basis",
        metavar="ID[,ID]",
        help="Size from these bases (ids from `sizing results --bases`, or a unique prefix); "
        "default: the measured basis with the most core counts that qualifies, else the "
        "reference.",
    ),
]
ExtrapolationOpt = Annotated[
    bool,
    typer.Option(
        "--allow-extrapolation",
        help="Let the fitted scaling model size core counts beyond those measured, ranked "
        "with measured ones (labelled extrapolated).",
    ),
]
ArticlePricesOpt = Annotated[
    bool,
    typer.Option(
        "--article-prices",
        help="Price measured bases with the catalog (by default the article's 2021 list) "
        "when the inventory declares no sizing_price_usd and no catalog entry matches "
        "their CPU.",
    ),
]
VirtualizedOpt = Annotated[
    bool,
    typer.Option(
        "--include-virtualized",
        help="Let the default choice use a virtualized host (a container or VM measured as "
        "bare metal); never called bare metal.",
    ),
]
CatalogOpt = Annotated[
    Path | None,
    typer.Option(
        "--catalog",
        help="Hardware cost catalog YAML (default: the bundled profiles/catalog.yml, the "
        "article's prices). Giving one prices measured bases with it (as --article-prices).",
        dir_okay=False,
    ),
]
DbOpt = Annotated[
    Path | None,
    typer.Option(
        "--db",
        help="Results database (default: $SIZING_DB, else sizing.sqlite in the user data "
        "directory, ~/.local/share/sizing).",
    ),
]
EmulatedOpt = Annotated[
    bool,
    typer.Option(
        "--include-emulated",
        help="Also use figures measured in software-emulated guests (never by default).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


class FormatChoice(StrEnum):
    """``guide --format``."""

    PDF = "pdf"
    HTML = "html"
    MD = "md"


class PaperChoice(StrEnum):
    """``guide --paper``."""

    A4 = "a4"
    LETTER = "letter"
