"""Seed 004's question for callbench's workloads: calling Rust from Python in-process (PyO3) vs over
the wire (REST with requests or httpx, gRPC with grpcio) vs pure Python. `python -m callbench.boundary`."""
