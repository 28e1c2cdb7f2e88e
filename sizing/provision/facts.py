"""Reading host facts through Ansible (``playbooks/facts.yml``)."""

from __future__ import annotations

from collections.abc import Sequence

from sizing.facts import HostFacts
from sizing.inventory import Host
from sizing.provision.ansible import Playbooks

__all__ = ["gather_facts"]

FACTS_TASK = "Describe the host"


def gather_facts(
    playbooks: Playbooks, hosts: Sequence[Host]
) -> tuple[dict[str, HostFacts], dict[str, str]]:
    """Facts of every reachable host, and one problem line for every other host."""
    names = sorted({h.name for h in hosts})
    res = playbooks.run("facts.yml", names, extravars={"sizing_hosts": ",".join(names)})
    facts: dict[str, HostFacts] = {}
    problems = res.problems()
    for name in names:
        out = res.result(name, FACTS_TASK)
        if out is None:
            problems.setdefault(name, f"facts could not be read ({res.status})")
            continue
        try:
            facts[name] = HostFacts.parse(str(out.get("stdout", "")), res.window(name, FACTS_TASK))
        except (ValueError, KeyError) as exc:
            problems[name] = f"facts are unreadable: {exc}"
    return facts, problems
