"""callbench from Python: callbench's Rust workloads called in-process through PyO3 (`callbench._native`),
the same workloads in pure Python (`callbench.pure`) and over the wire (`callbench.clients`), and seed 004's
boundary table (`python -m callbench.boundary`); `load()` runs `callbench load` through the same Rust engine and
`merge()` joins the runs of several machines (`callbench.engine`, and `python -m callbench.distributed` on Ray)."""

from ._native import (
    PYO3_VERSION,
    UserStore,
    __version__,
    echo_message,
    life_setup,
    life_step,
    noop,
    sha512_hex,
    write_users_json,
)
from .engine import load, merge

__all__ = [
    "PYO3_VERSION",
    "UserStore",
    "__version__",
    "echo_message",
    "life_setup",
    "life_step",
    "load",
    "merge",
    "noop",
    "sha512_hex",
    "write_users_json",
]
