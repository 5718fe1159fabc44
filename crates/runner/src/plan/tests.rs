use super::*;

#[test]
fn a_server_spec_names_its_protocol_and_h3_is_always_tls() {
    let h3 = ServerSpec::parse("rust-axum+h3").unwrap();
    assert_eq!((h3.http3, h3.tls, h3.http2, h3.label()), (true, true, false, "rust-axum+h3".to_string()));
    let h2 = ServerSpec::parse("rust-axum+h2+tls").unwrap();
    assert_eq!((h2.http2, h2.tls, h2.http3, h2.label()), (true, true, false, "rust-axum+h2+tls".to_string()));
    assert!(ServerSpec::parse("rust-axum+h2+h3").unwrap_err().to_string().contains("two protocols"));
    assert!(ServerSpec::parse("rust-axum+quic").unwrap_err().to_string().contains("known: +h2, +h3, +tls"));
}

#[test]
fn every_suite_in_the_repo_parses_and_expands_into_cells() {
    let dir = std::path::Path::new(
        &std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"),
    )
    .join("../../suites");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let suite = Suite::parse(&std::fs::read_to_string(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for e in &suite.experiments {
                let cells = cells(&suite, e).unwrap_or_else(|m| panic!("{}: {m}", path.display()));
                assert!(!cells.is_empty());
                for r in &e.references {
                    if let Some(cell) = &r.cell {
                        let id = format!("{}/{cell}", e.id);
                        assert!(cells.iter().any(|c| c.id == id), "{}: reference to unknown cell {id}", path.display());
                    }
                }
            }
            count += 1;
        }
    }
    assert!(count >= 9, "the suites of the issue: {count}");
}

#[test]
fn a_raw_server_is_called_with_the_echo_payload_and_no_workload() {
    let suite = Suite::parse(
        "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['raw-echo','rust-tonic']\nworkloads=['echo']\n\
         sweep={ param='payload_size', values=[1000] }",
    )
    .unwrap();
    let cells = cells(&suite, &suite.experiments[0]).unwrap();
    let addr: SocketAddr = "127.0.0.1:9000".parse().unwrap();
    let raw = cells[0].load_spec(Some(addr), Protocol::Raw, None).unwrap();
    assert_eq!((raw.target.as_str(), raw.workload.as_deref()), ("raw://127.0.0.1:9000?size=1000", None));
    let grpc = cells[1].load_spec(Some(addr), Protocol::Grpc, None).unwrap();
    assert_eq!((grpc.target.as_str(), grpc.workload.as_deref()), ("grpc://127.0.0.1:9000", Some("echo")));
    let mut unsized_cell = cells[0].clone();
    unsized_cell.fields.payload_size = None;
    let raw = unsized_cell.load_spec(Some(addr), Protocol::Raw, None).unwrap();
    assert_eq!(raw.target, format!("raw://127.0.0.1:9000?size={RAW_DEFAULT_SIZE}"));
}

#[test]
fn a_life_run_repetition_is_one_whole_run_unless_the_suite_counts_its_calls() {
    let suite = Suite::parse(
        "name='x'\n[defaults]\nduration='1s'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['inproc']\n\
         workloads=['life-run', 'life']\nsweep={ param='ntimes', values=[100, 1000] }",
    )
    .unwrap();
    let cells = cells(&suite, &suite.experiments[0]).unwrap();
    let specs: Vec<LoadSpec> = cells.iter().map(|c| c.load_spec(None, Protocol::Rest, None).unwrap()).collect();
    let ends: Vec<_> = specs.iter().map(|s| (s.target.as_str(), s.calls, s.duration)).collect();
    let second = Some(Duration::from_secs(1));
    assert_eq!(
        ends,
        [
            ("inproc:life-run", Some(100), None),
            ("inproc:life", None, second),
            ("inproc:life-run", Some(10), None),
            ("inproc:life", None, second)
        ]
    );
    assert_eq!(cells[2].params(None)["calls"], json!(10));
    assert!(!cells[2].params(None).contains_key("duration") && cells[3].params(None).contains_key("duration"));
    let mut counted = cells[0].clone();
    counted.fields.calls = Some(7);
    let spec = counted.load_spec(None, Protocol::Rest, None).unwrap();
    assert_eq!((spec.calls, spec.duration), (Some(7), second));
}

#[test]
fn every_cell_of_an_experiment_with_a_cluster_runs_on_it() {
    let suite = Suite::parse(
        "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['rust-axum','rust-tonic']\nworkloads=['students']\n\
         concurrency=4\ncluster={ ray='10.0.0.1:6379', workers=2 }",
    )
    .unwrap();
    let cells = cells(&suite, &suite.experiments[0]).unwrap();
    assert_eq!(cells.len(), 2);
    for c in &cells {
        assert_eq!(
            c.cluster,
            Some(ClusterSpec { ray: "10.0.0.1:6379".into(), workers: 2, server_host: None, skew_limit: None })
        );
        assert_eq!(c.params(None)["cluster"], json!("2 workers of the Ray cluster at 10.0.0.1:6379"));
    }
}

#[test]
fn every_client_gets_the_same_cells_labelled_with_its_name() {
    let suite = Suite::parse(
        "name='t'\n[[experiment]]\nid='e'\ntitle='e'\nservers=['rust-actix', 'rust-tonic']\nworkloads=['students']\n\
         duration='1s'\nclients=['callbench', 'wrk']",
    )
    .unwrap();
    let cells = cells(&suite, &suite.experiments[0]).unwrap();
    let ids: Vec<&str> = cells.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "e/students/callbench+rust-actix",
            "e/students/wrk+rust-actix",
            "e/students/callbench+rust-tonic",
            "e/students/wrk+rust-tonic"
        ]
    );
    assert_eq!((&cells[0].kind, &cells[1].kind), (&CellKind::Load, &CellKind::Peer("wrk".into())));
    assert_eq!(cells[1].params(None)["client"], json!("wrk"));
    // Without clients: callbench's engine, and the ids of every suite before clients existed.
    let plain = Suite::parse("name='t'\n[[experiment]]\nid='e'\ntitle='e'\nservers=['rust-actix']\nworkloads=['auth']")
        .unwrap();
    let plain_cells = super::cells(&plain, &plain.experiments[0]).unwrap();
    assert_eq!((plain_cells[0].id.as_str(), plain_cells[0].params(None).get("client")), ("e/auth/rust-actix", None));
}

#[test]
fn a_swept_network_key_is_recorded_as_written_and_charted_in_milliseconds() {
    let suite = Suite::parse(
        "name='t'\n[[experiment]]\nid='e'\ntitle='e'\nservers=['rust-actix']\nworkloads=['auth']\n\
         calls=10\nnetwork={ bandwidth='20mbit' }\nsweep={ param='rtt', values=['10ms', '1s'] }",
    )
    .unwrap();
    let cells = cells(&suite, &suite.experiments[0]).unwrap();
    assert_eq!(cells.iter().map(|c| c.x).collect::<Vec<_>>(), [Some(10.0), Some(1000.0)]);
    let params = cells[0].params(None);
    assert_eq!(params["rtt"], json!("10ms"));
    assert_eq!(params["calls"], json!(10)); // a load setting keeps its own record
}

#[test]
fn the_warm_up_round_runs_a_timed_cell_for_its_warm_up_and_a_counted_one_whole() {
    let suite = Suite::parse(
        "name='x'\n[defaults]\nduration='1s'\nwarmup='200ms'\n[[experiment]]\nid='a'\ntitle='t'\n\
         servers=['rust-actix', 'inproc']\nworkloads=['auth']\n\
         [[experiment]]\nid='b'\ntitle='t'\nservers=['rust-actix']\nworkloads=['auth']\ncalls=10",
    )
    .unwrap();
    let timed = cells(&suite, &suite.experiments[0]).unwrap();
    let (actix, inproc) = (&timed[0], &timed[1]);
    assert!(actix.in_warm_up_round() && !inproc.in_warm_up_round());
    let spec = actix.warm_up_round().load_spec(None, Protocol::Rest, None).unwrap();
    let warmup = Duration::from_millis(200);
    assert_eq!((spec.duration, spec.warmup, spec.calls), (Some(warmup), warmup, None));
    let mut unwarmed = actix.clone();
    unwarmed.fields.warmup = Some("0s".into());
    assert_eq!(unwarmed.warm_up_round().fields.duration.as_deref(), Some("1s"));
    let counted = &cells(&suite, &suite.experiments[1]).unwrap()[0];
    let spec = counted.warm_up_round().load_spec(None, Protocol::Rest, None).unwrap();
    assert_eq!((spec.calls, spec.warmup), (Some(10), warmup));
}
