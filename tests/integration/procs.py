"""Finding the load a run left behind: live window runners and wrk, by command line."""

from __future__ import annotations

from pathlib import Path


def load_processes(marker: str) -> list[str]:
    """Command lines of live loadgen.py/wrk processes whose arguments contain ``marker``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
            state = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        text = " ".join(a.decode(errors="replace") for a in argv)
        if state == "Z" or marker not in text:
            continue
        if "loadgen.py" in text or Path(argv[0].decode(errors="replace")).name == "wrk":
            found.append(text[:160])
    return found
