"""The compiled methods of dataclasses kept beside the bytecode (sizing/classcode.py): a class
defined from a table behaves as one compiled afresh, a table is read back without compiling,
a table of another Python or a damaged one is ignored, nothing is written where bytecode is
not to be, and a real `sizing` process after `main()` compiles no method of sizing's."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import keyword
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing import classcode
from sizing.classcode import MAX_ENTRIES, ClassCode, table_path

ROOT = Path(__file__).resolve().parents[2]


def _module_globals(root: Path, name: str = "mod") -> dict[str, object]:
    """The globals of a module whose file is under ``root`` (never imported: the globals
    are all the table looks at)."""
    file = root / f"{name}.py"
    file.write_text("")
    return {"__name__": name, "__file__": str(file), "__builtins__": __builtins__}


def _define(code: ClassCode, g: dict[str, object], fields: list[str], **options: bool) -> type:
    """A dataclass defined in the module ``g`` with ``code``'s exec in dataclasses."""
    saved = dataclasses.__dict__.get("exec")
    dataclasses.exec = code.exec  # type: ignore[attr-defined]
    try:
        ns: dict[str, object] = {"__annotations__": dict.fromkeys(fields, "int")}
        ns["__module__"] = g["__name__"]
        cls = type("Made", (), ns)
        return dataclasses.dataclass(**options)(cls)
    finally:
        if saved is None:
            del dataclasses.exec  # type: ignore[attr-defined]
        else:
            dataclasses.exec = saved  # type: ignore[attr-defined]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package root of its own, its module registered for dataclasses' globals lookup."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    return pkg


def _register(monkeypatch: pytest.MonkeyPatch, g: dict[str, object]) -> None:
    """dataclasses takes a class's globals from sys.modules[cls.__module__]."""
    mod = type(sys)(str(g["__name__"]))
    mod.__dict__.update(g)
    monkeypatch.setitem(sys.modules, str(g["__name__"]), mod)


def test_a_table_is_written_read_back_and_used_without_compiling(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = _module_globals(root)
    _register(monkeypatch, g)
    first = ClassCode(str(root) + os.sep)
    made = _define(first, g, ["a", "b"], frozen=True, order=True)
    compiled = sum(t.compiled for t in first.tables.values())
    assert compiled >= 5  # __init__, __repr__, __eq__, the orderings, __setattr__, ...
    first.save()
    path = table_path(str(g["__file__"]))
    assert path.is_file() and path.read_bytes().startswith(classcode._MAGIC)
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)

    again = ClassCode(str(root) + os.sep)
    remade = _define(again, g, ["a", "b"], frozen=True, order=True)
    assert sum(t.compiled for t in again.tables.values()) == 0
    assert sum(len(t.used) for t in again.tables.values()) == compiled
    x, y = remade(1, 2), remade(1, 3)  # type: ignore[call-arg]
    assert repr(x) == repr(made(1, 2))  # type: ignore[call-arg]
    assert x == remade(1, 2) and x < y and hash(x) == hash(remade(1, 2))  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        x.a = 5  # type: ignore[attr-defined]


def test_a_module_outside_the_root_is_compiled_as_always(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    g = _module_globals(other, "othermod")
    _register(monkeypatch, g)
    code = ClassCode(str(root) + os.sep)
    _define(code, g, ["a"])
    assert code.tables == {}
    code.save()
    assert not table_path(str(g["__file__"])).exists()


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"\x00\x00\x00\x00garbage",
        importlib.util.MAGIC_NUMBER + b"cc1" + b"\xff\xfe",  # an older format's
        classcode._MAGIC + b"\xff\xfe",
        classcode._MAGIC + b"N",
    ],
    ids=["empty", "another-python", "older-format", "cut", "not-a-dict"],
)
def test_a_damaged_or_foreign_table_is_ignored_and_written_again(
    root: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    g = _module_globals(root)
    _register(monkeypatch, g)
    path = table_path(str(g["__file__"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(damage)
    code = ClassCode(str(root) + os.sep)
    made = _define(code, g, ["a"])
    assert made(3) == made(3)  # type: ignore[call-arg]
    assert sum(t.compiled for t in code.tables.values()) >= 2
    code.save()
    assert ClassCode(str(root) + os.sep)._table(g) is not None
    assert len(classcode._read(path)) >= 2


def test_nothing_is_written_where_bytecode_is_not_unless_forced(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = _module_globals(root)
    _register(monkeypatch, g)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    code = ClassCode(str(root) + os.sep)
    _define(code, g, ["a"])
    code.save()
    path = table_path(str(g["__file__"]))
    assert not path.exists()
    code.save(force=True)
    assert path.is_file()


def test_a_table_that_cannot_be_written_is_not_an_error(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = _module_globals(root)
    _register(monkeypatch, g)
    (root / "__pycache__").write_text("a file where the directory would be")
    code = ClassCode(str(root) + os.sep)
    made = _define(code, g, ["a"])
    code.save()
    assert made(1).a == 1  # type: ignore[call-arg,attr-defined]
    assert sorted(p.name for p in root.iterdir()) == ["__pycache__", "mod.py"]


def test_a_table_past_its_bound_keeps_only_what_the_process_used(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = _module_globals(root)
    _register(monkeypatch, g)
    code = ClassCode(str(root) + os.sep)
    for i in range(MAX_ENTRIES // 2):  # classes "since changed": each a text of its own
        _define(code, g, [f"f{i}"])
    code.save()
    path = table_path(str(g["__file__"]))
    assert len(classcode._read(path)) > MAX_ENTRIES
    fresh = ClassCode(str(root) + os.sep)
    _define(fresh, g, ["new_field"])
    fresh.save()
    kept = classcode._read(path)
    assert 2 <= len(kept) <= 4  # the one class this process defined, nothing older
    assert all("new_field" in text for text in kept)


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s) and not s.startswith("__")
)


@settings(max_examples=40, deadline=None)
@given(
    fields=st.lists(_NAMES, min_size=0, max_size=6, unique=True),
    frozen=st.booleans(),
    order=st.booleans(),
    eq=st.booleans(),
)
def test_a_class_from_the_table_behaves_as_one_compiled_afresh(
    tmp_path_factory: pytest.TempPathFactory,
    fields: list[str],
    frozen: bool,
    order: bool,
    eq: bool,
) -> None:
    """Generated field lists and options: the class whose methods came from a table built
    by another process's worth of compiling has the same repr, equality, hash and order,
    and the same refusal to be changed when frozen, as the class compiled afresh."""
    if order and not eq:
        eq = True  # dataclasses refuses order without eq
    pkg = tmp_path_factory.mktemp("pkg")
    g = _module_globals(pkg, "hmod")
    mod = type(sys)("hmod")
    mod.__dict__.update(g)
    saved_mod, sys.modules["hmod"] = sys.modules.get("hmod"), mod
    saved_flag, sys.dont_write_bytecode = sys.dont_write_bytecode, False
    try:
        options = {"frozen": frozen, "order": order, "eq": eq}
        afresh = _define(ClassCode(str(pkg / "none") + os.sep), g, fields, **options)
        writer = ClassCode(str(pkg) + os.sep)
        _define(writer, g, fields, **options)
        writer.save()
        reader = ClassCode(str(pkg) + os.sep)
        cached = _define(reader, g, fields, **options)
        assert sum(t.compiled for t in reader.tables.values()) == 0
        a, b = afresh(*range(len(fields))), cached(*range(len(fields)))
        assert repr(a) == repr(b)
        # the signature too: compiled as dataclasses compiles it (no future flags inherited)
        assert afresh.__init__.__annotations__ == cached.__init__.__annotations__
        assert inspect.signature(afresh) == inspect.signature(cached)
        assert (a == afresh(*range(len(fields)))) == (b == cached(*range(len(fields))))
        assert (getattr(afresh, "__hash__", None) is None) == (
            getattr(cached, "__hash__", None) is None
        )
        if eq and frozen:  # a value hash (otherwise none, or the object's identity)
            assert hash(a) == hash(b)
        if order and fields:
            assert (a < afresh(*range(1, len(fields) + 1))) == (
                b < cached(*range(1, len(fields) + 1))
            )
        if frozen and fields:
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(b, fields[0], 99)
    finally:
        sys.dont_write_bytecode = saved_flag
        if saved_mod is None:
            del sys.modules["hmod"]
        else:
            sys.modules["hmod"] = saved_mod


def test_after_main_a_sizing_process_compiles_no_method_of_its_own(tmp_path: Path) -> None:
    """The real thing: scripts/setup's step writes the tables (here under a bytecode prefix
    of this test's own, not the checkout's), and a process reading the records and the
    engine then compiles nothing of sizing's and uses the tables for them."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path / "pyc")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    py = [sys.executable, "-c"]
    done = subprocess.run(
        [*py, "from sizing.classcode import main; main()"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "methods of" in done.stderr
    probe = (
        "import sizing.app.sizing, sizing.records\n"
        "from sizing import classcode\n"
        "t = classcode.install().tables\n"
        "print(sum(x.compiled for x in t.values()), sum(len(x.used) for x in t.values()))\n"
    )
    got = subprocess.run(
        [*py, probe], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert got.returncode == 0, got.stderr
    compiled, used = map(int, got.stdout.split())
    assert compiled == 0
    assert used > 300  # the records' and the engine's classes, some 135 of them
