"""Bad inventories and profiles: one line naming the file and the field, a non-zero exit,
never an internal error (issue 16)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.errors import ExitStatus, InputError
from sizing.inventory import load_inventory
from sizing.profiles import load_file

runner = CliRunner()

CLIENT = "    clients:\n      hosts:\n        load: {ansible_connection: local}\n"


def inventory(tmp_path: Path, server_vars: str, rest: str = CLIENT, name: str = "inv.yml") -> Path:
    path = tmp_path / name
    path.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n"
        f"        web: {{ansible_connection: local{', ' if server_vars else ''}{server_vars}}}\n"
        + rest
    )
    return path


INJECTION = '"0.0.0.0:80; include /etc/shadow; #"'

BAD_VARS = [
    (
        f"sizing_listen_address: {INJECTION}",
        "host web: sizing_listen_address: '0.0.0.0:80; include",
    ),
    ('sizing_listen_address: "::1"', "sizing_listen_address: write the IPv6 address in brackets"),
    ('sizing_listen_address: "127.0.0.1\\nuser root"', "sizing_listen_address: control character"),
    ('sizing_upstream_listen_address: "1.2.3.4 {"', "sizing_upstream_listen_address: '1.2.3.4 {'"),
    ('sizing_address: "10.0.0.1; evil"', "sizing_address: '10.0.0.1; evil' is not an IP address"),
    ("sizing_address: 203.0.113.999", "sizing_address: '203.0.113.999' is not an IP address"),
    ('ansible_host: "h;x"', "host web: ansible_host: 'h;x' is not an IP address"),
    ("ansible_port: 70000", "host web: ansible_port: 70000 is not a port"),
    ("sizing_conf_dir: etc/nginx", "sizing_conf_dir: 'etc/nginx' is not an absolute path"),
    ('sizing_conf_dir: "/etc/x;y"', "sizing_conf_dir: ';' not allowed in a path"),
    ('sizing_www_root: "/srv/{a}"', "sizing_www_root: '{' not allowed in a path"),
    ('sizing_log_dir: "/var/log/a b"', "sizing_log_dir: ' ' not allowed in a path"),
    ('sizing_pid_file: "/run/x\\u0000"', "sizing_pid_file: control character"),
    ("sizing_tool_dir: /", "sizing_tool_dir: the root directory is not allowed here"),
    ('sizing_tool_dir: "/tmp/$HOME"', "sizing_tool_dir: '$' not allowed in a path"),
    (
        "sizing_upstream_conf_dir: relative",
        "sizing_upstream_conf_dir: 'relative' is not an absolute",
    ),
    ("sizing_http_port: 8443", "host web: sizing_http_port and sizing_https_port are both 8443"),
    ("sizing_upstream_port: 8080", "host web: sizing_upstream_port 8080 is also the sizing"),
    ("sizing_http_port: true", "sizing_http_port: a port is a number"),
    ("sizing_http_port: 1e400", "sizing_http_port: "),
    ("sizing_http_port: 99999999999999999999999", "sizing_http_port: Input should be less than"),
    ("sizing_price_usd: .inf", "sizing_price_usd: must be a finite number"),
    ("sizing_price_usd: .nan", "sizing_price_usd: must be a finite number"),
    ("sizing_price_usd: 0", "sizing_price_usd: Input should be greater than 0"),
    ("sizing_nic_gbps: -.inf", "sizing_nic_gbps: "),
    ('sizing_client_cpus: "0-999999999"', "sizing_client_cpus: '0-999999999' is not a CPU list"),
    ('sizing_client_cpus: "3-1"', "sizing_client_cpus: descending range '3-1'"),
    ('sizing_client_cpus: "0-9000"', "sizing_client_cpus: CPU 9000 is beyond"),
    ('sizing_client_cpus: "a"', "sizing_client_cpus: 'a' is not a CPU list"),
    ('sizing_cost_ref: "x\\u001b[31m"', "sizing_cost_ref: control character"),
    ("sizing_cpu: {cores_per_socket: .inf}", "sizing_cpu.cores_per_socket: "),
    ('sizing_cpu: {cores_per_socket: 2, model: "a\\u0007"}', "sizing_cpu.model: control character"),
    ("sizing_nginx_worker_connections: 1e12", "sizing_nginx_worker_connections: "),
]


@pytest.mark.parametrize(("variables", "expected"), BAD_VARS, ids=[v for v, _ in BAD_VARS])
def test_bad_variables_name_file_host_and_field(
    tmp_path: Path, variables: str, expected: str
) -> None:
    path = inventory(tmp_path, variables)
    with pytest.raises(InputError) as info:
        load_inventory(path)
    text = str(info.value)
    assert text.startswith(f"{path}: "), text
    assert expected in text
    assert len(text.splitlines()) == 1, text


GOOD_VARS = [
    "sizing_listen_address: 0.0.0.0",
    'sizing_listen_address: "*"',
    'sizing_listen_address: "[::1]"',
    "sizing_listen_address: web-1.lab.example",
    "sizing_address: 2001:db8::1",
    "sizing_address: web_1",
    "ansible_host: 192.0.2.10",
    "sizing_conf_dir: /etc/sizing-nginx",
    "sizing_tool_dir: /var/tmp/sizing-alice",
    'sizing_client_cpus: "0-3,8"',
    "sizing_http_port: 80, sizing_https_port: 443, sizing_upstream_port: 8090",
]


@pytest.mark.parametrize("variables", GOOD_VARS)
def test_good_variables_pass(tmp_path: Path, variables: str) -> None:
    load_inventory(inventory(tmp_path, variables))


def test_the_injection_fails_inventory_check(tmp_path: Path) -> None:
    path = inventory(tmp_path, f"sizing_listen_address: {INJECTION}")
    result = runner.invoke(app, ["inventory", "check", str(path)])
    assert result.exit_code == ExitStatus.INPUT
    assert result.stderr == (
        f"error: {path}: host web: sizing_listen_address: '0.0.0.0:80; include /etc/shadow; #'"
        " is not an address nginx can listen on (an IPv4 address, [IPv6], * or a host name)\n"
    )
    assert result.stdout == ""


# What Ansible refuses, said in one line as Ansible says it (sizing reads no file itself).
SHAPES = {
    "null host": ("", CLIENT + "        ~: {}\n", "Host pattern None must be a string"),
    "integer host": ("", CLIENT + "        123: {}\n", "Host pattern 123 must be a string"),
    "float group": ("", CLIENT + "    1.5:\n      hosts: {x: }\n", "Unable to add group 1.5"),
    "control char host": ("", CLIENT + '        "a\\tb": {}\n', "control characters in the host"),
    "group cycle": (
        "",
        CLIENT + "      children:\n        servers:\n          children:\n            clients:\n",
        "creates a recursive dependency loop",
    ),
    "self cycle": ("", CLIENT + "      children:\n        clients:\n", "can't add group to itself"),
}


@pytest.mark.parametrize("case", list(SHAPES))
def test_bad_shapes_are_one_line(tmp_path: Path, case: str) -> None:
    server_vars, rest, expected = SHAPES[case]
    path = inventory(tmp_path, server_vars, rest)
    with pytest.raises(InputError) as info:
        load_inventory(path)
    assert expected in str(info.value)
    assert str(info.value).startswith(f"{path}: ")


@pytest.mark.parametrize("depth", [80, 101])
def test_deep_values_of_a_used_host_are_refused(tmp_path: Path, depth: int) -> None:
    path = inventory(tmp_path, "")
    path.write_text(path.read_text() + "  vars:\n    x: " + "[" * depth + "]" * depth + "\n")
    with pytest.raises(InputError, match=r"host web: x: values nested deeper than 64 levels"):
        load_inventory(path)


def test_values_too_deep_for_yaml_are_one_line(tmp_path: Path) -> None:
    path = inventory(tmp_path, "")
    path.write_text(path.read_text() + "  vars:\n    x: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(InputError, match=r"exceeded maximum nesting depth"):
        load_inventory(path)


@pytest.mark.parametrize("suffix", [".yml", ".ini"])
def test_non_utf8_is_one_line(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"inv{suffix}"
    path.write_bytes(
        b"[servers]\nweb\xff\xfe\n" if suffix == ".ini" else b"all:\n  hosts:\n    h\xff: {}\n"
    )
    with pytest.raises(InputError) as info:
        load_inventory(path)
    assert "\n" not in str(info.value) and str(info.value).startswith(f"{path}: ")


def test_ini_group_cycle_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "inv.ini"
    path.write_text("[servers:children]\nclients\n[clients:children]\nservers\n[servers]\nweb\n")
    with pytest.raises(InputError, match="recursive dependency loop"):
        load_inventory(path)


def test_bad_group_vars_file_is_refused(tmp_path: Path) -> None:
    path = inventory(tmp_path, "")
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "all.yml").write_text("x: " + "[" * 80 + "]" * 80 + "\n")
    with pytest.raises(InputError, match="host web: x: values nested deeper than 64 levels"):
        load_inventory(path)


# -- profiles ------------------------------------------------------------------------------

GOOD_PROFILE = """\
kind: workload
name: p
description: a profile
metric: rps
unit: req/s
scheme: http
"""

BAD_PROFILES = [
    (b"", "expected a mapping of profile fields"),
    (b"- a\n- b\n", "expected a mapping of profile fields"),
    (b"kind: workload\nkind: workload\n", "duplicate key 'kind'"),
    (b"kind: workload\nname: \xff\n", "not UTF-8 text (byte 0xff"),
    (GOOD_PROFILE.encode() + b"duration_s: .inf\n", "duration_s: Input should be a finite number"),
    (GOOD_PROFILE.encode() + b"warmup_s: .nan\n", "warmup_s: Input should be a finite number"),
    (GOOD_PROFILE.encode() + b"connections: 1e400\n", "connections: "),
    (GOOD_PROFILE.encode() + b"path: 'x; y'\n", "path: 'x; y' is not a URL path"),
    (GOOD_PROFILE.encode() + b'path: "/a\\nb"\n', "path: '/a\\nb' is not a URL path"),
    (GOOD_PROFILE.encode() + b"tls_protocols: 'TLSv1.2; include x'\n", "tls_protocols: String"),
    (GOOD_PROFILE.encode() + b"file_size: -1\n", "file_size: Input should be greater"),
    (GOOD_PROFILE.replace("name: p", 'name: "a b/c"').encode(), "name: 'a b/c' is not a profile"),
    (GOOD_PROFILE.replace("a profile", '"a\\u001b[2Jb"').encode(), "description: control"),
    (
        b"kind: workload\nname: [" + b"[" * 3000 + b"]" * 3000 + b"]\n",
        "nested deeper than 100 levels",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD_PROFILES)
def test_bad_profiles_name_file_and_field(tmp_path: Path, text: bytes, expected: str) -> None:
    path = tmp_path / "p.yml"
    path.write_bytes(text)
    with pytest.raises(InputError) as info:
        load_file(path)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)


def test_a_good_profile_loads(tmp_path: Path) -> None:
    path = tmp_path / "p.yml"
    path.write_text(GOOD_PROFILE)
    assert load_file(path).name == "p"


def test_a_bad_profile_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "p.yml"
    path.write_bytes(b"kind: workload\nname: \xff\n")
    result = runner.invoke(app, ["run", "--plan", "--profile", str(path)])
    assert result.exit_code == ExitStatus.INPUT, result.output
    assert result.stderr.count("\n") == 1
    assert "not UTF-8 text" in result.stderr
    assert "internal error" not in result.stderr


def test_inventory_check_text_has_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "inv.yml"
    path.write_text(textwrap.dedent("all:\n  children:\n    servers:\n      hosts:\n        ~:\n"))
    result = runner.invoke(app, ["inventory", "check", str(path)])
    assert result.exit_code == ExitStatus.INPUT
    assert "Traceback" not in result.output


@pytest.mark.parametrize("rates", ["inf", "1000:inf:10", "nan", "1e300", "1,inf", "-inf:10:1"])
def test_non_finite_or_absurd_rates_are_one_usage_line(rates: str) -> None:
    """Issue 27: `--rates inf` was an internal OverflowError."""
    res = runner.invoke(app, ["run", "--plan", "--profile", "latency", "--rates", rates])
    assert res.exit_code == ExitStatus.USAGE, res.output
    assert res.stderr.strip().splitlines() == [
        f"error: --rates: {rates!r} is not START:STOP:STEP (e.g. 1000:10000:1000) or a list of "
        "rates of at least 1 and at most 100,000,000 requests/s"
    ]


@pytest.mark.parametrize(
    "command",
    [
        ["results"],
        ["results", "--bases"],
        ["recommend", "--rps", "1000"],
        ["table"],
        ["guide", "--format", "md", "--out", "-"],
    ],
)
def test_a_db_that_is_a_directory_is_refused(tmp_path: Path, command: list[str]) -> None:
    """Issue 27: `results --db DIR` said "nothing measured yet" and exited 0."""
    res = runner.invoke(app, [*command, "--db", str(tmp_path)])
    assert res.exit_code == ExitStatus.INPUT, res.output
    assert res.stderr.strip() == f"error: {tmp_path}: is a directory, not a results database"


def test_paths_this_user_may_not_look_into_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: a database or a guide under a directory the user may not enter was an
    internal PermissionError. The tests run as root, whom the kernel never denies: the
    denial is simulated (Path.is_dir raising PermissionError as it does for such a user)."""
    real = Path.is_dir

    def denied(self: Path) -> bool:
        if "locked" in str(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "is_dir", denied)
    db = tmp_path / "locked" / "sizing.sqlite"
    res = runner.invoke(app, ["results", "--db", str(db)])
    assert res.exit_code == ExitStatus.INPUT, res.output
    assert res.stderr.strip() == f"error: {db}: cannot be read: Permission denied"
    out = tmp_path / "locked" / "guide.md"
    res = runner.invoke(app, ["guide", "--format", "md", "--out", str(out)])
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert res.stderr.strip() == f"error: {out}: cannot write the guide: Permission denied"


def test_an_absurd_catalog_price_is_refused(tmp_path: Path) -> None:
    """Issue 27: a price of 1e300 was accepted and printed as a 301-digit fleet cost."""
    cat = tmp_path / "cat.yml"
    cat.write_text("kind: catalog\nservers:\n  - {cores: 8, price: 1e300}\n")
    res = runner.invoke(app, ["recommend", "--rps", "1000", "--catalog", str(cat)])
    assert res.exit_code == ExitStatus.INPUT, res.output
    assert res.stderr.strip() == (
        f"error: {cat}: servers.0.price: Input should be less than or equal to 1000000000"
    )
