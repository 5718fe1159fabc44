use super::*;

#[test]
fn the_default_spec_is_what_the_flags_give_when_none_is_set() {
    let d = LoadSpec::default();
    assert_eq!((d.timeout(), d.warmup, d.seed, d.threads), (Some(Duration::from_secs(20)), Duration::ZERO, 1, 1));
    assert_eq!((d.preset.payload_size, d.preset.ntimes, d.preset.user_id), (1000, 1, 4242));
    assert!(!d.coarse_timer && d.concurrency.is_none() && d.users_file.is_none());
    assert_eq!(d.stop().calls, Some(DEFAULT_CALLS));
}

#[test]
fn a_spec_written_as_flags_parses_back_to_itself() {
    #[derive(clap::Parser)]
    struct Flags {
        #[command(flatten)]
        spec: LoadSpec,
    }
    let parse = |flags: Vec<String>| {
        <Flags as clap::Parser>::try_parse_from(std::iter::once("load".to_string()).chain(flags))
            .unwrap_or_else(|e| panic!("{e}"))
            .spec
    };
    let full = parse(
        "grpcs://127.0.0.1:9/x -c 7 -n 100 -z 2.5s --warmup 300ms --rate 99.5 --poisson --seed 3 \
         --connections 2 --streams 4 -X PUT -H a:b -d {} --http2 --workload auth --payload-size 10 --ntimes 2 \
         --user-id 7 --gzip -k --tls-version 1.2 --tls-resume --timeout 3s --connect-timeout 2s --ramp 1s \
         --expect-status 200,204 \
         --expect-body ok --check --threads 2 --io uring --allow-remote --coarse-timer --new-connection-per-call \
         --template --http-rule a.B/C --resolve-once"
            .split_whitespace()
            .map(String::from)
            .collect(),
    );
    let dashes = LoadSpec {
        target: "http://127.0.0.1:9/".into(),
        data: Some("-z".into()),
        headers: vec![("x".into(), "--y".into())],
        expect_body: Some("--".into()),
        ..LoadSpec::default()
    };
    let dashed_target = LoadSpec { target: "--".into(), ..LoadSpec::default() };
    let lines = LoadSpec { data_lines: Some("calls.ndjson".into()), ..LoadSpec::default() };
    for spec in [LoadSpec { target: "inproc:noop".into(), ..LoadSpec::default() }, full, dashes, dashed_target, lines] {
        assert_eq!(format!("{:?}", parse(spec.to_flags())), format!("{spec:?}"));
    }
}

#[test]
fn the_planned_length_is_the_duration_or_the_shape_plus_the_warmup() {
    let secs = Duration::from_secs_f64;
    let warm = Duration::from_millis(500);
    let timed = LoadSpec { duration: Some(secs(2.0)), warmup: warm, ..LoadSpec::default() };
    assert_eq!(timed.planned_length(), Some(secs(2.5)));
    let shaped = LoadSpec { rate_shape: Some("0..10@1s,10@2s".into()), ..LoadSpec::default() };
    assert_eq!(shaped.planned_length(), Some(secs(3.0)));
    assert_eq!(LoadSpec { calls: Some(10), ..LoadSpec::default() }.planned_length(), None);
}

#[test]
fn a_segment_gets_its_share_of_the_calls_the_callers_and_the_rate() {
    let third = |i: u64| LoadSpec {
        calls: Some(1001),
        rate: Some(300.0),
        segment: Some(format!("{i}/3:{}/3", i + 1)),
        ..LoadSpec::default()
    };
    let calls: Vec<u64> = (0..3).map(|i| third(i).stop().calls.unwrap()).collect();
    assert_eq!(calls, vec![333, 334, 334]);
    let callers: Vec<usize> = (0..3).map(|i| third(i).split(50, "-c").unwrap()).collect();
    assert_eq!(callers, vec![16, 17, 17]);
    assert!(matches!(third(0).split(2, "-c"), Err(LoadError::Settings(m)) if m.contains("gets none of them")));
    let plan = third(1).plan(17, None, Arc::default()).unwrap();
    let second = Duration::from_secs(1);
    assert_eq!(plan.pacer_kind.pacer().requested_calls(Duration::ZERO, second), Some(100.0));
    let whole = LoadSpec { rate: Some(300.0), ..LoadSpec::default() }.plan(1, None, Arc::default()).unwrap();
    assert_eq!(whole.pacer_kind.pacer().requested_calls(Duration::ZERO, second), Some(300.0));
}

#[test]
fn single_flags_out_of_range_are_one_line_errors() {
    for (change, message) in [
        (Box::new(|s: &mut LoadSpec| s.concurrency = Some(0)) as Box<dyn Fn(&mut LoadSpec)>, "-c must be at least 1"),
        (Box::new(|s: &mut LoadSpec| s.calls = Some(0)), "-n must be at least 1"),
        (Box::new(|s: &mut LoadSpec| s.duration = Some(Duration::ZERO)), "-z must be longer than 0"),
        (Box::new(|s: &mut LoadSpec| s.streams = Some(0)), "--connections and --streams must be at least 1"),
        (Box::new(|s: &mut LoadSpec| s.threads = 0), "--threads must be at least 1"),
    ] {
        let mut spec = LoadSpec::default();
        change(&mut spec);
        assert_eq!(spec.validate(), Err(LoadError::Settings(message.to_string())));
    }
    assert_eq!(LoadSpec::default().validate(), Ok(()));
    for (segment, stripes, message) in [
        (Some("1/2"), None, "a segment is FROM:TO"),
        (Some("2/3:1/3"), None, "from a lower to a higher fraction"),
        (Some("0:1/2"), Some(3), "must be a multiple of 2"),
        (None, Some(2), "--segment-stripes goes with --segment"),
    ] {
        let spec = LoadSpec { segment: segment.map(String::from), segment_stripes: stripes, ..LoadSpec::default() };
        let error = spec.validate().unwrap_err();
        assert!(matches!(&error, LoadError::Settings(m) if m.contains(message)), "{segment:?} {stripes:?}: {error}");
    }
    let never = LoadSpec { timeout: Duration::ZERO, ..LoadSpec::default() };
    assert_eq!(never.timeout(), None, "--timeout 0: never");
}
