//! The records routes (`/records/batch`, `/records/upload`, `/records?count=N`) against the real
//! binary: the suite in `records_suite/`, which rust-actix runs too.

mod records_suite;

macro_rules! records_tests {
    ($($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                records_suite::$name(env!("CARGO_BIN_EXE_rust-axum"))
            }
        )*
    };
}

records_tests!(
    batch_sums_up_one_json_body,
    upload_reads_ndjson_however_it_is_sent,
    upload_refuses_bad_lines_and_wrong_types_and_keeps_the_connection,
    upload_lines_up_to_4_mib_pass_and_limits_are_413,
    download_streams_count_lines,
    download_over_http_1_0_ends_with_the_connection
);
