//! The contract's REST answers, checked against the real binary over real sockets.

callbench_testkit::rest_server_tests!(env!("CARGO_BIN_EXE_rust-axum"));
