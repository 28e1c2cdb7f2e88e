"""A customer's demand from their own traffic: NGINX access logs (any ``log_format``,
JSON, gzip'd and rotated, several servers summed per second) and counters (stub_status,
the NGINX Plus API, Prometheus text) read in bounded memory into the per-second peak,
its percentiles, connections, full TLS handshakes and the traffic's shape; written to and
read from the demand file that ``recommend --demand`` and ``guide --demand`` size for.

Pure reading: it imports nothing of sizing but :mod:`sizing.errors` and
:mod:`sizing.yamlfile`. This module imports nothing (the guide's model reads
:mod:`sizing.demand.model` alone); the demand file is :mod:`sizing.demand.file`."""
