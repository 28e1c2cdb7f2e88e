"""The guide's blocks: the kinds of block a chapter is made of (a paragraph of text runs,
a heading, facts, a table, preformatted lines, the recommendation, the headline figures, a
host's facts, the charts, the marks' legend), the :class:`Chapter` that holds them, and
the small constructors the chapters are written with. ``templates/guide.html.j2`` and
``templates/guide.md.j2`` hold one macro per ``kind``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from sizing.report.data.model import Fact, Headline, HostView, RecommendationView, TableBlock

__all__ = [
    "Block",
    "Chapter",
    "Charts",
    "Facts",
    "Heading",
    "Headlines",
    "HostBlock",
    "Legend",
    "Para",
    "Pre",
    "RecommendationBlock",
    "Run",
    "Table",
    "code",
    "facts",
    "h3",
    "p",
    "table",
]


@dataclass(frozen=True)
class Run:
    """A piece of a paragraph: plain text, code, or a URL."""

    text: str
    code: bool = False
    url: bool = False


@dataclass(frozen=True)
class Block:
    kind: ClassVar[str]  # the template's macro for it


@dataclass(frozen=True)
class Para(Block):
    kind: ClassVar[str] = "para"
    runs: tuple[Run, ...] = ()
    cls: str = ""  # lead, note


@dataclass(frozen=True)
class Heading(Block):
    kind: ClassVar[str] = "heading"
    text: str = ""
    id: str = ""


@dataclass(frozen=True)
class Facts(Block):
    kind: ClassVar[str] = "facts"
    items: tuple[Fact, ...] = ()
    cls: str = ""
    title: str = ""  # a small title above them


@dataclass(frozen=True)
class Table(Block):
    kind: ClassVar[str] = "table"
    table: TableBlock | None = None
    cls: str = ""
    show_title: bool = True


@dataclass(frozen=True)
class Pre(Block):
    kind: ClassVar[str] = "pre"
    lines: tuple[str, ...] = ()
    lang: str = ""


@dataclass(frozen=True)
class RecommendationBlock(Block):
    kind: ClassVar[str] = "recommendation"
    view: RecommendationView | None = None


@dataclass(frozen=True)
class Headlines(Block):
    kind: ClassVar[str] = "headlines"
    items: tuple[Headline, ...] = ()


@dataclass(frozen=True)
class HostBlock(Block):
    kind: ClassVar[str] = "host"
    host: HostView | None = None


@dataclass(frozen=True)
class Charts(Block):
    kind: ClassVar[str] = "charts"


@dataclass(frozen=True)
class Legend(Block):
    """The provenance marks' legend, then ``runs`` (where the reference figures are from)."""

    kind: ClassVar[str] = "legend"
    runs: tuple[Run, ...] = ()


@dataclass(frozen=True)
class Chapter:
    """One chapter: its anchor, title, number (``A`` for an appendix) and blocks."""

    id: str
    title: str
    num: str
    blocks: tuple[Block, ...] = field(default=())
    appendix: bool = False
    lead: bool = False  # printed before the table of contents, right after the cover


def p(*parts: str | Run, cls: str = "") -> Para:
    return Para(tuple(x if isinstance(x, Run) else Run(x) for x in parts), cls)


def code(text: str) -> Run:
    return Run(text, code=True)


def h3(text: str, id: str = "") -> Heading:
    return Heading(text, id)


def table(t: TableBlock | None, cls: str = "", show_title: bool = True) -> list[Block]:
    return [] if t is None else [Table(t, cls, show_title)]


def facts(items: Sequence[Fact], cls: str = "", title: str = "") -> Facts:
    return Facts(tuple(items), cls, title)
