"""Helpers of the load benches (bench/limit.py, bench/server.py, bench/connections.py).

They live in a subpackage so that `make bench` (which runs every `bench/*.py`) does not run them as
benchmarks. Each role module is started with `python -m bench._load.<module>` from the repository root.
"""
