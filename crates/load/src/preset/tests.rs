use super::*;

#[test]
fn the_in_process_users_file_is_in_the_users_cache_never_in_tmp() {
    let os = |s: &str| Some(std::ffi::OsString::from(s));
    let file = |xdg, home| users_file_in(xdg, home).map(|p| p.display().to_string());
    assert_eq!(file(os("/c"), os("/h")), Ok("/c/callbench/users.json".into()));
    assert_eq!(file(None, os("/h")), Ok("/h/.cache/callbench/users.json".into()));
    // A relative XDG_CACHE_HOME is to be ignored (XDG Base Directory specification).
    assert_eq!(file(os("rel"), os("/h")), Ok("/h/.cache/callbench/users.json".into()));
    assert!(file(None, None).unwrap_err().contains("set HOME"));
}

#[test]
fn every_preset_checks_its_own_reference_answer() {
    let o = PresetOptions { payload_size: 300, ntimes: 3, user_id: 7, records: 5 };
    for name in NAMES.iter().filter(|n| **n != "noop" && !n.starts_with("records-")) {
        let p = preset(name, &o).unwrap();
        let method = p.contract_method();
        let answer_json = serde_json::to_vec(&p.answer).unwrap();
        assert!(p.http_check(&method).unwrap()(&answer_json), "{name}");
        assert!(!p.http_check(&method).unwrap()(b"{}") || p.answer == json!({}), "{name}");
        let answer_pb = message_from_rest(&method.output(), &p.answer).unwrap().encode_to_vec();
        assert!(p.grpc_check(&method).unwrap()(&answer_pb), "{name}");
        assert!(p.grpc_message(&method).is_ok(), "{name}");
    }
    assert!(matches!(preset("nope", &o), Err(LoadError::Settings(m)) if m.contains("workloads: auth")));
    assert!(preset("noop", &o).is_err());
}

#[tokio::test]
async fn a_runs_calls_send_its_boards_in_turn_and_each_answer_is_checked_against_its_own() {
    let o = PresetOptions { ntimes: 1000, ..PresetOptions::default() };
    let p = preset("life-run", &o).unwrap();
    let run = p.run.as_ref().unwrap();
    assert_eq!((run.boards.len(), p.in_turn()), (11, Some(10)));
    let CallData::InTurn(requests) = p.http_data("", |r| r) else { panic!("in turn") };
    let sent: life::StepRequest = serde_json::from_slice(&requests[3].body).unwrap();
    assert_eq!((sent.board.as_slice(), sent.ntimes), (run.boards[3].as_slice(), 1000));
    let method = p.contract_method();
    let CallData::InTurn(messages) = p.grpc_data(&method).unwrap() else { panic!("in turn") };
    assert_eq!(messages.len(), 10);
    let answer = |i: usize| serde_json::to_vec(&life::Board { board: run.boards[i].clone() }).unwrap();
    let (rest, grpc) = (p.http_check(&method).unwrap(), p.grpc_check(&method).unwrap());
    let pb = |i: usize| {
        let v: Value = serde_json::from_slice(&answer(i)).unwrap();
        message_from_rest(&method.output(), &v).unwrap().encode_to_vec()
    };
    for call in [3u64, 13] {
        let turn = Turn { call, caller: 0 };
        assert!(turn.scope(async { rest(&answer(4)) && grpc(&pb(4)) }).await, "call {call}");
        assert!(!turn.scope(async { rest(&answer(3)) || grpc(&pb(5)) }).await, "another call's answer");
    }
}

#[test]
fn answers_are_compared_as_messages_and_the_first_good_one_remembered() {
    let o = PresetOptions { payload_size: 300, ntimes: 3, user_id: 7, records: 5 };
    let p = preset("auth", &o).unwrap();
    let method = p.contract_method();
    let check = p.grpc_check(&method).unwrap();
    let pb = message_from_rest(&method.output(), &p.answer).unwrap().encode_to_vec();
    // The same fields twice: not the canonical bytes, the same message (the last value wins).
    assert!(check(&[pb.clone(), pb.clone()].concat()));
    let mut other = pb.clone();
    *other.last_mut().unwrap() ^= 1;
    assert!(!check(&other), "a different answer");
    assert!(!check(&pb[..pb.len() - 1]), "a cut answer");
    assert!(check(&pb), "the canonical bytes, after another encoding was remembered");
    let rest = p.http_check(&method).unwrap();
    let hash = p.answer["hash"].as_str().unwrap();
    let spaced = format!("{{ \"hash\" : \"{hash}\" }}");
    for _ in 0..2 {
        assert!(rest(spaced.as_bytes()), "another spelling of the same JSON, first parsed, then remembered");
    }
    assert!(!rest(format!("{{\"hash\":\"{}\"}}", &hash[1..]).as_bytes()));
    assert!(!rest(b"not json"));
}

#[test]
fn the_records_presets_stream_their_records_and_check_what_comes_back() {
    let o = PresetOptions { records: 3, ..PresetOptions::default() };
    let upload = preset("records-upload", &o).unwrap();
    let request = upload.http_request("/api");
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/api/records/upload"));
    assert!(request.has_header("content-type") && request.body.iter().filter(|b| **b == b'\n').count() == 3);
    let method = upload.contract_method();
    assert_eq!(upload.grpc_messages(&method).unwrap().len(), 3);
    let summary = br#"{"count": 3, "activeCount": 2, "firstId": 1, "lastId": 3, "sampleCount": 9}"#;
    assert!(upload.http_check(&method).unwrap()(summary));
    assert!(!upload.http_check(&method).unwrap()(br#"{"count": 2}"#));
    let batch = preset("records-batch", &o).unwrap();
    assert_eq!(batch.http_request("").body, serde_json::to_vec(batch.body.as_ref().unwrap()).unwrap());
    assert!(batch.http_check(&batch.contract_method()).unwrap()(summary));

    let download = preset("records-download", &o).unwrap();
    let method = download.contract_method();
    assert_eq!(download.http_request("").path, "/records?count=3");
    let lines: Vec<Value> = (0..3).map(|i| value(&records::downloaded(i))).collect();
    let body = ndjson(&lines);
    assert!(download.http_check(&method).unwrap()(&body));
    assert!(!download.http_check(&method).unwrap()(&body[..body.len() - 1]), "the last newline is missing");
    assert!(!download.http_check(&method).unwrap()(&ndjson(&lines[..2])), "a line is missing");
    let first = message_from_rest(&method.output(), &lines[0]).unwrap().encode_to_vec();
    assert!(download.grpc_check(&method).unwrap()(&first));
    assert_eq!(download.grpc_answer_count(), Some(3));

    let converse = preset("records-converse", &o).unwrap();
    assert!(converse.no_rest().is_some());
    assert_eq!(converse.grpc_messages(&converse.contract_method()).unwrap().len(), 3);
    assert_eq!(converse.grpc_answer_count(), Some(3));
    let in_process = inproc("records-upload", &o, Path::new("/nonexistent"));
    assert!(matches!(in_process, Err(LoadError::Settings(m)) if m.contains("network only")));
}
