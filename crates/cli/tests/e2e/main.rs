//! End-to-end tests: the real `callbench` binary against real servers on loopback, one module per
//! command and behaviour. One test binary, not one per file: each binary links the whole tool and its
//! dependencies again (the commit that merged them measured it). scripts/test runs every test in a
//! process of its own with nextest (.config/nextest.toml names the ones that run alone).

mod claims;
mod common;
mod lab;
mod load_call_data;
mod load_connections;
mod load_goaway;
mod load_grpc;
mod load_hostile_h2;
mod load_hostile_h3;
mod load_hostile_http1;
mod load_hostile_reflection;
mod load_http;
mod load_http3;
mod load_inproc;
mod load_interrupt;
mod load_io;
mod load_mtls;
mod load_open_loop;
mod load_outputs;
mod load_prometheus;
mod load_rate_not_kept;
mod load_raw;
mod load_remote;
mod load_safety;
mod load_stock_servers;
mod load_thresholds;
mod load_tls;
mod run_default;
mod run_disturbed;
mod run_endpoints;
mod run_failures;
mod run_network;
mod run_peers;
mod run_processing;
mod run_prometheus;
mod run_report_verdicts;
mod run_suite;
mod run_twin_stock;
mod run_user_servers;
mod seed_clients;
mod serve_network;
mod signals;
mod verify_cli;
