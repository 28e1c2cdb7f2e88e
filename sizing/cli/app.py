"""The Typer application object, the environment every command runs in
(:mod:`sizing.app.env`) and the error guard."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Annotated, Any, ParamSpec, TypeVar

import typer

from sizing import __version__
from sizing.app.env import Environment, current, use
from sizing.errors import ExitStatus, SizingError
from sizing.report.render.printable import printable
from sizing.textfit import fold_lines

EXIT_CODES_HELP = "Exit codes: " + ", ".join(f"{int(s)} {s.name.lower()}" for s in ExitStatus) + "."

JSON_HELP = (
    "--json prints one strict JSON document on stdout: a number that is not finite "
    "(NaN, an infinite price) is printed as null."
)
# ``--json``, shared by the commands; here beside emit_json rather than in
# sizing.cli.options, whose vocabulary (sizing.model) `sizing demand` does not need
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]

app = typer.Typer(
    name="sizing",
    help=(
        "Capacity sizing for NGINX on premises: measure NGINX per core count on bare metal "
        "and hypervisor guests, then size and price the hardware a load needs.\n\n"
        + EXIT_CODES_HELP
        + "\n\n"
        + JSON_HELP
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sizing {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks for errors (accepted anywhere).")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    # main() passes the process's environment; a test's runner gets a fresh one
    env = ctx.obj if isinstance(ctx.obj, Environment) else Environment.from_process()
    env.debug = env.debug or debug
    ctx.obj = use(env)


P = ParamSpec("P")
R = TypeVar("R")


def error(message: str) -> None:
    """One red line on stderr (plain without colour: not a terminal, or NO_COLOR). The
    line stays one line, whatever its length (a script greps it); the bullets under it (a
    catalog's validation, naming long fields and their choices) are folded at 100 columns."""
    first, _, rest = f"error: {message}".partition("\n")
    _said(first + (f"\n{fitted(rest)}" if rest else ""), typer.colors.RED)


def warn(message: str, *, fit: bool = True) -> None:
    """A warning on stderr, a line wider than 100 columns going on, indented, on the next
    (issue 62: every line sizing writes fits 100 columns; Ansible's warnings are of any
    length); ``fit=False`` keeps it one line."""
    text = fitted(f"warning: {message}") if fit else f"warning: {message}"
    _said(text, typer.colors.YELLOW)


def _said(line: str, colour: str) -> None:
    """A line on stderr, its control characters escaped, coloured on a terminal (the
    colour's own escape sequence goes around the escaped line, to the stream itself)."""
    line = printable(line)
    if current().colour:
        typer.echo(typer.style(line, fg=colour), err=True, file=unescaped(sys.stderr))
    else:
        typer.echo(line, err=True)


class _Escaping:
    """A text stream whose writes show control characters escaped (:func:`printable`):
    what a command prints cannot ring the terminal, move its cursor or reorder its text.
    ``raw`` is the stream itself, for the escape sequences sizing writes on purpose (the
    colours of :func:`error`, the live progress bar)."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(printable(text) if isinstance(text, str) else text)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def unescaped(stream: Any) -> Any:
    """The stream under an escaping one (itself otherwise)."""
    return stream.raw if isinstance(stream, _Escaping) else stream


@contextlib.contextmanager
def escaped_output() -> Iterator[None]:
    """stdout and stderr escape control characters while a command runs: the one place
    every terminal output passes (a catalog's server name, a host's, a label)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Escaping(unescaped(sys.stdout)), _Escaping(unescaped(sys.stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def fitted(text: str, width: int = 100) -> str:
    """``text`` with every line wider than ``width`` folded at spaces, the rest of it
    indented under its start (a word longer than the width, a path, is broken after one of
    its separators: wrapped, never cut; :func:`sizing.textfit.fold`)."""
    return fold_lines(text, width)


def guarded(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn a :class:`SizingError` into one line on stderr and its exit code."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with escaped_output():
            return _guarded(fn, *args, **kwargs)

    return wrapper


def _guarded(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run a command: its SizingError as one line on stderr and its exit code."""
    try:
        return fn(*args, **kwargs)
    except SizingError as exc:
        if current().debug:
            traceback.print_exc()
        error(str(exc))
        raise typer.Exit(int(exc.code)) from None
    except KeyboardInterrupt:
        error("interrupted")
        raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
    except (typer.Exit, typer.Abort):
        raise
    except BrokenPipeError:
        # The reader stopped reading (`sizing results --csv | head`): not an error of
        # ours. Point stdout at /dev/null so the flush at exit cannot fail again.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # stdout is not a file (a test runner's buffer)
            pass
        raise typer.Exit(int(ExitStatus.OK)) from None
    except Exception as exc:  # an unexpected bug: still one line unless --debug
        if current().debug:
            raise
        error(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)")
        raise typer.Exit(int(ExitStatus.ERROR)) from None


def strict_json(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, Infinity, -Infinity) replaced by null,
    in nested mappings, lists and tuples, keys included (a non-finite float key becomes
    its text): the JSON that every parser reads (RFC 8259 has no NaN or Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {
            (str(k) if isinstance(k, float) and not math.isfinite(k) else k): strict_json(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    return value


MAX_COLUMNS = 100  # text is never wider than this, however wide the terminal
MIN_COLUMNS = 40  # narrower than this, wrapping makes tables worse, not readable


def columns() -> int:
    """How wide the text on stdout may be: ``$COLUMNS`` when set, else the width of the
    terminal stdout is, else (a pipe, a file) 100; never more than 100 columns, and never
    under 40 (tables cannot fold further)."""
    env = current()
    width: int | None = None
    given = os.environ.get("COLUMNS", "").strip()
    if given.isdigit() and int(given) > 0:
        width = int(given)
    elif env.stdout_isatty:
        try:
            width = os.get_terminal_size(env.stdout.fileno()).columns or None
        except (OSError, ValueError):  # not a real terminal after all (a test's stream)
            width = None
    return MAX_COLUMNS if width is None else max(MIN_COLUMNS, min(MAX_COLUMNS, width))


def emit_json(doc: Any) -> None:
    """Print one strict JSON document on stdout: a non-finite number is null, never a bare
    ``NaN`` or ``Infinity`` (``allow_nan=False`` guarantees it)."""
    import json

    typer.echo(
        json.dumps(strict_json(doc), indent=2, sort_keys=False, default=str, allow_nan=False)
    )
