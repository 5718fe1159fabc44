use super::*;

#[test]
fn the_default_suite_parses() {
    let suite = Suite::parse(DEFAULT_SUITE).unwrap();
    assert!(suite.experiments.len() >= 4);
}

#[test]
fn a_cluster_splits_calls_of_the_engine_to_servers_only() {
    let suite = |servers: &str, extra: &str| {
        Suite::parse(&format!(
            "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=[{servers}]\nworkloads=['students']\n{extra}"
        ))
    };
    let cluster = "cluster = { ray = '10.0.0.1:6379', workers = 2 }";
    let ok = suite("'rust-axum'", &format!("concurrency = 4\n{cluster}")).unwrap();
    assert_eq!(
        ok.experiments[0].cluster,
        Some(ClusterSpec { ray: "10.0.0.1:6379".into(), workers: 2, server_host: None, skew_limit: None })
    );
    let remote =
        |host: &str| ClusterSpec { server_host: Some(host.into()), ..ok.experiments[0].cluster.clone().unwrap() };
    let limit = ClusterSpec { skew_limit: Some("100ms".into()), ..ok.experiments[0].cluster.clone().unwrap() };
    assert_eq!(
        (limit.skew_limit_ms(), ok.experiments[0].cluster.as_ref().unwrap().skew_limit_ms()),
        (Some(100.0), None)
    );
    assert_eq!(remote("10.0.0.5").remote_server_host(), Some("10.0.0.5"));
    assert_eq!(remote("127.0.0.1").remote_server_host(), None);
    assert_eq!(remote("10.0.0.5").to_string(), "2 workers of the Ray cluster at 10.0.0.1:6379, servers at 10.0.0.5");
    for (servers, extra, needle) in [
        ("'inproc'", format!("concurrency = 4\n{cluster}"), "in-process"),
        ("'rust-axum'", cluster.to_string(), "concurrency 1 cannot be split"),
        (
            "'rust-axum'",
            format!("concurrency = 4\nduration = '1s'\nclients = ['wrk']\n{cluster}"),
            "callbench's engine",
        ),
        ("'rust-axum'", format!("concurrency = 4\nnetwork = {{ rtt = '10ms' }}\n{cluster}"), "emulated network"),
        ("'rust-axum'", "concurrency = 4\ncluster = { ray = 'head', workers = 2 }".into(), "HOST:PORT"),
        ("'rust-axum'", "concurrency = 4\ncluster = { ray = 'h:1', workers = 0 }".into(), "at least 1"),
        ("'rust-axum'", "concurrency = 4\ncluster = { ray = 'h:1', nodes = 2 }".into(), "nodes"),
        (
            "'rust-axum'",
            "concurrency = 4\ncluster = { ray = 'h:1', workers = 2, server_host = 'myhost' }".into(),
            "IP address",
        ),
        (
            "'rust-axum'",
            "concurrency = 4\ncluster = { ray = 'h:1', workers = 2, skew_limit = '5 parsecs' }".into(),
            "skew_limit",
        ),
    ] {
        let err = suite(servers, &extra).unwrap_err().to_string();
        assert!(err.contains(needle), "{extra}: {err}");
    }
}

#[test]
fn bad_suites_get_one_line_errors() {
    let cases = [
            ("name = 'x'", "experiment"),
            ("name = 'x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=[]\nworkloads=['auth']", "needs servers"),
            ("name = 'x'\n[[experiment]]\nid='a b'\ntitle='t'\nservers=['inproc']\nworkloads=['auth']", "letters"),
            ("name = 'x'\nfoo = 1\n[[experiment]]\nid='a'\ntitle='t'\nservers=['inproc']\nworkloads=['a']", "foo"),
            (
                "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['inproc']\nworkloads=['a']\nsweep={param='speed',values=[1]}",
                "cannot sweep",
            ),
        ];
    for (text, expected) in cases {
        let e = Suite::parse(text).unwrap_err().to_string();
        assert!(e.contains(expected), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn clients_are_known_tools_that_call_servers_for_a_time() {
    let suite = |clients: &str, extra: &str| {
        Suite::parse(&format!(
            "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['rust-actix'{extra}]\nworkloads=['students']\n\
                 duration='1s'\nclients={clients}"
        ))
    };
    assert_eq!(suite("['callbench', 'wrk', 'locust-grpc']", "").unwrap().experiments[0].clients.len(), 3);
    for (clients, extra, says) in [
        ("['jmeter']", "", "unknown client 'jmeter'"),
        ("['wrk', 'wrk']", "", "named twice"),
        ("['wrk']", ", 'inproc'", "in-process"),
    ] {
        let e = suite(clients, extra).unwrap_err().to_string();
        assert!(e.contains(says) && e.starts_with("experiment 'a': "), "{e}");
    }
    let by_calls = Suite::parse(
            "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['rust-actix']\nworkloads=['auth']\ncalls=10\nclients=['hey']",
        );
    assert!(by_calls.unwrap_err().to_string().contains("hey runs for a duration: set duration"));
    // The seed articles' clients make a count of calls, also one swept.
    let counted = |load: &str| {
        Suite::parse(&format!(
            "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['java-grpc']\nworkloads=['cars']\n{load}\n\
             clients=['seed003-java']"
        ))
    };
    assert!(counted("calls=10").is_ok());
    assert!(counted("sweep={param='calls', values=[10, 20]}").is_ok());
}

#[test]
fn a_server_stall_is_a_pause_and_its_period() {
    let text = |stall: &str| {
        format!("name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['rust-actix']\nworkloads=['auth']\nserver_stall='{stall}'")
    };
    assert_eq!(
        Suite::parse(&text("50ms every 1s")).unwrap().experiments[0].server_stall.as_deref(),
        Some("50ms every 1s")
    );
    let e = Suite::parse(&text("1s every 50ms")).unwrap_err().to_string();
    assert!(e.starts_with("experiment 'a': server_stall '1s every 50ms': ") && e.contains("shorter"), "{e}");
}

#[test]
fn a_network_is_a_table_or_a_spec_and_its_keys_can_be_swept() {
    let text = "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['rust-axum']\nworkloads=['auth']\n\
                    network={ rtt='40ms', bandwidth='20mbit', loss=0.0 }\nsweep={param='rtt',values=['10ms','100ms']}";
    let suite = Suite::parse(text).unwrap();
    let e = &suite.experiments[0];
    assert_eq!(e.load.network, Some(LinkSpec::parse("rtt=40ms,bandwidth=20mbit").unwrap()));
    let mut fields = e.load.clone();
    fields.set("rtt", &toml::Value::String("100ms".into())).unwrap();
    assert_eq!(fields.network, Some(LinkSpec::parse("rtt=100ms,bandwidth=20mbit").unwrap()));
    let mut plain = LoadFields::default();
    plain.set("loss", &toml::Value::Float(0.01)).unwrap();
    assert_eq!(plain.network, Some(LinkSpec::parse("loss=0.01").unwrap()));
    for (bad, expected) in [("network='rtt=-1ms'", "rtt"), ("network={ speed='1' }", "speed")] {
        let text = format!("name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['x']\nworkloads=['auth']\n{bad}");
        let e = Suite::parse(&text).unwrap_err().to_string();
        assert!(e.contains(expected) && !e.contains('\n'), "{e}");
    }
    let sweep = "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['x']\nworkloads=['auth']\n\
                     sweep={param='loss',values=[2.0]}";
    assert!(Suite::parse(sweep).unwrap_err().to_string().contains("loss"));
}

#[test]
fn io_names_what_drives_the_sockets_and_can_be_swept() {
    let suite = |extra: &str| {
        format!("name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['rust-actix']\nworkloads=['auth']\n{extra}")
    };
    assert!(Suite::parse(&suite("io = 'uring'")).is_ok());
    let e = Suite::parse(&suite("io = 'kqueue'")).unwrap_err().to_string();
    assert!(e.contains("experiment 'a': io: unknown I/O interface"), "{e}");
    let mut f = LoadFields::default();
    f.set("io", &toml::Value::String("auto".into())).unwrap();
    assert_eq!(f.io.as_deref(), Some("auto"));
    let e = f.set("io", &toml::Value::String("select".into())).unwrap_err();
    assert!(e.starts_with("sweep io: unknown I/O interface"), "{e}");
}

#[test]
fn experiment_fields_override_defaults() {
    let a = LoadFields { concurrency: Some(50), ..Default::default() };
    let b = LoadFields { concurrency: Some(1), duration: Some("2s".into()), ..Default::default() };
    let merged = a.over(&b);
    assert_eq!(merged.concurrency, Some(50));
    assert_eq!(merged.duration.as_deref(), Some("2s"));
}

#[test]
fn durations_are_checked_when_the_suite_is_read_and_the_warm_up_can_be_swept() {
    let suite = |extra: &str| {
        format!("name='x'\n[defaults]\nwarmup='100ms'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['rust-actix']\nworkloads=['auth']\n{extra}")
    };
    let swept = Suite::parse(&suite("sweep={param='warmup',values=['50ms','150ms']}")).unwrap();
    let cells = crate::plan::cells(&swept, &swept.experiments[0]).unwrap();
    let warm_ups: Vec<_> = cells.iter().map(|c| c.fields.warmup.as_deref()).collect();
    assert_eq!(warm_ups, [Some("50ms"), Some("150ms")]);
    for (extra, expected) in [
        ("duration='soon'", "experiment 'a': duration: "),
        ("warmup='abc'", "experiment 'a': warmup: "),
        ("timeout='never'", "experiment 'a': timeout: "),
        ("sweep={param='warmup',values=['50ms','abc']}", "experiment 'a': sweep warmup: "),
        ("sweep={param='duration',values=['1x']}", "experiment 'a': sweep duration: "),
    ] {
        let e = Suite::parse(&suite(extra)).unwrap_err().to_string();
        assert!(e.contains(expected) && !e.contains('\n'), "{extra}: {e}");
    }
    let e = Suite::parse(&suite("").replace("'100ms'", "'forever'")).unwrap_err().to_string();
    assert!(e.contains("experiment 'a': warmup: "), "{e}");
}
