//! Test support shared by the reference servers' own tests: start the real
//! binary, talk raw HTTP/1.1, check `--tls`, and the REST suites every REST server runs.

pub mod http1;
pub mod rest_suite;
pub mod server;
pub mod tls;
pub mod tls_suite;

/// Expands to one `#[test]` per check of `rest_suite`, run against the binary `$bin`:
/// `callbench_testkit::rest_server_tests!(env!("CARGO_BIN_EXE_rust-axum"));`
#[macro_export]
macro_rules! rest_server_tests {
    ($bin:expr) => {
        $crate::rest_server_tests!($bin; every_endpoint_answers, per_request_mode_reads_the_file_each_call, bad_input_is_400, keep_alive_survives_a_400, unknown_user_is_404, bodies_up_to_4_mib_are_accepted_and_bigger_ones_are_413, only_application_json_is_accepted, unknown_routes_are_404_and_wrong_methods_405, stops_promptly_on_sigterm_and_sigint, prints_its_version, gzip_both_ways);
    };
    ($bin:expr; $($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                $crate::rest_suite::$name($bin)
            }
        )*
    };
}

/// Expands to one `#[test]` per check of `tls_suite` (`--tls`, HTTP/2 over TLS and plaintext), run
/// against the binary `$bin` (needs curl): `callbench_testkit::rest_tls_tests!(env!("CARGO_BIN_EXE_rust-axum"));`
#[macro_export]
macro_rules! rest_tls_tests {
    ($bin:expr) => {
        $crate::rest_tls_tests!($bin; tls_serves_http1_and_http2, tls_offers_tls12_and_tls13_with_alpn_h2_and_http1, tls_certificate_is_self_signed_for_localhost_with_a_fresh_key, plaintext_serves_http2_with_prior_knowledge, tls_stops_promptly_on_sigterm);
    };
    ($bin:expr; $($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                $crate::tls_suite::$name($bin)
            }
        )*
    };
}
