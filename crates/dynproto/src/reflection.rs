//! gRPC server reflection client: asks for the file that defines a service,
//! then for every file it imports until the set is complete, over one
//! `ServerReflectionInfo` stream on the caller's HTTP/2 connection (h2c or
//! TLS), the engine's own client.

use crate::pool::{build_pool, is_well_known};
use crate::reflection_pb::{
    ErrorResponse, MessageRequest, MessageResponse, ServerReflectionRequest, ServerReflectionResponse,
};
use crate::wire::{status_name, Call, CallError, UNIMPLEMENTED};
use callbench_engine::h2pool::Connection;
use prost::Message;
use prost_reflect::prost_types::FileDescriptorProto;
use prost_reflect::DescriptorPool;
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

/// A server with more files than this is sending us in circles.
const MAX_FILES: usize = 10_000;
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
/// grpc-go answers an ErrorResponse), or anything else.
enum Failure {
    Unimplemented,
    NotFound(String),
    Error(String),
}

impl From<CallError> for Failure {
    fn from(error: CallError) -> Failure {
        match error {
            CallError::Status { code: UNIMPLEMENTED, .. } => Failure::Unimplemented,
            CallError::Status { code, .. } if code == NOT_FOUND as u32 => Failure::NotFound(error.describe()),
            other => Failure::Error(format!("reflection: {}", other.describe())),
        }
    }
}

/// The descriptors of `service` (`package.Service`) and of everything it imports.
pub async fn reflect(conn: ReflectionConn, service: &str) -> Result<DescriptorPool, String> {
    let limit = conn.timeout;
    match tokio::time::timeout(limit, reflect_any_version(&conn, service)).await {
        // Messages quote what the server sent: keep them on one line.
        Ok(result) => result.map_err(|e| crate::pool::one_line(&e)),
        Err(_) => Err(format!("reflection: no complete answer from {} within {limit:?}", conn.authority)),
    }
}

async fn reflect_any_version(conn: &ReflectionConn, service: &str) -> Result<DescriptorPool, String> {
    for &version in &conn.versions {
        match fetch_files(conn, version, service).await {
            Ok(files) => return build_pool(files, "reflection"),
            Err(Failure::Unimplemented) => continue,
            Err(Failure::NotFound(message)) => return Err(format!("reflection: {message}")),
            Err(Failure::Error(message)) => return Err(message),
        }
    }
    let tried: Vec<&str> = conn.versions.iter().map(|v| v.service()).collect();
    Err(format!(
        "reflection: {} does not offer server reflection ({} answered UNIMPLEMENTED)",
        conn.authority,
        tried.join(" and ")
    ))
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

    send(&mut call, MessageRequest::FileContainingSymbol(symbol.to_string())).await?;
    match receive(&mut call).await {
        Ok(MessageResponse::FileDescriptorResponse(response)) => add_files(&mut files, response.file_descriptor_proto)?,
        Ok(MessageResponse::ErrorResponse(error)) if error.error_code != NOT_FOUND => {
            return Err(server_error(&format!("symbol {symbol}"), &error))
        }
        Ok(MessageResponse::ErrorResponse(_)) | Err(Failure::NotFound(_)) => {
            drop(call); // tonic has ended it; ask on a new stream
            return Err(Failure::Error(service_not_found(conn, &path, symbol).await));
        }
        Ok(MessageResponse::ListServicesResponse(_)) => return Err(unexpected()),
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
            match receive(&mut call).await {
                Ok(MessageResponse::FileDescriptorResponse(response)) => {
                    add_files(&mut files, response.file_descriptor_proto)?
                }
                Ok(MessageResponse::ErrorResponse(error)) => return Err(server_error(&what, &error)),
                Ok(MessageResponse::ListServicesResponse(_)) => return Err(unexpected()),
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

fn add_files(files: &mut BTreeMap<String, FileDescriptorProto>, encoded: Vec<Vec<u8>>) -> Result<(), Failure> {
    for bytes in encoded {
        let file = crate::editions::descriptors::decode_file(&bytes)
            .map_err(|e| Failure::Error(format!("reflection: the server sent a bad file descriptor: {e}")))?;
        files.entry(file.name().to_string()).or_insert(file);
    }
    Ok(())
}

/// "service X not found (services: ...)", with the list the server gives.
async fn service_not_found(conn: &ReflectionConn, path: &str, symbol: &str) -> String {
    let names = async {
        let mut call = Call::start(&conn.connection, &conn.scheme, &conn.authority, path).await?;
        send(&mut call, MessageRequest::ListServices(String::new())).await?;
        let answer = receive(&mut call).await;
        call.finish();
        match answer? {
            MessageResponse::ListServicesResponse(list) => Ok(list.service.into_iter().map(|s| s.name).collect()),
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

async fn receive(call: &mut Call<'_>) -> Result<MessageResponse, Failure> {
    let Some(bytes) = call.recv().await? else {
        return Err(Failure::Error("reflection: the server ended the stream without answering".into()));
    };
    let response = ServerReflectionResponse::decode(bytes)
        .map_err(|e| Failure::Error(format!("reflection: the server sent an undecodable answer: {e}")))?;
    response.message_response.ok_or_else(unexpected)
}

/// For the fuzz target: a reflection answer's bytes read as `fetch_files` reads them, the files it
/// gives checked for missing imports and made into a pool.
#[cfg(feature = "fuzzing")]
pub(crate) fn pool_of_answer(bytes: &[u8]) -> Result<DescriptorPool, String> {
    let failed = |_: Failure| "a failed answer".to_string();
    let response = ServerReflectionResponse::decode(bytes).map_err(|e| e.to_string())?;
    let mut files = BTreeMap::new();
    match response.message_response {
        Some(MessageResponse::FileDescriptorResponse(r)) => {
            add_files(&mut files, r.file_descriptor_proto).map_err(failed)?
        }
        Some(MessageResponse::ErrorResponse(error)) => return Err(failed(server_error("a symbol", &error))),
        Some(MessageResponse::ListServicesResponse(_)) | None => return Err(failed(unexpected())),
    }
    let _ = missing_imports(&files, &HashSet::new());
    build_pool(files.into_values().collect(), "reflection")
}

fn server_error(what: &str, error: &ErrorResponse) -> Failure {
    let code = u32::try_from(error.error_code).map(status_name).unwrap_or_else(|_| error.error_code.to_string());
    let detail = match error.error_message.is_empty() {
        true => String::new(),
        false => format!(": {}", crate::pool::one_line(&error.error_message)),
    };
    Failure::Error(format!("reflection: the server cannot give {what}: {code}{detail}"))
}

fn unexpected() -> Failure {
    Failure::Error("reflection: the server sent an answer of the wrong kind".into())
}
