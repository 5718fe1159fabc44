"""The callbench workloads in Python, shared by the Python reference servers.

A port of crates/workloads/src: the same rules, limits and error kinds. The functions take plain values or
duck-typed messages (a pydantic model and a protobuf message have the same attribute names), so the REST and
gRPC servers call them without converting.
"""
