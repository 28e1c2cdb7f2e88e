"""sizing: capacity sizing for NGINX on premises.

Measures NGINX on real hosts at 1, 2, 4 and 8 cores (bare metal and hypervisor guests),
stores every figure with its metadata, and turns the figures into cost-per-throughput
tables, recommendations and printable sizing guides.
"""

__version__ = "0.1.0"
