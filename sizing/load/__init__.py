"""Load-generator drivers, one module per tool.

Each driver is an argv builder plus a pure ``parse(text)`` that turns the tool's output
into the one neutral result every tool returns (:class:`sizing.load.result.LoadResult`,
normalised units: milliseconds, bytes, seconds) and raises a
:class:`~sizing.errors.SizingError` subclass naming the figure it could not find. No
driver imports another's module. Drivers never build shell strings and never run anything
themselves.
"""

__all__ = [
    "DEFAULT_GENERATOR",
    "FIXED_RATE_FALLBACK_AT_SCHEMA_6",
    "HOST_FACT_GENERATOR",
    "OPEN_LOOP_AT_SCHEMA_6",
]

# A profile's generator when it names none, and the one a basis is not labelled with: here,
# beside no driver, so that what reads stored points (sizing.sources) names it without
# importing the drivers (the registry, sizing.load.tools, checks it is registered).
DEFAULT_GENERATOR = "wrk"

# What the stored records of earlier schemas name, for the store's migrations (which must
# not import the drivers either); facts of the past, never compared with a profile's
# generator. When schema 6 came, the generators that offered a fixed-rate profile's rates
# themselves (open loop), and the one every other fixed-rate point ran on:
OPEN_LOOP_AT_SCHEMA_6 = ("oha", "vegeta")
FIXED_RATE_FALLBACK_AT_SCHEMA_6 = "vegeta"
# Before schema 8, the generator whose version every host reported as a fact of its own
# (``HOST_FACT_GENERATOR + "_version"``): a generator's version is its point's now.
HOST_FACT_GENERATOR = "wrk"
