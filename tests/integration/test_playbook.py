"""playbooks/nginx.yml against this machine: real Ansible (ansible-runner), real nginx.

The instance lives in a temporary directory (configuration, content, logs, pid file) on
ports 18080/18443, so it clashes neither with a real `sizing run` nor with the
distribution's nginx. The module fixture stops it with playbooks/nginx-stop.yml.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import ssl
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ansible_runner = pytest.importorskip("ansible_runner")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.noload,
    pytest.mark.skipif(os.geteuid() != 0, reason="provisioning nginx needs root"),
    pytest.mark.skipif(
        shutil.which("nginx", path="/usr/sbin:/usr/bin") is None, reason="nginx is not installed"
    ),
]

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOKS = ROOT / "playbooks"
INVENTORY = ROOT / "inventories" / "local.yml"
HTTP_PORT = 18080
HTTPS_PORT = 18443
SIZES = {"128b": 128, "1k": 1024, "10k": 10240, "100k": 102400}


@pytest.fixture(scope="module")
def instance() -> Iterator[dict[str, Any]]:
    """Base extravars for a private instance; stops it at the end of the module."""
    # Not under pytest's tmp_path: that is mode 0700, and nginx workers (user nobody) must
    # reach the content files.
    base = Path(tempfile.mkdtemp(prefix="sizing-nginx-it-"))
    base.chmod(0o755)
    extravars: dict[str, Any] = {
        "sizing_nginx_workers": 1,
        "sizing_nginx_affinity": "01",
        "sizing_http_port": HTTP_PORT,
        "sizing_https_port": HTTPS_PORT,
        "sizing_listen_address": "127.0.0.1",
        "sizing_conf_dir": str(base / "conf"),
        "sizing_www_root": str(base / "www"),
        "sizing_log_dir": str(base / "log"),
        "sizing_pid_file": str(base / "nginx.pid"),
    }
    with pytest.MonkeyPatch.context() as mp:
        # ansible-runner starts ansible-playbook from PATH: the one beside this Python.
        mp.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
        yield extravars
        result = _run("nginx-stop.yml", extravars, base)
        assert result.status == "successful"
        assert _master(extravars) is None
    shutil.rmtree(base)


def _run(playbook: str, extravars: dict[str, Any], workdir: Path) -> Any:
    private = workdir / "runner"
    shutil.rmtree(private, ignore_errors=True)
    private.mkdir()
    return ansible_runner.run(
        private_data_dir=str(private),
        playbook=str(PLAYBOOKS / playbook),
        inventory=str(INVENTORY),
        extravars=extravars,
        envvars={"ANSIBLE_PIPELINING": "True", "ANSIBLE_NOCOLOR": "True"},
        limit="localhost",
        quiet=True,
    )


class Provisioner:
    """Runs the playbooks with the base extravars plus overrides.

    ``ensure`` skips the run when the same variables were applied last and the master
    still runs: most tests only need some instance, and every run costs seconds.
    """

    def __init__(self, base: dict[str, Any], workdir: Path) -> None:
        self.base = base
        self.workdir = workdir
        self.applied: dict[str, Any] | None = None

    def __call__(self, playbook: str = "nginx.yml", **overrides: Any) -> Any:
        extravars = {**self.base, **overrides}
        result = _run(playbook, extravars, self.workdir)
        ok = playbook == "nginx.yml" and result.status == "successful"
        self.applied = extravars if ok else None
        return result

    def ensure(self, **overrides: Any) -> None:
        if self.applied == {**self.base, **overrides} and _master(self.base) is not None:
            return
        result = self(**overrides)
        assert result.status == "successful", _failures(result)


@pytest.fixture(scope="module")
def provision(instance: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Provisioner:
    return Provisioner(instance, tmp_path_factory.mktemp("runner"))


def _changed(result: Any) -> int:
    return int((result.stats or {}).get("changed", {}).get("localhost", 0))


def _failures(result: Any) -> list[tuple[str, str]]:
    """(task name, message) of every failed task, for assertions and their messages."""
    return [
        (e["event_data"]["task"], str(e["event_data"].get("res", {}).get("msg", ""))[:300])
        for e in result.events
        if e.get("event") == "runner_on_failed" and not e["event_data"].get("ignore_errors")
    ]


def _proc_status(pid: int) -> dict[str, str]:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return {}
    return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except (FileNotFoundError, ProcessLookupError):
        return ""


def _master(extravars: dict[str, Any]) -> int | None:
    """The pid of the live master running this instance's configuration, if any."""
    conf = f"-c {extravars['sizing_conf_dir']}/nginx.conf"
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            line = _cmdline(int(entry.name))
            if line.startswith("nginx: master process") and line.endswith(conf):
                return int(entry.name)
    return None


def _workers(master: int) -> list[int]:
    """Live (non-zombie) worker processes of ``master``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            status = _proc_status(int(entry.name))
            if (
                status.get("PPid", "").strip() == str(master)
                and not status.get("State", "").startswith("Z")
                and _cmdline(int(entry.name)).startswith("nginx: worker process")
            ):
                pids.append(int(entry.name))
    return sorted(pids)


def _get(path: str) -> tuple[int, bytes]:
    url = f"http://127.0.0.1:{HTTP_PORT}{path}"
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read()


def _tls12_context() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    # TLS 1.2: ssl_ciphers applies, and a resumed session shows right after the handshake.
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    return ctx


class _Tls:
    """What one TLS request saw (read before the socket closes)."""

    def __init__(self, tls: ssl.SSLSocket) -> None:
        self.cipher = (tls.cipher() or ("", "", 0))[0]
        self.session = tls.session
        self.reused = tls.session_reused


def _tls_get(ctx: ssl.SSLContext, session: ssl.SSLSession | None = None) -> _Tls:
    sock = socket.create_connection(("127.0.0.1", HTTPS_PORT), timeout=5)
    with ctx.wrap_socket(sock, server_hostname="localhost", session=session) as tls:
        tls.sendall(b"GET /128b HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := tls.recv(65536):
            data += chunk
        assert data.startswith(b"HTTP/1.1 200"), data[:80]
        return _Tls(tls)


def _tls_resumed(ctx: ssl.SSLContext) -> bool:
    first = _tls_get(ctx)
    assert first.session is not None
    return bool(_tls_get(ctx, session=first.session).reused)


def test_provisions_idempotently_and_serves_exact_sizes(
    provision: Provisioner, instance: dict[str, Any]
) -> None:
    first = provision()
    assert first.status == "successful" and first.rc == 0, _failures(first)
    second = provision()
    assert second.status == "successful" and second.rc == 0, _failures(second)
    assert _changed(second) == 0, second.stats

    assert _get("/healthz") == (200, b"ok\n")
    for name, size in SIZES.items():
        status, body = _get(f"/{name}")
        assert (status, len(body)) == (200, size), name

    master = _master(instance)
    assert master is not None
    assert Path(instance["sizing_pid_file"]).read_text().strip() == str(master)
    workers = _workers(master)
    assert len(workers) == 1
    assert _proc_status(workers[0])["Cpus_allowed_list"].strip() == "0"


def test_tls_rsa_full_handshakes_without_reuse(provision: Provisioner) -> None:
    provision.ensure()
    ctx = _tls12_context()
    cipher = _tls_get(ctx).cipher
    assert cipher.startswith("ECDHE-RSA-"), cipher
    assert not _tls_resumed(ctx)


def test_tls_sessions_resume_when_asked(provision: Provisioner) -> None:
    result = provision(sizing_tls_session_reuse=True)
    assert result.status == "successful", _failures(result)
    assert _tls_resumed(_tls12_context())


def test_tls_ecdsa_certificate(provision: Provisioner) -> None:
    result = provision(
        sizing_tls_key_type="ecdsa-p256", sizing_tls_ciphers="ECDHE-ECDSA-AES256-GCM-SHA384"
    )
    assert result.status == "successful", _failures(result)
    cipher = _tls_get(_tls12_context()).cipher
    assert cipher == "ECDHE-ECDSA-AES256-GCM-SHA384", cipher


def test_config_change_restarts_with_exactly_the_new_workers(
    provision: Provisioner, instance: dict[str, Any]
) -> None:
    if _master(instance) is None:
        provision.ensure()
    before = _master(instance)
    result = provision(sizing_nginx_workers=2, sizing_nginx_affinity="01 10")
    assert result.status == "successful", _failures(result)
    master = _master(instance)
    assert master is not None and master != before
    workers = _workers(master)
    assert len(workers) == 2
    cpus = sorted(_proc_status(pid)["Cpus_allowed_list"].strip() for pid in workers)
    assert cpus == ["0", "1"]


def test_fault_locations(provision: Provisioner) -> None:
    provision.ensure(sizing_fault_locations=True)
    with pytest.raises(urllib.error.HTTPError) as err:
        _get("/fault/503")
    assert err.value.code == 503
    codes = []
    for _ in range(300):
        try:
            codes.append(_get("/fault/mixed")[0])
        except urllib.error.HTTPError as exc:
            codes.append(exc.code)
    assert set(codes) == {200, 503}
    assert 10 <= codes.count(503) <= 60  # about 1 in 10 of 300


def test_broken_variable_fails_at_validation_and_keeps_running_config(
    provision: Provisioner, instance: dict[str, Any]
) -> None:
    if _master(instance) is None:
        provision.ensure()
    conf = Path(instance["sizing_conf_dir"]) / "nginx.conf"
    digest = hashlib.sha256(conf.read_bytes()).hexdigest()
    master = _master(instance)

    result = provision(sizing_nginx_worker_connections="abc")
    assert result.status == "failed"
    assert [task for task, _ in _failures(result)] == ["Render the nginx configuration"]
    assert hashlib.sha256(conf.read_bytes()).hexdigest() == digest
    assert _master(instance) == master
    assert _get("/healthz") == (200, b"ok\n")


def test_recovers_from_a_killed_instance_with_a_stale_pid_file(
    provision: Provisioner, instance: dict[str, Any]
) -> None:
    provision.ensure()
    master = _master(instance)
    assert master is not None
    for pid in [master, *_workers(master)]:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _master(instance) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert Path(instance["sizing_pid_file"]).read_text().strip() == str(master)  # stale

    result = provision()
    assert result.status == "successful", _failures(result)
    new = _master(instance)
    assert new is not None and new != master
    assert len(_workers(new)) == 1
    assert _get("/1k")[1] == b"x" * 1024


def test_recovers_from_a_deleted_config_dir(
    provision: Provisioner, instance: dict[str, Any]
) -> None:
    provision.ensure()
    master = _master(instance)
    shutil.rmtree(instance["sizing_conf_dir"])

    result = provision()
    assert result.status == "successful", _failures(result)
    new = _master(instance)
    assert new is not None and new != master  # restarted on the re-created certificates
    assert (Path(instance["sizing_conf_dir"]) / "tls" / "rsa2048.crt").is_file()
    assert _get("/healthz") == (200, b"ok\n")
    assert _changed(provision()) == 0


def test_stop_playbook_is_idempotent(provision: Provisioner, instance: dict[str, Any]) -> None:
    provision.ensure()
    first = provision("nginx-stop.yml")
    assert first.status == "successful" and _changed(first) > 0
    assert _master(instance) is None
    second = provision("nginx-stop.yml")
    assert second.status == "successful" and _changed(second) == 0
