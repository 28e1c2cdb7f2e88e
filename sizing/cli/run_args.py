"""The options of ``sizing run``, each declared once, on its :class:`RunArgs` field.

A field carries its default, its flag and the help ``--help`` shows
(:mod:`sizing.cli.declared`); ``run`` takes them all as one parsed object
(``declared.takes(RunArgs)``), in the fields' order. An option ``run`` hands on as given
reaches the :class:`sizing.sweep.options.RunOptions` (or ``MeasureSettings``) field of its
name without a line of its own (``declared.same_named``): adding such an option is its field
here and its field there, which also says how ``--resume`` stores it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sizing.cli.declared import option, shared
from sizing.cli.options import RUN_HT, DbOpt, JsonOpt, metavar
from sizing.model import HtChoice

__all__ = ["RunArgs"]


@dataclass(frozen=True)
class RunArgs:
    """The parsed options of ``sizing run``, in the order ``--help`` lists them."""

    inventory: list[Path] | None = option(
        None,
        "-i",
        "--inventory",
        help="Ansible inventory: a file, a directory or a plugin configuration; repeated,"
        " merged in order as Ansible merges them (default: inventories/local.yml).",
    )
    cores: str = option("1,2,4,8", help="Core counts to measure, comma-separated (powers of two).")
    ht: str = option(
        HtChoice.OFF,
        metavar=metavar(RUN_HT),
        help="Hyper-threading: off (one thread per core), on, or both.",
    )
    profile: str = option("rps,tps", help="Workload profiles from profiles/, comma-separated.")
    duration: float | None = option(
        None,
        min=1,
        max=3600,
        help="Seconds per timed repetition (default: the profile's).",
    )
    repeat: int | None = option(
        None,
        min=1,
        max=100,
        help="Exactly N timed repetitions per point. Default: adaptive, repeat until the "
        "interval of the median (the range of the runs below 6, with its coverage: 75% "
        "for 3) is within ±2% and the runs show no drift (at least the profile's count, "
        "at most --max-repeat).",
    )
    max_repeat: int = option(10, min=2, max=100, help="Cap of adaptive repetitions per point.")
    warmup: float | None = option(
        None, min=0, max=3600, help="Warm-up seconds before the repetitions."
    )
    connections: int | None = option(
        None, min=1, max=1_000_000, help="Connections per client (default: the profile's)."
    )
    db: str | None = shared(None, DbOpt)
    json_out: bool = shared(False, JsonOpt)
    allow_host_reboot: bool = option(
        False,
        "--allow-host-reboot",
        help="Let sizing switch hyper-threading on a hypervisor host (ESXi), which"
        " reboots it. Without it, points needing the other HT state are skipped.",
    )
    insecure: bool = option(
        False,
        "--insecure",
        help="Do not verify hypervisor API TLS certificates (vCenter/ESXi); warns.",
    )
    resume: int | None = option(
        None,
        "--resume",
        metavar="RUN_ID",
        help="Measure only what run RUN_ID is missing (failed or never reached points),"
        " with that run's inventory and options, appending to it.",
    )
    rates: str | None = option(
        None,
        "--rates",
        metavar="START:STOP:STEP",
        help="Latency profiles: offered request rates, e.g. 1000:10000:1000 or 500,1000"
        " (default: the profile's).",
    )
    slo: str | None = option(
        None,
        "--slo",
        help="Latency profiles: find the highest rate meeting this objective to ±2%,"
        " e.g. p95=10ms (mean, p50, p90, p95, p99, max).",
    )
    soak: str | None = option(
        None,
        "--soak",
        metavar="DURATION",
        help="Latency profiles: repeat every rate back to back for this long (e.g. 10m),"
        " keeping each repetition.",
    )
    plan_only: bool = option(
        False,
        "--plan",
        help="Dry run: print the points, hosts, CPU sets and exact load-generator commands;"
        " provision and load nothing. Offline: plans on the inventory's declared"
        " sizing_cpu and contacts no host (see --probe).",
    )
    probe: bool = option(
        False,
        "--probe",
        help="With --plan: read the hosts' real facts over Ansible and run the pre-flight checks.",
    )
    limit: str | None = option(
        None,
        "--limit",
        "-l",
        metavar="PATTERN",
        help="Ansible host patterns: use only the hosts they match (as"
        " ansible-playbook --limit), e.g. 'r640-01:clients'.",
    )
    extra_vars: list[str] | None = option(
        None,
        "--extra-vars",
        "-e",
        metavar="VARS",
        help="Ansible extra vars (key=value, YAML/JSON, or @file), repeatable: given to"
        " every playbook and overriding the inventory's variables, sizing_* included.",
    )
    keep_artifacts: Path | None = option(
        None,
        "--keep-artifacts",
        metavar="DIR",
        file_okay=False,
        help="Keep ansible-runner's artifacts (events, output) of every playbook in DIR.",
    )
    label: str = option("", help="A name stored with the run (results, --compare).")
    sample: int | None = option(
        None,
        "--sample",
        metavar="N",
        help="Measure only N servers of each hardware identity (platform, CPU model and"
        " topology): identical servers share a basis. The plan and the run say which"
        " hosts stand for which.",
    )
    verbose: bool = option(
        False, "--verbose", "-v", help="Table with spread, latency and reasons in full."
    )
    platform: str | None = option(
        None,
        metavar="PLATFORMS",
        help="Measure only servers of these platforms, comma-separated: baremetal,"
        " hypervisor (libvirt and vsphere), libvirt, vsphere. Default: every server.",
    )
    skip_preflight: bool = option(
        False,
        "--skip-preflight",
        help="Warn about failed pre-flight checks instead of refusing to run; the"
        " validity guards still judge every point.",
    )
    keep_running: bool = option(
        False,
        "--keep-running",
        help="Leave the sizing nginx and upstream running when the run ends (by default"
        " they are stopped at the end, on error and on Ctrl-C).",
    )
    unpaired: bool = option(
        False,
        "--unpaired",
        help="Measure the legs of a pair (a guest and its own host's bare metal; HT off"
        " and on of one host) one after the other instead of in alternation; their"
        " overheads and HT gains are then unpaired, with the wider interval.",
    )
    workload: Path | None = option(
        None,
        "--workload",
        help="Replay a demand file's workload (sizing demand --role), checked against the"
        " lab nginx's own log; alone, it replaces the default profiles.",
    )
