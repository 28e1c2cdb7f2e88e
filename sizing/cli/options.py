"""The options and fixed choices the commands share: StrEnums, :func:`choice` (one clear
line for a bad value), :func:`metavar` and the ``Annotated`` options."""

from __future__ import annotations

from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from sizing.errors import UsageError


class PlatformChoice(StrEnum):
    """``--platform``."""

    BAREMETAL = "baremetal"
    HYPERVISOR = "hypervisor"
    KUBERNETES = "kubernetes"
    ANY = "any"


class HtChoice(StrEnum):
    """``--ht``."""

    OFF = "off"
    ON = "on"
    ANY = "any"


class RedundancyChoice(StrEnum):
    """``--redundancy``."""

    NONE = "none"
    N_PLUS_1 = "n+1"


class SourceChoice(StrEnum):
    """``--source``."""

    MEASURED = "measured"
    REFERENCE = "reference"
    BOTH = "both"


E = TypeVar("E", bound=Enum)


def choice(enum: type[E], value: str, option: str) -> E:
    """Parse a choice ourselves so a bad value is one clear line, not a usage block."""
    try:
        return enum(value.lower())
    except ValueError:
        allowed = ", ".join(str(m.value) for m in enum)
        raise UsageError(f"{option}: unknown value {value!r} (expected {allowed})") from None


def metavar(enum: type[Enum]) -> str:
    """``a|b|c``: the choices, for --help."""
    return "|".join(str(m.value) for m in enum)


SourceOpt = Annotated[
    str,
    typer.Option(
        "--source",
        metavar=metavar(SourceChoice),
        help="Figures to size from: measured, the bundled published reference data, or both "
        "(measured where a platform/HT/profile series was measured, reference elsewhere).",
    ),
]
CatalogOpt = Annotated[
    Path | None,
    typer.Option(
        "--catalog",
        help="Hardware cost catalog YAML (default: the bundled profiles/catalog.yml).",
        dir_okay=False,
    ),
]
DbOpt = Annotated[
    Path | None,
    typer.Option("--db", help="Results database (default: $SIZING_DB or results/sizing.sqlite)."),
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
