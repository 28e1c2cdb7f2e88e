"""A dedicated local nginx instance for integration tests: own ports, paths and pid file."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

INVENTORY = """
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: "{{{{ ansible_playbook_python }}}}"
  children:
    servers:
      hosts:
        localhost:
          sizing_http_port: {http}
          sizing_https_port: {https}
          sizing_conf_dir: {tmp}/conf
          sizing_www_root: {tmp}/www
          sizing_log_dir: {tmp}/log
          sizing_pid_file: {tmp}/nginx.pid
{extra}
    clients:
      hosts:
        localhost: {{}}
"""


UPSTREAM_VARS = """          sizing_upstream_port: {port}
          sizing_upstream_conf_dir: {tmp}/up/conf
          sizing_upstream_www_root: {tmp}/up/www
          sizing_upstream_log_dir: {tmp}/up/log
          sizing_upstream_pid_file: {tmp}/up/nginx.pid"""


def upstream_vars(tmp: Path, port: int) -> str:
    """Host variables that put the upstream nginx (rps, tps, proxy) under ``tmp`` too; stop
    it with ``stop_nginx(tmp / "up" / "nginx.pid")``."""
    return UPSTREAM_VARS.format(port=port, tmp=tmp)


def write_inventory(tmp: Path, http: int, https: int, extra: str = "") -> Path:
    """An inventory for localhost whose nginx lives entirely under ``tmp``."""
    inv = tmp / "inv.yml"
    inv.write_text(INVENTORY.format(http=http, https=https, tmp=tmp, extra=extra))
    return inv


def stop_nginx(pidfile: Path) -> None:
    """Stop the instance by the PID in its pid file (quit, then kill after 5 s)."""
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGQUIT)
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
