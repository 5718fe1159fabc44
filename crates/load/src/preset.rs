//! The built-in workloads as ready-made calls (`--workload`, `inproc:<name>`): the same request for
//! every protocol, and the answer the reference implementation gives, to check calls against.

use bytes::Bytes;
use callbench_contract::rest_json::{message_from_rest, same_message};
use callbench_engine::inproc::Workload;
use callbench_engine::request::{BodyCheck, HttpRequest};
use callbench_workloads::{auth, cars, echo, life, students};
use prost::Message;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use serde_json::{json, Value};
use std::path::Path;

pub const NAMES: &[&str] = &["auth", "students", "cars", "life", "life-setup", "echo", "noop"];

/// What the built-in workloads' requests are made of (flags of `callbench load`).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct PresetOptions {
    /// echo: about this many bytes of JSON per message
    #[arg(long, default_value_t = 1000)]
    pub payload_size: usize,
    /// life: generations computed per call
    #[arg(long, default_value_t = 1)]
    pub ntimes: u32,
    /// auth: the user id to authenticate
    #[arg(long, default_value_t = 4242)]
    pub user_id: i64,
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
}

pub fn preset(name: &str, o: &PresetOptions) -> Result<Preset, String> {
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
            }
        }
        "noop" => return Err("workload noop exists only in-process (inproc:noop)".into()),
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
        request
    }

    /// Checks a REST answer body: the same message as the reference answer.
    pub fn http_check(&self, method: &MethodDescriptor) -> Result<BodyCheck, String> {
        let expected = message_from_rest(&method.output(), &self.answer)?;
        let output = method.output();
        Ok(remembering(move |body: &[u8]| {
            serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| message_from_rest(&output, &v).ok())
                .is_some_and(|m| same_message(&m, &expected))
        }))
    }

    /// The gRPC request message, encoded.
    pub fn grpc_message(&self, method: &MethodDescriptor) -> Result<Vec<u8>, String> {
        Ok(message_from_rest(&method.input(), &self.grpc_request)?.encode_to_vec())
    }

    /// Checks a gRPC answer message: the same message as the reference answer.
    pub fn grpc_check(&self, method: &MethodDescriptor) -> Result<BodyCheck, String> {
        let expected = message_from_rest(&method.output(), &self.answer)?;
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

/// The in-process workload; `users_file` is where auth's users.json is (written if missing).
pub fn inproc(name: &str, o: &PresetOptions, users_file: &Path) -> Result<Workload, String> {
    Ok(match name {
        "noop" => Workload::Noop,
        "auth" => Workload::auth(users_file, o.user_id).map_err(|e| format!("cannot prepare users.json: {e}"))?,
        "students" => Workload::Students,
        "cars" => {
            let message = preset("cars", o)?.body.expect("cars has a body");
            Workload::Cars(serde_json::from_value(message).expect("valid car"))
        }
        "life" => Workload::Life { board: life::setup().board, ntimes: o.ntimes },
        "life-setup" => Workload::LifeSetup,
        "echo" => Workload::echo_of_size(o.payload_size),
        other => return Err(format!("unknown workload {other:?} (workloads: {})", NAMES.join(", "))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_checks_its_own_reference_answer() {
        let o = PresetOptions { payload_size: 300, ntimes: 3, user_id: 7 };
        for name in NAMES.iter().filter(|n| **n != "noop") {
            let p = preset(name, &o).unwrap();
            let method = p.contract_method();
            let answer_json = serde_json::to_vec(&p.answer).unwrap();
            assert!(p.http_check(&method).unwrap()(&answer_json), "{name}");
            assert!(!p.http_check(&method).unwrap()(b"{}") || p.answer == json!({}), "{name}");
            let answer_pb = message_from_rest(&method.output(), &p.answer).unwrap().encode_to_vec();
            assert!(p.grpc_check(&method).unwrap()(&answer_pb), "{name}");
            assert!(p.grpc_message(&method).is_ok(), "{name}");
        }
        assert!(preset("nope", &o).unwrap_err().contains("workloads: auth"));
        assert!(preset("noop", &o).is_err());
    }

    #[test]
    fn answers_are_compared_as_messages_and_the_first_good_one_remembered() {
        let o = PresetOptions { payload_size: 300, ntimes: 3, user_id: 7 };
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
}
