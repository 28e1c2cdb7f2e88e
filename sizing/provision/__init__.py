"""Stage 3, provision: side effects on hosts (Ansible, platforms, nginx, tools)."""

from sizing.provision.ansible import PlaybookResult, Playbooks, run_playbook

__all__ = ["PlaybookResult", "Playbooks", "run_playbook"]
