"""Property tests: generated bad input never ends in an internal error (issue 16).

Generated inventories (YAML text and structures: wrong types, nulls, group cycles, deep
nesting, non-UTF-8 bytes, huge numbers, NaN/inf, control characters), profiles and cost
catalogs are thrown at the loaders. Each must give a valid result or a
:class:`~sizing.errors.SizingError`; any other exception fails the test.

``load_inventory`` reads through Ansible (about 20-50 ms an inventory), so most inventory
examples run against the pure layer it is built from, the validation of resolved hosts
(``build_inventory``: pydantic, names, connection variables). A smaller number go through
the whole path with Ansible (sizing reads no inventory file itself), raw YAML text among
them. The counts are in :data:`EXAMPLES`; the number of
inputs actually tried is printed at the end of the module.
"""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.errors import SizingError
from sizing.inventory import Inventory, build_inventory, load_inventory
from sizing.profiles import Profile, load_file

EXAMPLES = {
    "inventory_text_full_ansible": 60,
    "inventory_hosts_validation": 1000,
    "inventory_full_ansible": 120,
    "profile": 350,
    "catalog": 250,
    "cli_numbers": 150,
    "cli_paths": 80,
}
TRIED: Counter[str] = Counter()
VALID: Counter[str] = Counter()  # inputs that were accepted (the rest were a SizingError)


def common(name: str) -> Any:
    return settings(
        max_examples=EXAMPLES[name],
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# -- generated values ------------------------------------------------------------------

nasty_text = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            "0.0.0.0:80; include /etc/shadow; #",
            "a\nb",
            "\x1b[2J",
            "x\x00y",
            "{",
            "}",
            "/etc/x;",
            "*",
            "[::1]",
            "::1",
            "127.0.0.1",
            "203.0.113.999",
            "/var/tmp/sizing",
            "relative/path",
            "0-3",
            "3-1",
            "0-99999999",
            "",
            " ",
            "baremetal",
            "libvirt",
            "vsphere",
            "\u202e",
            "\ud7ff",
        ]
    ),
)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, 1, -1, 8080, 8443, 65535, 65536, 10**400, 2**63, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0]),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, nasty_text)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.one_of(nasty_text, st.none(), st.integers()), inner, max_size=3)
    ),
    max_leaves=8,
)
SIZING_FIELDS = [
    "platform",
    "address",
    "cpu",
    "price_usd",
    "cost_ref",
    "nic_gbps",
    "client_cpus",
    "http_port",
    "https_port",
    "listen_address",
    "become",
    "conf_dir",
    "www_root",
    "log_dir",
    "pid_file",
    "nginx_worker_connections",
    "nginx_rlimit_nofile",
    "tls_log",
    "fault_locations",
    "tool_dir",
    "upstream_port",
    "upstream_listen_address",
    "upstream_conf_dir",
    "upstream_www_root",
    "upstream_log_dir",
    "upstream_pid_file",
    "vm",
    "hypervisor",
    "nope",
]
var_names = st.one_of(
    st.sampled_from([f"sizing_{f}" for f in SIZING_FIELDS]),
    st.sampled_from(["ansible_host", "ansible_port", "ansible_connection", "x"]),
)
cpu_values = st.fixed_dictionaries(
    {"cores_per_socket": scalars},
    optional={"sockets": scalars, "threads_per_core": scalars, "model": scalars, "x": scalars},
)
# Plausible values, so that valid inventories are generated too (and checked for what
# validation promises), mixed with the nasty ones above.
GOOD_VARS = {
    "sizing_platform": st.sampled_from(["baremetal", "libvirt", "vsphere"]),
    "sizing_http_port": st.integers(1, 65535),
    "sizing_https_port": st.integers(1, 65535),
    "sizing_listen_address": st.sampled_from(["0.0.0.0", "*", "[::1]", "127.0.0.1", "web.lab"]),
    "sizing_address": st.sampled_from(["10.0.0.1", "2001:db8::1", "web-1.lab"]),
    "sizing_conf_dir": st.sampled_from(["/etc/sizing-nginx", "/srv/x/conf"]),
    "sizing_tool_dir": st.sampled_from(["/var/tmp/sizing", "/opt/tools"]),
    "sizing_price_usd": st.floats(0, 1e6),
    "sizing_client_cpus": st.sampled_from(["0", "0-3", "1,3-5"]),
    "sizing_cpu": st.fixed_dictionaries(
        {"cores_per_socket": st.integers(1, 64)}, optional={"sockets": st.integers(1, 4)}
    ),
    "ansible_host": st.sampled_from(["192.0.2.1", "host.example"]),
    "ansible_port": st.integers(1, 65535),
}
good_vars = st.fixed_dictionaries({}, optional=GOOD_VARS)
host_vars = st.one_of(
    good_vars,
    st.dictionaries(var_names, st.one_of(values, cpu_values), max_size=6),
    st.builds(lambda g, b: {**g, **b}, good_vars, st.dictionaries(var_names, values, max_size=1)),
)
host_names = st.one_of(st.text(min_size=1, max_size=8), st.sampled_from(["web", "load", "a\tb"]))
groups = st.sets(st.sampled_from(["all", "servers", "clients", "upstreams", "other"]))


@common("inventory_hosts_validation")
@given(st.dictionaries(host_names, st.tuples(groups, host_vars), max_size=4))
def test_host_validation_never_fails_internally(
    resolved: dict[str, tuple[set[str], dict[str, Any]]],
) -> None:
    TRIED["inventory_hosts_validation"] += 1
    try:
        hosts = {k: (g, dict(v)) for k, (g, v) in resolved.items()}
        inv = build_inventory(Path("generated.yml"), hosts)
    except SizingError as exc:
        assert str(exc).startswith("generated.yml:")
        return
    assert isinstance(inv, Inventory)
    VALID["inventory_hosts_validation"] += 1
    for host in inv.hosts.values():
        sz = host.sizing
        assert sz.http_port != sz.https_port
        for text in (sz.listen_address, sz.conf_dir, sz.www_root, sz.log_dir, sz.pid_file):
            assert text is None or not any(c in text for c in ";{}\n")


# -- inventory structures and text ----------------------------------------------------

GROUP_NAMES = ["all", "servers", "clients", "upstreams", "a", "b"]
keys = st.one_of(st.sampled_from(GROUP_NAMES), st.none(), st.integers(), st.floats(), nasty_text)


def group_bodies(depth: int) -> Any:
    hosts = st.one_of(
        st.dictionaries(
            st.one_of(host_names, st.none(), st.integers()),
            st.one_of(st.none(), host_vars, scalars),
            max_size=3,
        ),
        scalars,
    )
    leaf = st.one_of(
        st.none(),
        scalars,
        st.fixed_dictionaries({}, optional={"hosts": hosts, "vars": st.one_of(host_vars, scalars)}),
    )
    if depth == 0:
        return leaf
    return st.one_of(
        leaf,
        st.fixed_dictionaries(
            {},
            optional={
                "hosts": hosts,
                "vars": st.one_of(host_vars, scalars),
                "children": st.one_of(
                    st.dictionaries(keys, group_bodies(depth - 1), max_size=3), scalars
                ),
                "junk": scalars,
            },
        ),
    )


inventories = st.one_of(
    st.dictionaries(keys, group_bodies(3), max_size=3),
    values,
)


def dump(data: Any) -> str | None:
    try:
        return yaml.safe_dump(data, allow_unicode=True)
    except (yaml.YAMLError, ValueError, TypeError, UnicodeError):
        return None


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="sizing-props-") as d:
        yield Path(d)


yaml_pieces = st.sampled_from(
    [
        "all:",
        "  children:",
        "    servers:",
        "      hosts:",
        "        web:",
        "  vars:",
        "    x: &a [1, 2]",
        "    y: *a",
        "    z: *b",
        "[",
        "]",
        "{",
        "}",
        "- ",
        ": ",
        "~",
        "!!python/object:os.system",
        "!vault |",
        "  $ANSIBLE_VAULT;1.1;AES256",
        "\t",
        "'unterminated",
        '"\\x00"',
        "key: key",
        "key: again",
        ".inf",
        ".nan",
        "1e400",
        "&x [*x]",
        "? complex",
        "%YAML 1.1",
        "---",
        "...",
        "\x00",
        "\x1b",
        "\ufeff",
    ]
)
yaml_texts = st.one_of(
    st.lists(yaml_pieces, max_size=12).map("\n".join),
    st.text(max_size=60),
    st.integers(1, 3000).map(lambda n: "all:\n  vars:\n    x: " + "[" * n + "]" * n),
    st.integers(1, 3000).map(lambda n: "all: " + "{a: " * n + "1" + "}" * n),
)
yaml_bytes = st.one_of(
    yaml_texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=60),
    st.binary(max_size=8).map(lambda b: b"all:\n  hosts:\n    h" + b + b": {}\n"),
)


@common("inventory_text_full_ansible")
@given(yaml_bytes)
def test_inventory_text_never_fails_internally(workdir: Path, raw: bytes) -> None:
    TRIED["inventory_text_full_ansible"] += 1
    path = workdir / "text.yml"
    path.write_bytes(raw)
    try:
        load_inventory(path)
    except SizingError as exc:
        assert str(exc).startswith(str(path))
        return
    VALID["inventory_text_full_ansible"] += 1


small_inventories = st.one_of(
    st.dictionaries(keys, group_bodies(2), max_size=2),
    st.builds(
        lambda sv, cv: {
            "all": {
                "children": {
                    "servers": {"hosts": {"web": {"ansible_connection": "local", **sv}}},
                    "clients": {"hosts": {"load": {"ansible_connection": "local", **cv}}},
                }
            }
        },
        host_vars,
        host_vars,
    ),
)


@common("inventory_full_ansible")
@given(
    st.one_of(small_inventories.map(dump), yaml_bytes.map(lambda b: b.decode("utf-8", "replace")))
)
def test_load_inventory_through_ansible_never_fails_internally(
    workdir: Path, text: str | None
) -> None:
    if text is None:
        return
    TRIED["inventory_full_ansible"] += 1
    path = workdir / "full.yml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        inv = load_inventory(path)
    except SizingError as exc:
        assert str(exc).startswith(str(path))
        return
    assert inv.servers and inv.clients
    VALID["inventory_full_ansible"] += 1


# -- profiles ----------------------------------------------------------------------------

PROFILE_FIELDS = [
    "kind",
    "name",
    "description",
    "generator",
    "metric",
    "unit",
    "scheme",
    "path",
    "file_size",
    "keepalive",
    "tls_key",
    "tls_session_reuse",
    "connections",
    "duration_s",
    "warmup_s",
    "repetitions",
    "mode",
    "rates",
    "slo",
    "role",
    "tls_protocols",
    "nope",
]
GOOD_PROFILE = {
    "kind": "workload",
    "name": "p",
    "description": "d",
    "metric": "rps",
    "unit": "req/s",
    "scheme": "http",
}
profiles = st.one_of(
    st.just(GOOD_PROFILE),
    st.fixed_dictionaries(
        {},
        optional={
            "path": st.sampled_from(["/128b", "/1k", "x", "/a b"]),
            "duration_s": numbers,
            "connections": numbers,
            "tls_protocols": st.sampled_from(["TLSv1.2", "TLSv1.2 TLSv1.3", "SSLv3"]),
        },
    ).map(lambda d: {**GOOD_PROFILE, **d}),
    st.dictionaries(st.sampled_from(PROFILE_FIELDS), values, max_size=8).map(
        lambda d: {**GOOD_PROFILE, **d}
    ),
    st.dictionaries(st.sampled_from(PROFILE_FIELDS), scalars, max_size=8),
    values,
)


@common("profile")
@given(st.one_of(profiles.map(dump), yaml_bytes))
def test_profiles_never_fail_internally(workdir: Path, doc: str | bytes | None) -> None:
    if doc is None:
        return
    TRIED["profile"] += 1
    path = workdir / "profile.yml"
    path.write_bytes(doc if isinstance(doc, bytes) else doc.encode("utf-8", "surrogatepass"))
    try:
        prof = load_file(path)
    except SizingError as exc:
        assert str(exc).startswith(str(path))
        return
    assert isinstance(prof, Profile)
    VALID["profile"] += 1
    assert math.isfinite(prof.duration_s) and prof.path.startswith("/")


# -- cost catalogs (sizing.catalog's public loader) --------------------------------------

CATALOG_FIELDS = [
    "kind",
    "name",
    "currency",
    "source",
    "servers",
    "licences",
    "power",
    "amortisation_months",
    "nope",
]
servers = st.one_of(
    st.lists(
        st.fixed_dictionaries(
            {"cores": st.integers(1, 128), "price": st.one_of(st.floats(0, 1e6), numbers)},
            optional={"sockets": st.integers(1, 4), "watts": numbers, "name": nasty_text},
        ),
        min_size=1,
        max_size=3,
    ),
    st.lists(
        st.dictionaries(
            st.sampled_from(["cores", "price", "sockets", "watts", "name", "x"]),
            scalars,
            max_size=5,
        ),
        max_size=3,
    ),
)
catalogs = st.one_of(
    st.builds(
        lambda s, extra: {"kind": "catalog", "servers": s, **extra},
        servers,
        st.dictionaries(st.sampled_from(CATALOG_FIELDS), values, max_size=3),
    ),
    st.dictionaries(st.sampled_from(CATALOG_FIELDS), values, max_size=5),
    values,
)


@common("catalog")
@given(st.one_of(catalogs.map(dump), yaml_bytes))
def test_catalogs_never_fail_internally(workdir: Path, doc: str | bytes | None) -> None:
    from sizing.catalog import load_catalog

    if doc is None:
        return
    TRIED["catalog"] += 1
    path = workdir / "catalog.yml"
    path.write_bytes(doc if isinstance(doc, bytes) else doc.encode("utf-8", "surrogatepass"))
    try:
        load_catalog(path)
    except SizingError as exc:
        assert str(exc).startswith(str(path))
        return
    VALID["catalog"] += 1


cli_number = st.one_of(
    st.sampled_from(
        [
            "inf",
            "-inf",
            "nan",
            "1e300",
            "-1",
            "0",
            "1e-300",
            "9" * 40,
            "0x10",
            "",
            " ",
            "1,5",
            "3.5e3",
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
)
CLI_NUMBER_OPTIONS = [
    ("recommend", "--rps"),
    ("recommend", "--tps"),
    ("recommend", "--headroom"),
    ("recommend", "--confidence"),
    ("recommend", "--max-servers"),
    ("run", "--rates"),
    ("run", "--duration"),
    ("run", "--warmup"),
    ("run", "--connections"),
    ("run", "--max-repeat"),
    ("run", "--repeat"),
    ("run", "--sample"),
    ("run", "--cores"),
]


@settings(max_examples=EXAMPLES["cli_numbers"], deadline=None, database=None, derandomize=True)
@given(option=st.sampled_from(CLI_NUMBER_OPTIONS), value=cli_number)
def test_numbers_on_the_command_line_never_fail_internally(
    option: tuple[str, str], value: str
) -> None:
    """Issue 27: every number a command reads (rates, durations, counts, demand, headroom,
    confidence) given as inf, nan, 1e300, a huge integer or text: a result or one clear
    line, never an internal error. ``run`` only plans (offline, the local inventory)."""
    from typer.testing import CliRunner

    from sizing.cli import app

    command, name = option
    args = [command, name, value]
    if command == "run":
        args += ["--plan", "--profile", "latency" if name == "--rates" else "rps"]
    elif name != "--rps":
        args += ["--rps", "1000"]
    TRIED["cli_numbers"] += 1
    res = CliRunner().invoke(app, args)
    assert "internal error" not in res.output, (args, res.output)
    assert res.exit_code in (0, 2, 3, 4), (args, res.exit_code, res.output)
    if res.exit_code == 0:
        VALID["cli_numbers"] += 1


# Kinds of path a careless user gives where a file is read or written: each is made under
# the test's directory ("{d}"), never anywhere else.
PATH_KINDS = {
    "a directory": lambda d: d,
    "in a missing directory": lambda d: d / "missing" / "x",
    "an empty file": lambda d: _made(d / "empty", b""),
    "a text file": lambda d: _made(d / "text.txt", b"hello\n"),
    "random bytes": lambda d: _made(d / "noise", bytes(range(256)) * 8),
    "an SQLite header then noise": lambda d: _made(d / "half", b"SQLite format 3\x00" + b"x" * 900),
    "/dev/null": lambda d: Path("/dev/null"),
    "a name with spaces and quotes": lambda d: d / "a 'b' \"c\".sqlite",
    "a path through a file": lambda d: _made(d / "file", b"x") / "below",
}
PATH_COMMANDS = [
    ["results", "--db", "{p}"],
    ["results", "--db", "{p}", "--json"],
    ["results", "--db", "{p}", "--csv", "--out", "{p}"],
    ["import", "{p}", "--db", "{p}"],
    ["guide", "--db", "{p}", "--out", "{p}"],
    ["recommend", "--rps", "1000", "--db", "{p}"],
    ["recommend", "--rps", "1000", "--catalog", "{p}"],
    ["inventory", "check", "-i", "{p}"],
    ["run", "--plan", "-i", "{p}"],
    ["run", "--plan", "--db", "{p}", "--profile", "{p}"],
]


def _made(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


@settings(max_examples=EXAMPLES["cli_paths"], deadline=None, database=None, derandomize=True)
@given(command=st.sampled_from(PATH_COMMANDS), kind=st.sampled_from(sorted(PATH_KINDS)))
def test_paths_on_the_command_line_never_fail_internally(command: list[str], kind: str) -> None:
    """Issue 27: every path a command reads or writes given as a directory, a file in a
    missing directory, an empty file, another kind of file, /dev/null, a path through a
    file: a result or one clear line (exit 0, 2, 3 or 6), never an internal error."""
    import tempfile

    from typer.testing import CliRunner

    from sizing.cli import app

    with tempfile.TemporaryDirectory(prefix="sz-paths-") as tmp:
        path = PATH_KINDS[kind](Path(tmp))
        args = [a.replace("{p}", str(path)) for a in command]
        TRIED["cli_paths"] += 1
        res = CliRunner().invoke(app, args)
    assert "internal error" not in res.output and "Traceback" not in res.output, (args, res.output)
    assert res.exit_code in (0, 1, 2, 3, 4, 6), (args, res.exit_code, res.output)
    if res.exit_code == 2 and res.stderr.startswith("Usage:"):
        return  # Click's check of an option (one line through `sizing`: test_reliability)
    if res.exit_code:
        assert len(res.stderr.strip().splitlines()) == 1 or res.stderr.startswith(
            f"error: {path}:"
        ), (args, res.stderr)
    else:
        VALID["cli_paths"] += 1


def test_zz_report_the_count(capsys: pytest.CaptureFixture[str]) -> None:
    """Print how many generated inputs ran (last in the file); at least 2,000 when every
    property test above ran."""
    total = sum(TRIED.values())
    with capsys.disabled():
        print(
            f"\nproperty tests: {total} generated inputs, none an internal error ("
            + ", ".join(f"{k} {v} ({VALID[k]} valid)" for k, v in sorted(TRIED.items()))
            + ")"
        )
    if set(TRIED) == set(EXAMPLES):
        assert total >= 2000


@pytest.mark.parametrize("price", [".inf", "1e400"])
def test_catalog_refuses_non_finite_prices(tmp_path: Path, price: str) -> None:
    from sizing.catalog import load_catalog

    path = tmp_path / "catalog.yml"
    path.write_text(f"kind: catalog\nservers:\n  - {{cores: 8, price: {price}}}\n")
    with pytest.raises(SizingError, match="servers.0.price"):
        load_catalog(path)
