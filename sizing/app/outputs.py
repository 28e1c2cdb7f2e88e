"""The files the commands write for a user (a guide, a demand file): checked before any work
and written all at once, by :mod:`sizing.outfile`; the command line reaches them here."""

from __future__ import annotations

from sizing.outfile import check_target, refuse_inputs, write_atomic

__all__ = ["check_target", "refuse_inputs", "write_atomic"]
