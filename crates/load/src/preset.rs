//! The built-in workloads as ready-made calls (`--workload`, `inproc:<name>`): the same request for
//! every protocol, and the answer the reference implementation gives, to check calls against.

use crate::error::LoadError;
use bytes::Bytes;
use callbench_contract::rest_json::{message_from_rest, same_message};
use callbench_engine::call_data::{CallData, Turn};
use callbench_engine::inproc::Workload;
use callbench_engine::request::{BodyCheck, HttpRequest};
use callbench_workloads::{auth, cars, echo, life, records, students};
use prost::Message;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const NAMES: &[&str] = &[
    "auth",
    "students",
    "cars",
    "life",
    "life-setup",
    "life-run",
    "echo",
    "records-upload",
    "records-batch",
    "records-converse",
    "records-download",
    "noop",
];

/// What the built-in workloads' requests are made of (flags of `callbench load`).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct PresetOptions {
    /// echo: about this many bytes of JSON per message
    #[arg(long, default_value_t = 1000)]
    pub payload_size: usize,
    /// life, life-run: generations computed per call
    #[arg(long, default_value_t = 1)]
    pub ntimes: u32,
    /// auth: the user id to authenticate
    #[arg(long, default_value_t = 4242)]
    pub user_id: i64,
    /// records-*: records per call (the messages of a stream, the lines of an upload or download)
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub records: u32,
}

impl Default for PresetOptions {
    /// The flags' defaults.
    fn default() -> Self {
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            preset: PresetOptions,
        }
        <Flags as clap::Parser>::try_parse_from(["preset"]).expect("the flags' defaults parse").preset
    }
}

/// One workload's call: the REST request and answer, and the gRPC method, request and answer (all
/// as REST JSON; gRPC messages are made from it by the contract's mapping).
#[derive(Debug)]
pub struct Preset {
    pub name: &'static str,
    pub method: &'static str,
    pub path: String,
    pub body: Option<Value>,
    pub answer: Value,
    pub grpc_method: &'static str,
    pub grpc_request: Value,
    /// What a streaming workload sends and answers instead (records-*).
    pub stream: Option<Streams>,
    /// The boards of a run sent in turn instead of one request (life-run); `body`, `grpc_request`
    /// and `answer` are its first call's.
    pub run: Option<LifeRun>,
}

/// One run of seed 004's step rows: call `i` steps `boards[i]` by `ntimes` generations and must
/// answer `boards[i + 1]` (`life::run_boards`).
#[derive(Debug, Clone)]
pub struct LifeRun {
    pub ntimes: u32,
    pub boards: Arc<Vec<Vec<life::Cell>>>,
}

impl LifeRun {
    /// Its calls' requests, as REST JSON (each made when it is needed: a run of step(1) has 10,000).
    fn requests(&self) -> impl Iterator<Item = Value> + '_ {
        let calls = self.boards.len() - 1;
        self.boards[..calls].iter().map(|b| value(&life::StepRequest { ntimes: self.ntimes, board: b.clone() }))
    }

    /// The answer the current call must get (see `Turn::current`), as REST JSON.
    fn answer(&self) -> Value {
        let calls = (self.boards.len() - 1) as u64;
        let i = (Turn::current().call % calls) as usize;
        value(&life::Board { board: self.boards[i + 1].clone() })
    }
}

/// A streaming workload's parts that replace a preset's one request or one answer; each `None`
/// leaves the preset's own.
#[derive(Debug, Default)]
pub struct Streams {
    /// REST: the request body as NDJSON lines (`application/x-ndjson`) instead of `body`.
    pub body_lines: Option<Vec<Value>>,
    /// REST: the answer as NDJSON lines instead of `answer`.
    pub answer_lines: Option<Vec<Value>>,
    /// gRPC: a client or bidi stream's request messages instead of `grpc_request`.
    pub grpc_requests: Option<Vec<Value>>,
    /// gRPC: a server or bidi stream's answer messages instead of `answer` (the first is
    /// checked, all are counted).
    pub grpc_answers: Option<Vec<Value>>,
    /// Why the workload has no REST call.
    pub no_rest: Option<&'static str>,
}

/// The workload called `name` with the options' values; an unknown name, or options it cannot
/// take, are settings errors.
pub fn preset(name: &str, o: &PresetOptions) -> Result<Preset, LoadError> {
    preset_of(name, o).map_err(LoadError::Settings)
}

fn preset_of(name: &str, o: &PresetOptions) -> Result<Preset, String> {
    let ok = |r: Result<Value, callbench_workloads::WorkloadError>| r.map_err(|e| format!("workload {name}: {e}"));
    Ok(match name {
        "auth" => {
            let password = format!("password-{}", o.user_id);
            let hash = auth::sha512_hex(&password);
            Preset {
                name: "auth",
                method: "PUT",
                path: format!("/auth/{}", o.user_id),
                body: Some(json!({ "password": password })),
                answer: json!({ "hash": hash }),
                grpc_method: "callbench.v1.Auth/Test",
                grpc_request: json!({ "id": o.user_id, "password": password }),
                stream: None,
                run: None,
            }
        }
        "students" => Preset {
            name: "students",
            method: "GET",
            path: "/students".into(),
            body: None,
            answer: value(&students::list()),
            grpc_method: "callbench.v1.Students/List",
            grpc_request: json!({}),
            stream: None,
            run: None,
        },
        "cars" => {
            let message = json!({
                "car": {"make": "toyota", "model": "corolla", "trim": "4DR Sedan", "color": "gray", "year": 2012, "mileage": 120000},
                "driver": {"firstname": "John", "lastname": "Smith", "driverId": "someId"}
            });
            let parsed: cars::CarMessage = serde_json::from_value(message.clone()).expect("valid car");
            let answer = ok(cars::send(parsed).map(|m| value(&m)))?;
            Preset {
                name: "cars",
                method: "POST",
                path: "/cars".into(),
                body: Some(message.clone()),
                answer,
                grpc_method: "callbench.v1.Cars/Send",
                grpc_request: message,
                stream: None,
                run: None,
            }
        }
        "life" => {
            let board = life::setup().board;
            let answer = ok(life::step(&board, o.ntimes).map(|b| value(&b)))?;
            let request = value(&life::StepRequest { ntimes: o.ntimes, board });
            Preset {
                name: "life",
                method: "POST",
                path: "/life/step".into(),
                body: Some(request.clone()),
                answer,
                grpc_method: "callbench.v1.Life/Step",
                grpc_request: request,
                stream: None,
                run: None,
            }
        }
        "life-run" => {
            let boards = life::run_boards(o.ntimes).map_err(|e| format!("workload {name}: {e}"))?;
            let request = value(&life::StepRequest { ntimes: o.ntimes, board: boards[0].clone() });
            Preset {
                name: "life-run",
                method: "POST",
                path: "/life/step".into(),
                body: Some(request.clone()),
                answer: value(&life::Board { board: boards[1].clone() }),
                grpc_method: "callbench.v1.Life/Step",
                grpc_request: request,
                stream: None,
                run: Some(LifeRun { ntimes: o.ntimes, boards: Arc::new(boards) }),
            }
        }
        "life-setup" => Preset {
            name: "life-setup",
            method: "GET",
            path: "/life/setup".into(),
            body: None,
            answer: value(&life::setup()),
            grpc_method: "callbench.v1.Life/Setup",
            grpc_request: json!({}),
            stream: None,
            run: None,
        },
        "echo" => {
            let message = value(&echo::payload(echo::records_for_json_bytes(o.payload_size)));
            Preset {
                name: "echo",
                method: "POST",
                path: "/echo".into(),
                body: Some(message.clone()),
                answer: message.clone(),
                grpc_method: "callbench.v1.Echo/Echo",
                grpc_request: message,
                stream: None,
                run: None,
            }
        }
        name if name.starts_with("records-") => return records_preset(name, o),
        "noop" => return Err("workload noop exists only in-process (inproc:noop)".into()),
        other => return Err(format!("unknown workload {other:?} (workloads: {})", NAMES.join(", "))),
    })
}

/// The records workloads: `o.records` records (the contract's download rule makes them) sent in
/// one call, as a client stream, a batched POST or an NDJSON upload; talked over one by one; or
/// downloaded.
fn records_preset(name: &str, o: &PresetOptions) -> Result<Preset, String> {
    let n = o.records as usize;
    let list: Vec<Value> = (0..n).map(|i| value(&records::downloaded(i))).collect();
    let summary = || {
        let made: Vec<_> = (0..n).map(records::downloaded).collect();
        value(&records::UploadSummary::of(&made).expect("downloaded records are valid"))
    };
    let upload = |method, path: &str, body, body_lines| Preset {
        name: if path == "/records/batch" { "records-batch" } else { "records-upload" },
        method,
        path: path.into(),
        body,
        answer: summary(),
        grpc_method: "callbench.v1.Records/Upload",
        grpc_request: json!({}),
        stream: Some(Streams { body_lines, grpc_requests: Some(list.clone()), ..Streams::default() }),
        run: None,
    };
    Ok(match name {
        "records-upload" => upload("POST", "/records/upload", None, Some(list.clone())),
        "records-batch" => upload("POST", "/records/batch", Some(json!({ "records": list })), None),
        "records-converse" => {
            let messages: Vec<Value> = list.iter().map(|r| json!({ "records": [r] })).collect();
            Preset {
                name: "records-converse",
                method: "POST",
                path: String::new(),
                body: None,
                answer: json!({}),
                grpc_method: "callbench.v1.Records/Converse",
                grpc_request: json!({}),
                stream: Some(Streams {
                    grpc_requests: Some(messages.clone()),
                    grpc_answers: Some(messages),
                    no_rest: Some("REST has no counterpart of Records/Converse (HTTP/1.1 has no full-duplex call)"),
                    ..Streams::default()
                }),
                run: None,
            }
        }
        "records-download" => Preset {
            name: "records-download",
            method: "GET",
            path: format!("/records?count={n}"),
            body: None,
            answer: json!({}),
            grpc_method: "callbench.v1.Records/Download",
            grpc_request: json!({ "count": n }),
            stream: Some(Streams { answer_lines: Some(list.clone()), grpc_answers: Some(list), ..Streams::default() }),
            run: None,
        },
        other => return Err(format!("unknown workload {other:?} (workloads: {})", NAMES.join(", "))),
    })
}

fn value(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).expect("workload types serialise")
}

impl Preset {
    /// The REST request, under `prefix` (the target URL's path, e.g. `/api`).
    pub fn http_request(&self, prefix: &str) -> HttpRequest {
        let mut request = HttpRequest::get(&format!("{}{}", prefix.trim_end_matches('/'), self.path));
        request.method = self.method.into();
        if let Some(body) = &self.body {
            request.body = Bytes::from(serde_json::to_vec(body).expect("JSON"));
        }
        if let Some(lines) = self.stream.as_ref().and_then(|s| s.body_lines.as_ref()) {
            request.body = Bytes::from(ndjson(lines));
            request.headers.push(("content-type".into(), "application/x-ndjson".into()));
        }
        request
    }

    /// The REST requests of the calls, under `prefix`, each passed through `finish` (the flags'
    /// headers): one, or a run's in turn.
    pub fn http_data(&self, prefix: &str, finish: impl Fn(HttpRequest) -> HttpRequest) -> CallData<HttpRequest> {
        let Some(run) = &self.run else { return CallData::One(finish(self.http_request(prefix))) };
        let mut one = self.http_request(prefix);
        CallData::InTurn(
            run.requests()
                .map(|body| {
                    one.body = Bytes::from(serde_json::to_vec(&body).expect("JSON"));
                    finish(one.clone())
                })
                .collect(),
        )
    }

    /// The gRPC calls' request messages, encoded: one call's, or a run's in turn.
    pub fn grpc_data(&self, method: &MethodDescriptor) -> Result<CallData<Vec<Vec<u8>>>, LoadError> {
        let Some(run) = &self.run else { return Ok(CallData::One(self.grpc_messages(method)?)) };
        let input = method.input();
        let messages = run.requests().map(|r| Ok(vec![message(&input, &r)?.encode_to_vec()]));
        Ok(CallData::InTurn(messages.collect::<Result<_, LoadError>>()?))
    }

    /// How many requests the calls send in turn (a run's), or None for one request.
    pub fn in_turn(&self) -> Option<usize> {
        self.run.as_ref().map(|run| run.boards.len() - 1)
    }

    /// Why this workload has no REST call, if it has none.
    pub fn no_rest(&self) -> Option<&'static str> {
        self.stream.as_ref().and_then(|s| s.no_rest)
    }

    /// The gRPC request messages, encoded: one, or a client or bidi stream's.
    pub fn grpc_messages(&self, method: &MethodDescriptor) -> Result<Vec<Vec<u8>>, LoadError> {
        match self.stream.as_ref().and_then(|s| s.grpc_requests.as_ref()) {
            Some(requests) => requests.iter().map(|r| Ok(message(&method.input(), r)?.encode_to_vec())).collect(),
            None => Ok(vec![self.grpc_message(method)?]),
        }
    }

    /// The answer messages a gRPC call must have, when its answer is a stream.
    pub fn grpc_answer_count(&self) -> Option<u64> {
        self.stream.as_ref().and_then(|s| s.grpc_answers.as_ref()).map(|a| a.len() as u64)
    }

    /// Checks a REST answer body: the same message as the reference answer.
    pub fn http_check(&self, method: &MethodDescriptor) -> Result<BodyCheck, LoadError> {
        if let Some(run) = &self.run {
            return Ok(run_check(run, method, |output, body| {
                serde_json::from_slice::<Value>(body).ok().and_then(|v| message_from_rest(output, &v).ok())
            }));
        }
        if let Some(lines) = self.stream.as_ref().and_then(|s| s.answer_lines.as_ref()) {
            return lines_check(method, lines);
        }
        let expected = message(&method.output(), &self.answer)?;
        let output = method.output();
        Ok(remembering(move |body: &[u8]| {
            serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| message_from_rest(&output, &v).ok())
                .is_some_and(|m| same_message(&m, &expected))
        }))
    }

    /// The gRPC request message, encoded.
    pub fn grpc_message(&self, method: &MethodDescriptor) -> Result<Vec<u8>, LoadError> {
        Ok(message(&method.input(), &self.grpc_request)?.encode_to_vec())
    }

    /// Checks a gRPC answer message: the same message as the reference answer (of a stream: its
    /// first message).
    pub fn grpc_check(&self, method: &MethodDescriptor) -> Result<BodyCheck, LoadError> {
        if let Some(run) = &self.run {
            return Ok(run_check(run, method, |output, bytes| DynamicMessage::decode(output.clone(), bytes).ok()));
        }
        let streamed = self.stream.as_ref().and_then(|s| s.grpc_answers.as_ref());
        let first = match streamed {
            Some(answers) => answers.first().unwrap_or(&self.answer),
            None => &self.answer,
        };
        let expected = message(&method.output(), first)?;
        let output = method.output();
        Ok(remembering(move |bytes: &[u8]| {
            DynamicMessage::decode(output.clone(), bytes).is_ok_and(|m| same_message(&m, &expected))
        }))
    }

    /// The contract's descriptor of this workload's gRPC method.
    pub fn contract_method(&self) -> MethodDescriptor {
        callbench_dynproto::find_method(callbench_contract::descriptor_pool(), self.grpc_method)
            .expect("the contract defines every preset's method")
    }
}

/// Checks a run's answer against the board its call must get, made for the call (the client's
/// CPU pays for it: a run of step(1) has 10,000 answers, too many to keep as messages).
/// The preset's JSON as a message of `desc`; one it does not fit is the target's (a method whose
/// descriptor is not the contract's).
fn message(desc: &prost_reflect::MessageDescriptor, json: &Value) -> Result<DynamicMessage, LoadError> {
    message_from_rest(desc, json).map_err(|e| LoadError::Target(e.to_string()))
}

fn run_check(
    run: &LifeRun,
    method: &MethodDescriptor,
    decode: impl Fn(&prost_reflect::MessageDescriptor, &[u8]) -> Option<DynamicMessage> + Send + Sync + 'static,
) -> BodyCheck {
    let (output, run) = (method.output(), run.clone());
    Box::new(move |body: &[u8]| {
        let expected = message_from_rest(&output, &run.answer());
        decode(&output, body).zip(expected.ok()).is_some_and(|(got, want)| same_message(&got, &want))
    })
}

/// `values` as compact JSON lines, each ending in a newline.
fn ndjson(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        serde_json::to_writer(&mut out, v).expect("JSON");
        out.push(b'\n');
    }
    out
}

/// Checks an NDJSON answer with the contract's checker: as many lines as `expected`, each ending
/// in a newline and the same message as its expected line.
fn lines_check(method: &MethodDescriptor, expected: &[Value]) -> Result<BodyCheck, LoadError> {
    let output = method.output();
    let expected = expected.iter().map(|v| message(&output, v)).collect::<Result<Vec<_>, _>>()?;
    Ok(remembering(move |body: &[u8]| callbench_contract::ndjson::check(&output, &expected, body).is_ok()))
}

/// `check`, except that an answer byte-equal to the first one it accepted is accepted at once:
/// decoding and comparing a 1 MB echo answer costs far more client CPU than comparing its bytes
/// (bench/results/code-notes-2026-12.md#checking-a-large-echo-answer), and a server sends the same
/// bytes for the same request.
fn remembering(check: impl Fn(&[u8]) -> bool + Send + Sync + 'static) -> BodyCheck {
    let accepted = std::sync::OnceLock::<Vec<u8>>::new();
    Box::new(move |body: &[u8]| {
        if accepted.get().is_some_and(|a| a.as_slice() == body) {
            return true;
        }
        let good = check(body);
        if good {
            let _ = accepted.set(body.to_vec());
        }
        good
    })
}

/// Where the in-process auth workload keeps its users.json when none is named: the user's cache
/// directory (`$XDG_CACHE_HOME/callbench`, else `~/.cache/callbench`), never a directory every user
/// may write to such as /tmp, where another could plant the file or a link in its place.
pub fn default_users_file() -> Result<PathBuf, LoadError> {
    users_file_in(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")).map_err(LoadError::Machine)
}

fn users_file_in(xdg_cache: Option<std::ffi::OsString>, home: Option<std::ffi::OsString>) -> Result<PathBuf, String> {
    let cache = xdg_cache
        .filter(|dir| Path::new(dir).is_absolute())
        .map(PathBuf::from)
        .or_else(|| home.map(|home| Path::new(&home).join(".cache")))
        .ok_or("no cache directory for the in-process users.json: set HOME (or XDG_CACHE_HOME)")?;
    Ok(cache.join("callbench").join("users.json"))
}

/// The in-process workload; `users_file` is where auth's users.json is (written if missing).
pub fn inproc(name: &str, o: &PresetOptions, users_file: &Path) -> Result<Workload, LoadError> {
    let settings = LoadError::Settings;
    Ok(match name {
        "noop" => Workload::Noop,
        "auth" => Workload::auth(users_file, o.user_id)
            .map_err(|e| LoadError::Data(format!("cannot prepare users.json: {e}")))?,
        "students" => Workload::Students,
        "cars" => {
            let message = preset("cars", o)?.body.expect("cars has a body");
            Workload::Cars(serde_json::from_value(message).expect("valid car"))
        }
        "life" => Workload::Life { board: life::setup().board, ntimes: o.ntimes },
        "life-run" => Workload::life_run(o.ntimes).map_err(|e| settings(format!("workload {name}: {e}")))?,
        "life-setup" => Workload::LifeSetup,
        "echo" => Workload::echo_of_size(o.payload_size),
        name if name.starts_with("records-") => {
            return Err(settings(format!(
                "workload {name} streams over the network only (grpc:// or http://), not in-process"
            )))
        }
        other => return Err(settings(format!("unknown workload {other:?} (workloads: {})", NAMES.join(", ")))),
    })
}

#[cfg(test)]
mod tests;
