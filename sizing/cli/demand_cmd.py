"""``sizing demand FILE...``: the peak demand of a customer's own traffic, from NGINX
access logs or counters, for ``recommend --demand`` and ``guide --demand``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from sizing.cli.app import JsonOpt, columns, emit_json

FilesArg = Annotated[
    list[Path],
    typer.Argument(
        help="Access logs (plain or gzip'd, rotations too: access.log access.log.1"
        " access.log.2.gz; several servers' logs are summed per second), or with"
        " --counters files of timestamped counter samples.",
        show_default=False,
        metavar="FILE...",
    ),
]
LogFormatOpt = Annotated[
    str | None,
    typer.Option(
        "--log-format",
        metavar="FORMAT",
        help="The log_format the files are in, as in nginx.conf (its quoted parts joined),"
        ' e.g. \'$remote_addr [$time_local] "$request" $status $bytes_sent $msec'
        " $request_time $connection_requests $ssl_session_reused'. Default: combined"
        " (JSON lines are read by their keys).",
    ),
]
EscapeOpt = Annotated[
    str,
    typer.Option("--escape", metavar="default|json", help="The log_format's escape=."),
]
ConfOpt = Annotated[
    Path | None,
    typer.Option("--nginx-conf", metavar="PATH", help="Read the log_format from this file."),
]
NameOpt = Annotated[
    str | None,
    typer.Option("--log-name", metavar="NAME", help="The log_format's name in --nginx-conf."),
]
CountersOpt = Annotated[
    bool,
    typer.Option(
        "--counters",
        help="The files are counter samples over time: stub_status pages or Prometheus"
        " text (nginx-prometheus-exporter) after a line holding the time, or NGINX Plus"
        ' API answers as JSON lines ({"time": ..., "http/requests": ..., "ssl": ...}).',
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        metavar="demand.yml",
        help="Write the demand file (YAML, with the files' hashes, span, lines read and"
        " skipped, method) for recommend/guide --demand; '-' writes it to stdout.",
    ),
]


RoleOpt = Annotated[
    str | None,
    typer.Option(
        "--role",
        metavar="ROLE",
        help="What NGINX does with these requests (a log cannot tell): static, lb"
        " (load balancing), proxy or api-jwt (an API gateway validating a JWT per request)."
        " recommend/guide --demand size on figures of this role.",
    ),
]
AssumeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--assume",
        metavar="NAME=VALUE",
        help="A figure the input does not give, stated: tls-share=0.6,"
        " resumption-share=40%, requests-per-connection=8 (repeatable; needs --assume-source).",
    ),
]
AssumeSourceOpt = Annotated[
    str | None,
    typer.Option(
        "--assume-source",
        metavar="TEXT",
        help="Where the --assume figures come from (written with them in the demand file).",
    ),
]


def demand_cmd(
    files: FilesArg,
    log_format: LogFormatOpt = None,
    escape: EscapeOpt = "default",
    nginx_conf: ConfOpt = None,
    log_name: NameOpt = None,
    counters: CountersOpt = False,
    out: OutOpt = None,
    role: RoleOpt = None,
    assume: AssumeOpt = None,
    assume_source: AssumeSourceOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The peak demand of your own traffic, from NGINX access logs or counters.

    Bins every request in the second it arrived ($msec - $request_time when both are
    logged; the logged time less $request_time, to the most likely second, without $msec;
    else the logged time, 1 s) and sums servers per second: the busiest second,
    the p99 and p99.9 of the per-second rates, peak-to-average, requests/s by status class,
    new connections/s, full TLS handshakes/s and the resumption share, requests per
    connection, the response-size mix and p50/p99 $request_time, each with its span. Fields
    the log lacks are named with the log_format addition that gives them. Streams: memory
    does not grow with the files' size.
    """
    # numpy's BLAS starts a thread per CPU when it loads, for nothing here (no linear
    # algebra): 0.04 s of CPU, a fifth of a small log's whole run. A user's setting stands.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from sizing.app.demand import DemandRequest, demand_yaml, derive  # deferred: numpy
    from sizing.errors import UsageError
    from sizing.report.render.demand_text import demand_text

    req = DemandRequest(
        files=tuple(files),
        log_format=log_format,
        escape=escape,
        nginx_conf=nginx_conf,
        log_name=log_name,
        counters=counters,
        out=out,
        role=role,
        assume=tuple(assume or ()),
        assume_source=assume_source,
    )
    to_stdout = out is not None and not req.to_file
    if to_stdout and json_out:
        raise UsageError("--out - and --json both write stdout: give one")
    demand = derive(req)
    if to_stdout:  # stdout carries the demand file alone: `-o - > demand.yml` reads back
        typer.echo(demand_yaml(demand), nl=False)
    elif json_out:
        emit_json(demand.to_dict())
    else:
        typer.echo(demand_text(demand, columns()))
    if req.to_file:
        typer.echo(f"demand file written: {out}", err=True)
