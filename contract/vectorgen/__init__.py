"""Helpers of make_vectors.py: the reference workloads and the vector builders."""
