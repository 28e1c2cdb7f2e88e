"""Compiled code of the methods ``dataclasses`` writes, kept beside sizing's bytecode.

A ``@dataclass`` writes the source of its ``__init__``, ``__repr__``, ``__eq__`` (and a
frozen one's ``__setattr__`` and ``__delattr__``) as text and compiles it each time the class
is defined: in every process, for every class. ``sizing recommend`` defines some 135 of
them, and compiling their methods was about 50 ms of its 260 ms on the development VM, more
than the engine's arithmetic. Python keeps a module's bytecode in ``__pycache__``; it keeps
none of this.

:func:`install` gives the ``dataclasses`` module an ``exec`` that looks the text up in its
module's table of code objects before compiling it, so a class defined again runs the same
code compiled once. A module of this package has its table beside its bytecode
(``records/__pycache__/point.cpython-311.classcode``, where
:func:`importlib.util.cache_from_source` puts the ``.pyc``, ``PYTHONPYCACHEPREFIX``
included), headed by the interpreter's bytecode magic number and the table's format: a
table of another Python or format, or one that cannot be read, is ignored and written
again. The code for a text is what ``compile`` makes of that text, as ``dataclasses``
compiles it (no future flag inherited), so a class behaves the same whether its methods
came from a table or not. Classes of other packages are compiled as ``dataclasses`` always does.

A table is written when a process compiled something new for its module, unless bytecode
is not to be written (``PYTHONDONTWRITEBYTECODE``), as Python treats ``.pyc`` files;
:func:`main` (run by ``scripts/setup`` after ``compileall``) imports every module of the
package and writes them all regardless, as ``compileall`` does. A write is a temporary file
renamed over the old one; a table past :data:`MAX_ENTRIES` (texts of classes since changed)
keeps only what this process used.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import importlib
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

__all__ = ["MAX_ENTRIES", "ClassCode", "install", "main", "table_path"]

MAX_ENTRIES = 256  # per module: its classes' methods, a few versions of each
_PACKAGE = str(Path(__file__).resolve().parent) + os.sep
# the interpreter's bytecode magic, then this table format's own (cc2: compiled without
# inheriting this module's future flags; a cc1 table held string annotations)
_MAGIC = importlib.util.MAGIC_NUMBER + b"cc2"


def table_path(module_file: str) -> Path:
    """Where a module's table lives: its ``.pyc`` path, with ``.classcode`` for ``.pyc``."""
    return Path(importlib.util.cache_from_source(module_file)).with_suffix(".classcode")


class _Table:
    """One module's code objects by source text, as read and as this process adds to."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.code = _read(path)
        self.used: dict[str, CodeType] = {}
        self.compiled = 0


class ClassCode:
    """Every module's table met so far (of the modules under ``root``, a directory
    ending in a separator), and the ``exec`` that uses them."""

    def __init__(self, root: str = _PACKAGE) -> None:
        self.root = root
        self.tables: dict[str, _Table] = {}

    def exec(self, source: Any, globals_: Any = None, locals_: Any = None) -> None:
        """``exec`` as ``dataclasses`` calls it, with the text's code from its module's
        table (the module whose globals the methods are defined in)."""
        if not isinstance(source, str):
            builtins.exec(source, globals_, locals_)
            return
        table = self._table(globals_)
        code = None if table is None else table.code.get(source)
        if code is None:
            # dont_inherit: as dataclasses' own exec compiles it, without this module's
            # ``from __future__ import annotations`` (the methods' annotations are objects)
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if table is not None:
                table.code[source] = code
                table.compiled += 1
        if table is not None:
            table.used[source] = code
        builtins.exec(code, globals_, locals_)

    def _table(self, globals_: Any) -> _Table | None:
        """The table of the module these globals are (None: not a module of sizing)."""
        file = globals_.get("__file__") if isinstance(globals_, dict) else None
        if not isinstance(file, str) or not file.startswith(self.root):
            return None
        table = self.tables.get(file)
        if table is None:
            table = self.tables[file] = _Table(table_path(file))
        return table

    def save(self, *, force: bool = False) -> None:
        """Write the tables to which something new was added (``force``: even where
        bytecode is not to be written). A table that cannot be written is not an error:
        the next process compiles again, as it would without one."""
        if sys.dont_write_bytecode and not force:
            return
        for table in self.tables.values():
            if table.compiled:
                keep = table.code if len(table.code) <= MAX_ENTRIES else table.used
                if _write(table.path, keep):
                    table.compiled = 0


def _read(path: Path) -> dict[str, CodeType]:
    """The table at ``path``; empty when there is none, it is another Python's, or it
    cannot be read."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    if not data.startswith(_MAGIC):
        return {}
    try:
        table = marshal.loads(data[len(_MAGIC) :])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, CodeType)}


def _write(path: Path, table: dict[str, CodeType]) -> bool:
    """``table`` written to ``path`` whole or not at all; whether it was."""
    import tempfile  # only when writing: most processes only read

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC)
                marshal.dump(table, f)
            os.chmod(tmp, 0o644)  # readable as the .pyc beside it is, not mkstemp's 0600
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True


_installed: ClassCode | None = None


def install() -> ClassCode:
    """Give ``dataclasses`` the tables' ``exec`` (once a process), and save the tables
    when the process ends."""
    global _installed
    if _installed is None:
        _installed = ClassCode()
        # dataclasses looks ``exec`` up in its own globals before the builtins
        dataclasses.exec = _installed.exec  # type: ignore[attr-defined]
        atexit.register(_installed.save)
    return _installed


def main() -> None:
    """Import every module of the package and write every table (``scripts/setup``)."""
    import pkgutil

    code = install()
    for mod in pkgutil.walk_packages([_PACKAGE], prefix="sizing."):
        if mod.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(mod.name)
        except Exception:  # noqa: BLE001  an optional extra's module not installed, say
            continue  # its classes are compiled when a process first defines them
    code.save(force=True)
    methods = sum(len(t.code) for t in code.tables.values())
    print(f"classcode: {methods} methods of {len(code.tables)} modules kept", file=sys.stderr)
