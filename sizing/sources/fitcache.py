"""A file cache of the engine's bootstrap draws, beside the results database.

The bootstrap of a series (:mod:`sizing.engine.predict`) costs tens to hundreds of
milliseconds; ``recommend`` must start in well under that. The draws depend only on the
series' repetitions, so they are kept in ``<database>.fits.json`` keyed by a hash of them:
computed once (at the end of a run, or by the first command that needs them) and read
after. A cache that cannot be read is recomputed; one that cannot be written is skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sizing.engine.figures import build_series
from sizing.engine.predict import (
    Bootstrap,
    Bootstrapper,
    Counts,
    bootstrap,
    data_key,
    remembering,
)
from sizing.errors import SizingError
from sizing.model import FigureKind
from sizing.paths import Database
from sizing.sources import Inputs, db_path, load_bases
from sizing.store import beside as store_beside

MAX_ENTRIES = 500


def cache_path(db: Database) -> Path:
    return store_beside(db, ".fits.json")


def cached_bootstrapper(db: Database | None) -> Bootstrapper:
    """A bootstrapper for :func:`sizing.engine.figures.build_series` that reads and
    fills the cache beside ``db`` (the default database when None)."""
    path = cache_path(db_path(db))
    entries: dict[str, Any] | None = None

    def load() -> dict[str, Any]:
        nonlocal entries
        if entries is None:
            try:
                got = json.loads(path.read_text(encoding="utf-8"))
                entries = got if isinstance(got, dict) else {}
            except (OSError, ValueError):
                entries = {}
        return entries

    def boot(counts: Counts) -> Bootstrap:
        key = data_key(counts)
        cache = load()
        if key in cache:
            try:
                return Bootstrap.from_json(cache[key])
            except (KeyError, TypeError, ValueError, IndexError):
                pass
        got = bootstrap(counts)
        cache[key] = got.to_json()
        while len(cache) > MAX_ENTRIES:
            cache.pop(next(iter(cache)))
        if path.parent.is_dir():
            tmp = path.with_name(f".{path.name}.{os.getpid()}")
            try:
                tmp.write_text(json.dumps(cache), encoding="utf-8")
                tmp.replace(path)
            except OSError:
                tmp.unlink(missing_ok=True)
        return got

    # read back once: recommend's platform comparison and its table ask again
    return remembering(boot)


def warm(db: Database) -> None:
    """Compute and cache the bootstrap of every measured series in ``db`` (the end of a
    run: where figures change). Never fails the caller: a cache is only a cache."""
    try:
        inputs = load_bases(Inputs(db=db, include_virtualized=True, include_emulated=True))
        figures = [f for b in inputs.bases if b.origin == FigureKind.MEASURED for f in b.figures]
        build_series(figures, bases=inputs.bases, bootstrapper=cached_bootstrapper(db))
    except (SizingError, OSError, ValueError):
        return
