//! `--tls` (HTTP/1.1 and HTTP/2 over TLS, the self-signed certificate) and plaintext HTTP/2 with prior
//! knowledge, checked with curl and a rustls client against the real binary.

callbench_testkit::rest_tls_tests!(env!("CARGO_BIN_EXE_rust-axum"));
