"""callbench from Python: callbench's Rust workloads called in-process through PyO3 (`callbench._native`),
the same workloads in pure Python (`callbench.pure`) and over the wire (`callbench.clients`), and seed 004's
boundary table (`python -m callbench.boundary`)."""

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

__all__ = [
    "PYO3_VERSION",
    "UserStore",
    "__version__",
    "echo_message",
    "life_setup",
    "life_step",
    "noop",
    "sha512_hex",
    "write_users_json",
]
