"""Load-generator drivers, one module per tool.

Each driver is an argv builder plus a pure ``parse(text)`` that turns the tool's output
into a frozen result with normalised units (milliseconds, bytes, seconds) and raises a
:class:`~sizing.errors.SizingError` subclass naming the figure it could not find. Drivers
never build shell strings and never run anything themselves.
"""

__all__ = ["DEFAULT_GENERATOR"]

# A profile's generator when it names none, and the one a basis is not labelled with: here,
# beside no driver, so that what reads stored points (sizing.sources) names it without
# importing the drivers (the registry, sizing.load.tools, checks it is registered).
DEFAULT_GENERATOR = "wrk"
