"""Ansible connection to a Podman container on this machine: ``podman exec``.

The ``container`` platform runs NGINX in a container that sizing started
(sizing.provision.platforms.container); the playbooks then reach it as any host, with
``ansible_connection: sizing_podman`` and ``ansible_host: <container name>``, so the same
``playbooks/nginx.yml`` provisions it as bare metal. ansible-core ships no Podman
connection (the containers.podman collection does, and is not installed here); this one
needs only the ``podman`` program. Files go in through ``podman exec -i ... cat``, so no
``podman cp`` (which pauses the container) is needed.
"""

from __future__ import annotations

DOCUMENTATION = """
    name: sizing_podman
    short_description: run tasks in a local Podman container with podman exec
    description:
        - Runs commands in a running container of this machine's (rootful) Podman.
    author: sizing
    options:
        remote_addr:
            description: The container name or id.
            default: inventory_hostname
            vars:
                - name: inventory_hostname
                - name: ansible_host
        podman_executable:
            description: The podman program.
            default: podman
            vars:
                - name: ansible_podman_executable
    extends_documentation_fragment:
        - connection_pipelining
"""

import shlex
import subprocess
from typing import Any

from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible.module_utils.common.text.converters import to_bytes
from ansible.plugins.connection import ConnectionBase


class Connection(ConnectionBase):  # type: ignore[misc]
    """``podman exec`` into a named container."""

    transport = "sizing_podman"
    has_pipelining = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default_user = "root"

    def _container(self) -> str:
        return str(self.get_option("remote_addr"))

    def _podman(self, *args: str) -> list[str]:
        return [str(self.get_option("podman_executable")), *args]

    def _connect(self) -> Connection:
        if not self._connected:
            probe = subprocess.run(
                self._podman("container", "inspect", "--format", "{{.State.Running}}",
                             self._container()),
                capture_output=True, check=False,
            )  # fmt: skip
            if probe.returncode != 0 or probe.stdout.strip() != b"true":
                why = probe.stderr.decode(errors="replace").strip() or "not running"
                raise AnsibleConnectionFailure(f"container {self._container()}: {why}")
            self._connected = True
        return self

    def exec_command(
        self, cmd: str, in_data: bytes | None = None, sudoable: bool = True
    ) -> tuple[int, bytes, bytes]:
        super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        argv = self._podman("exec", "-i", self._container(), "/bin/sh", "-c", cmd)
        proc = subprocess.run(argv, input=in_data or b"", capture_output=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    def put_file(self, in_path: str, out_path: str) -> None:
        super().put_file(in_path, out_path)
        with open(to_bytes(in_path), "rb") as src:
            proc = subprocess.run(
                self._podman("exec", "-i", self._container(), "/bin/sh", "-c",
                             f"cat > {shlex.quote(out_path)}"),
                stdin=src, capture_output=True, check=False,
            )  # fmt: skip
        if proc.returncode != 0:
            raise AnsibleError(f"could not put {out_path}: {proc.stderr.decode(errors='replace')}")

    def fetch_file(self, in_path: str, out_path: str) -> None:
        super().fetch_file(in_path, out_path)
        with open(to_bytes(out_path), "wb") as dst:
            proc = subprocess.run(
                self._podman("exec", self._container(), "cat", in_path),
                stdout=dst, stderr=subprocess.PIPE, check=False,
            )  # fmt: skip
        if proc.returncode != 0:
            raise AnsibleError(f"could not fetch {in_path}: {proc.stderr.decode(errors='replace')}")

    def close(self) -> None:
        self._connected = False
