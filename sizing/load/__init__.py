"""Load-generator drivers, one module per tool.

Each driver is an argv builder plus a pure ``parse(text)`` that turns the tool's output
into a frozen result with normalised units (milliseconds, bytes, seconds) and raises a
:class:`~sizing.errors.SizingError` subclass naming the figure it could not find. Drivers
never build shell strings and never run anything themselves.
"""
