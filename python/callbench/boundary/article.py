"""What seed 004 reported (timeit totals in seconds, 2018, hyper 0.11 server, requests client without
a session), keyed by this run's operations."""

# operation -> (rpc total s, pyo3 total s, loops)
ARTICLE = {
    "setup": (2.8057, 0.0022, 1000),
    "step/1": (48.712, 7.9649, 10000),
    "step/10": (11.7823, 6.8943, 1000),
    "step/100": (7.2779, 6.6566, 100),
    "step/1000": (7.1569, 6.507, 10),
}

NOTE = (
    "seed 004: a hyper 0.11 server and requests.get/post without a session (a new connection per call), on the "
    "author's 2018 machine; its rows after the first ran on the board the previous rows left (here every row "
    "starts from the acorn, so all rows do the same 10,000 generations)"
)
