"""sizing: capacity sizing for NGINX on premises.

Measures NGINX on real hosts at 1, 2, 4 and 8 cores (bare metal and hypervisor guests),
stores every figure with its metadata, and turns the figures into cost-per-throughput
tables, recommendations and printable sizing guides.
"""

from sizing.classcode import install as _install_classcode

__version__ = "0.1.0"

# the methods dataclasses writes, compiled once and kept beside the bytecode
_install_classcode()
