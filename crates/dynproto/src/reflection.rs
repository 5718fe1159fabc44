//! gRPC server reflection client: asks for the file that defines a service,
//! then for every file it imports until the set is complete, over one
//! `ServerReflectionInfo` stream on the caller's HTTP/2 connection (h2c or
//! TLS), the engine's own client. What one resolution takes is bounded before it is decoded
//! (`reflection_budget`), and answers are decoded on a blocking thread, so that the time limit
//! holds while a large one is read.

use crate::pool::{build_pool, is_well_known};
use crate::reflection_budget::{Budget, MAX_BYTES, MAX_FILES};
use crate::reflection_pb::{
    ErrorResponse, MessageRequest, MessageResponse, ServerReflectionRequest, ServerReflectionResponse,
};
use crate::wire::{status_name, Call, CallError, UNIMPLEMENTED};
use crate::DynprotoError;
use callbench_engine::h2pool::Connection;
use callbench_primitives::error_text::one_line;
use prost::Message;
use prost_reflect::prost_types::FileDescriptorProto;
use prost_reflect::DescriptorPool;
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

/// grpc code NOT_FOUND, in a reflection ErrorResponse.
const NOT_FOUND: i32 = 5;

/// The reflection service's versions: grpc-go and tonic serve both, older servers only v1alpha.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReflectionVersion {
    V1,
    V1Alpha,
}

impl ReflectionVersion {
    fn service(self) -> &'static str {
        match self {
            ReflectionVersion::V1 => "grpc.reflection.v1.ServerReflection",
            ReflectionVersion::V1Alpha => "grpc.reflection.v1alpha.ServerReflection",
        }
    }
}

/// Where to ask: an HTTP/2 connection the caller keeps driving, and the
/// `:authority` and `:scheme` ("http" for h2c, "https" for TLS) of its calls.
#[derive(Clone)]
pub struct ReflectionConn {
    pub connection: Connection,
    pub authority: String,
    pub scheme: String,
    /// For the whole exchange: a server that stops answering is an error, not a hang.
    pub timeout: Duration,
    /// Tried in order; the next one only when the server says UNIMPLEMENTED.
    pub versions: Vec<ReflectionVersion>,
}

impl ReflectionConn {
    /// v1 then v1alpha, 10 seconds in all.
    pub fn new(connection: Connection, authority: impl Into<String>, scheme: impl Into<String>) -> Self {
        ReflectionConn {
            connection,
            authority: authority.into(),
            scheme: scheme.into(),
            timeout: Duration::from_secs(10),
            versions: vec![ReflectionVersion::V1, ReflectionVersion::V1Alpha],
        }
    }
}

impl std::fmt::Debug for ReflectionConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReflectionConn")
            .field("authority", &self.authority)
            .field("scheme", &self.scheme)
            .field("timeout", &self.timeout)
            .field("versions", &self.versions)
            .finish_non_exhaustive()
    }
}

/// Why one version's exchange failed: absent (try the next), a call ended
/// with NOT_FOUND (tonic ends the stream so for an unknown symbol, where
/// grpc-go answers an ErrorResponse), the symbol asked for is not there (the
/// message says which services are), or anything else.
enum Failure {
    Unimplemented,
    NotFound(String),
    NoService(String),
    Error(String),
}

impl From<CallError> for Failure {
    fn from(error: CallError) -> Failure {
        match error {
            CallError::Status { code: UNIMPLEMENTED, .. } => Failure::Unimplemented,
            CallError::Status { code, .. } if code == NOT_FOUND as u32 => Failure::NotFound(error.describe()),
            CallError::TooLarge { length, limit } => Failure::Error(format!(
                "reflection: the server announced a message of {length} bytes, past the {limit} left of the {} \
                 MiB one resolution reads",
                MAX_BYTES >> 20
            )),
            other => Failure::Error(format!("reflection: {}", other.describe())),
        }
    }
}

/// The descriptors of `service` (`package.Service`) and of everything it imports.
/// A server that does not know `service` is a [`DynprotoError::Method`]; any other failure a
/// [`DynprotoError::Reflection`].
pub async fn reflect(conn: ReflectionConn, service: &str) -> Result<DescriptorPool, DynprotoError> {
    let limit = conn.timeout;
    match tokio::time::timeout(limit, reflect_any_version(&conn, service)).await {
        // Messages quote what the server sent: keep them on one line.
        Ok(result) => result.map_err(|e| e.map(|message| one_line(&message))),
        Err(_) => Err(DynprotoError::Reflection(format!(
            "reflection: no complete answer from {} within {limit:?}",
            conn.authority
        ))),
    }
}

async fn reflect_any_version(conn: &ReflectionConn, service: &str) -> Result<DescriptorPool, DynprotoError> {
    for &version in &conn.versions {
        match fetch_files(conn, version, service).await {
            // On a blocking thread too: within the bounds, but the time limit still holds.
            Ok(files) => {
                let pool = tokio::task::spawn_blocking(move || build_pool(files, "reflection")).await;
                let pool = pool.map_err(|e| format!("reflection: building the descriptors failed: {e}"));
                return pool.and_then(|built| built).map_err(DynprotoError::Reflection);
            }
            Err(Failure::Unimplemented) => continue,
            Err(Failure::NotFound(message)) => return Err(DynprotoError::Reflection(format!("reflection: {message}"))),
            Err(Failure::NoService(message)) => return Err(DynprotoError::Method(message)),
            Err(Failure::Error(message)) => return Err(DynprotoError::Reflection(message)),
        }
    }
    let tried: Vec<&str> = conn.versions.iter().map(|v| v.service()).collect();
    Err(DynprotoError::Reflection(format!(
        "reflection: {} does not offer server reflection ({} answered UNIMPLEMENTED)",
        conn.authority,
        tried.join(" and ")
    )))
}

/// One stream: the file defining `symbol`, then missing imports level by
/// level (each level's requests sent together: one round trip per level).
async fn fetch_files(
    conn: &ReflectionConn,
    version: ReflectionVersion,
    symbol: &str,
) -> Result<Vec<FileDescriptorProto>, Failure> {
    let path = format!("/{}/ServerReflectionInfo", version.service());
    let mut call = Call::start(&conn.connection, &conn.scheme, &conn.authority, &path).await?;
    let mut files: BTreeMap<String, FileDescriptorProto> = BTreeMap::new();
    let mut budget = Budget::default();

    send(&mut call, MessageRequest::FileContainingSymbol(symbol.to_string())).await?;
    match receive(&mut call, &mut budget).await {
        Ok(Answer::Files(answer)) => add_files(&mut files, answer),
        Ok(Answer::Error(error)) if error.error_code != NOT_FOUND => {
            return Err(server_error(&format!("symbol {symbol}"), &error))
        }
        Ok(Answer::Error(_)) | Err(Failure::NotFound(_)) => {
            drop(call); // tonic has ended it; ask on a new stream
            return Err(Failure::NoService(service_not_found(conn, &path, symbol).await));
        }
        Ok(Answer::Services(_)) => return Err(unexpected()),
        Err(failure) => return Err(failure),
    }

    let mut asked: HashSet<String> = HashSet::new();
    loop {
        let wanted = missing_imports(&files, &asked);
        if wanted.is_empty() {
            break;
        }
        if files.len() + wanted.len() > MAX_FILES {
            return Err(Failure::Error(format!("reflection: the server sent over {MAX_FILES} files")));
        }
        for (name, _) in &wanted {
            asked.insert(name.clone());
            send(&mut call, MessageRequest::FileByFilename(name.clone())).await?;
        }
        for (name, importer) in &wanted {
            let what = format!("file {name} (imported by {importer})");
            match receive(&mut call, &mut budget).await {
                Ok(Answer::Files(answer)) => add_files(&mut files, answer),
                Ok(Answer::Error(error)) => return Err(server_error(&what, &error)),
                Ok(Answer::Services(_)) => return Err(unexpected()),
                Err(Failure::NotFound(status)) => {
                    return Err(Failure::Error(format!("reflection: the server cannot give {what}: {status}")))
                }
                Err(failure) => return Err(failure),
            }
        }
    }
    call.finish();
    Ok(files.into_values().collect())
}

/// Imports named by `files` that are neither there nor asked for, with their importer.
fn missing_imports(files: &BTreeMap<String, FileDescriptorProto>, asked: &HashSet<String>) -> Vec<(String, String)> {
    let mut wanted: BTreeMap<String, String> = BTreeMap::new();
    for (name, file) in files {
        for dependency in &file.dependency {
            // Servers often leave the well-known files out (and tonic ends the
            // stream on NOT_FOUND): build_pool adds its own copies instead.
            if !files.contains_key(dependency) && !asked.contains(dependency) && !is_well_known(dependency) {
                wanted.entry(dependency.clone()).or_insert_with(|| name.clone());
            }
        }
    }
    wanted.into_iter().collect()
}

fn add_files(files: &mut BTreeMap<String, FileDescriptorProto>, answer: Vec<FileDescriptorProto>) {
    for file in answer {
        files.entry(file.name().to_string()).or_insert(file);
    }
}

/// "service X not found (services: ...)", with the list the server gives.
async fn service_not_found(conn: &ReflectionConn, path: &str, symbol: &str) -> String {
    let names = async {
        let mut call = Call::start(&conn.connection, &conn.scheme, &conn.authority, path).await?;
        send(&mut call, MessageRequest::ListServices(String::new())).await?;
        let answer = receive(&mut call, &mut Budget::default()).await;
        call.finish();
        match answer? {
            Answer::Services(names) => Ok(names),
            _ => Err(unexpected()),
        }
    };
    match names.await {
        Ok(mut names) => {
            names.sort();
            format!("service {symbol} not found (services: {})", names.join(", "))
        }
        Err::<Vec<String>, Failure>(_) => format!("service {symbol} not found (the server did not list its services)"),
    }
}

async fn send(call: &mut Call<'_>, request: MessageRequest) -> Result<(), Failure> {
    let request = ServerReflectionRequest { host: String::new(), message_request: Some(request) };
    match call.send(&request.encode_to_vec()) {
        Ok(()) => Ok(()),
        // The server may have ended the call before our message went out: a server without this
        // version answers UNIMPLEMENTED at once (python-grpcio, v1alpha only, did so often
        // enough that verify saw "inactive stream" in half its runs). Its status says why.
        Err(error) => match call.recv().await {
            Err(status @ CallError::Status { .. }) => Err(status.into()),
            _ => Err(error.into()),
        },
    }
}

/// One reflection answer, decoded.
pub(crate) enum Answer {
    Files(Vec<FileDescriptorProto>),
    Services(Vec<String>),
    Error(ErrorResponse),
}

/// The next answer, within what is left of `budget`: a message past its bytes is refused from
/// its header; its files and fields are counted before it is decoded, on a blocking thread (the
/// resolution's time limit abandons it there if need be).
async fn receive(call: &mut Call<'_>, budget: &mut Budget) -> Result<Answer, Failure> {
    call.limit_messages(budget.bytes);
    let Some(bytes) = call.recv().await? else {
        return Err(Failure::Error("reflection: the server ended the stream without answering".into()));
    };
    let mut left = *budget;
    let (decoded, left) = tokio::task::spawn_blocking(move || (decode_answer(&bytes, &mut left), left))
        .await
        .map_err(|e| Failure::Error(format!("reflection: decoding an answer failed: {e}")))?;
    *budget = left;
    decoded.map_err(Failure::Error)
}

/// An answer's bytes, within `budget` (what it takes is taken off), decoded.
pub(crate) fn decode_answer(bytes: &[u8], budget: &mut Budget) -> Result<Answer, String> {
    budget.take(bytes).map_err(|e| format!("reflection: {e}"))?;
    let response = ServerReflectionResponse::decode(bytes)
        .map_err(|e| format!("reflection: the server sent an undecodable answer: {e}"))?;
    match response.message_response {
        Some(MessageResponse::FileDescriptorResponse(response)) => {
            let decode = |bytes: &Vec<u8>| {
                crate::editions::descriptors::decode_file(bytes)
                    .map_err(|e| format!("reflection: the server sent a bad file descriptor: {e}"))
            };
            Ok(Answer::Files(response.file_descriptor_proto.iter().map(decode).collect::<Result<_, _>>()?))
        }
        Some(MessageResponse::ListServicesResponse(list)) => {
            Ok(Answer::Services(list.service.into_iter().map(|s| s.name).collect()))
        }
        Some(MessageResponse::ErrorResponse(error)) => Ok(Answer::Error(error)),
        None => Err("reflection: the server sent an answer of the wrong kind".into()),
    }
}

/// For the fuzz target: reflection answers read one after the other as `fetch_files` reads them,
/// within one resolution's budget; the files they give checked for missing imports and made into
/// a pool. Each bound holds: no answer decodes more files than were counted, and none past the
/// budget is decoded.
#[cfg(feature = "fuzzing")]
pub(crate) fn pool_of_answers(answers: &[&[u8]]) -> Result<DescriptorPool, DynprotoError> {
    answers_pool(answers).map_err(DynprotoError::Reflection)
}

#[cfg(feature = "fuzzing")]
fn answers_pool(answers: &[&[u8]]) -> Result<DescriptorPool, String> {
    let mut budget = Budget::default();
    let mut files = BTreeMap::new();
    for bytes in answers {
        let before = budget;
        let answer = decode_answer(bytes, &mut budget);
        assert!(budget.bytes <= before.bytes && budget.files <= before.files && budget.fields <= before.fields);
        match answer? {
            Answer::Files(answer) => {
                assert!(answer.len() <= before.files - budget.files, "files decoded that were not counted");
                add_files(&mut files, answer)
            }
            Answer::Error(_) => return Err("an error answer".into()),
            Answer::Services(_) => return Err("a list of services".into()),
        }
        let _ = missing_imports(&files, &HashSet::new());
    }
    build_pool(files.into_values().collect(), "reflection")
}

fn server_error(what: &str, error: &ErrorResponse) -> Failure {
    let code = u32::try_from(error.error_code).map(status_name).unwrap_or_else(|_| error.error_code.to_string());
    let detail = match error.error_message.is_empty() {
        true => String::new(),
        false => format!(": {}", one_line(&error.error_message)),
    };
    Failure::Error(format!("reflection: the server cannot give {what}: {code}{detail}"))
}

fn unexpected() -> Failure {
    Failure::Error("reflection: the server sent an answer of the wrong kind".into())
}
