//! The seed articles' own clients (`clients/` in the checkout) as clients of a cell: each makes the
//! calls its article timed, one at a time, and prints a JSON line per call ([`client_lines`]).
//! They make their article's workload only, and say so for any other.

use crate::claims::Claims;
use crate::client_lines;
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output, Protocol};
use crate::tool::Tool;
use std::path::{Path, PathBuf};

/// Seed 000's REST call as VS Code's REST Client would have made it (the editor is inferred from the
/// article's `.http` file): got 9.6.0 on Node 14's agent, a new
/// connection and a name lookup per call (`clients/seed000-rest`).
pub struct Seed000Rest;

/// Seed 000's gRPC client as the article wrote it: a tonic channel with TLS connected inside the
/// timed region for every call (`clients/seed000-tonic`, built with the workspace).
pub struct Seed000Tonic;

/// Seed 003's Java clients: WebClient with `.block()` (REST) or a grpc-java blocking stub, a fresh
/// JVM making a count of sequential calls (`clients/seed003-java`, built with Maven).
pub struct Seed003Java;

const REST_DIR: &str = "clients/seed000-rest";
const JAR: &str = "clients/seed003-java/target/seed003-clients.jar";

/// `command`'s words, its paths into the checkout made absolute (`clients/…`, `servers/…`).
fn argv(repo: &Path, command: &str) -> Vec<String> {
    let absolute = |w: &str| match w.starts_with("clients/") || w.starts_with("servers/") {
        true => repo.join(w).display().to_string(),
        false => w.to_string(),
    };
    command.split(' ').map(absolute).collect()
}

/// Errs unless the cell makes one call at a time at no set rate, as every seed client does.
fn one_at_a_time(name: &str, load: &Load) -> Result<(), PeerError> {
    if load.concurrency != 1 || load.rate.is_some() {
        return Err(PeerError::Unsupported(format!("{name} makes one call at a time (concurrency = 1, no rate)")));
    }
    Ok(())
}

/// The cell's bound on the client: its duration, and its count of calls if it has one.
fn bounds(i: &mut Invocation, load: &Load) {
    i.args(["--duration-ms", &load.duration.as_millis().max(1).to_string()]);
    if let Some(n) = load.calls {
        i.args(["--calls", &n.to_string()]);
    }
}

fn note_new_connections(i: &mut Invocation, name: &str, load: &Load) {
    if !load.new_connection_per_call {
        i.approximated(format!("{name} opens a new connection for every call, as its article's client did"));
    }
}

impl Tool for Seed000Rest {
    fn name(&self) -> &'static str {
        "seed000-rest"
    }
    fn program(&self) -> &'static str {
        "node"
    }
    fn install(&self) -> &'static str {
        "node servers/_node-shared/build.js clients/seed000-rest"
    }
    fn build_command(&self, repo: &Path) -> Option<Vec<String>> {
        Some(argv(repo, self.install()))
    }
    fn counts_calls(&self) -> bool {
        true
    }
    fn prepared(&self, repo: &Path) -> Result<(), PeerError> {
        match repo.join(REST_DIR).join("node_modules/got").is_dir() {
            true => Ok(()),
            false => Err(PeerError::Missing(format!(
                "{} is not installed ({}); callbench run does it unless --no-build",
                self.name(),
                self.install()
            ))),
        }
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        one_at_a_time(self.name(), load)?;
        if load.protocol != Protocol::Http1 {
            return Err(PeerError::Unsupported(
                "seed000-rest speaks REST over HTTP/1.1 only (got 9 has no HTTP/2 by default)".into(),
            ));
        }
        let script = load.repo.join(REST_DIR).join("call.js");
        let mut i = Invocation::new(["node".to_string(), script.display().to_string(), load.url()]);
        i.args(["--method", &load.call.method]);
        if let Some(body) = &load.call.body {
            i.args(["--body".to_string(), String::from_utf8_lossy(body).into_owned()]);
        }
        bounds(&mut i, load);
        note_new_connections(&mut i, self.name(), load);
        if !load.gzip {
            i.approximated("seed000-rest asks for gzip, deflate and br answers, as got does by default");
        }
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        client_lines::parse(&output.stdout, &output.stderr)
    }
}

impl Tool for Seed000Tonic {
    fn name(&self) -> &'static str {
        "seed000-tonic"
    }
    fn program(&self) -> &'static str {
        "seed000-tonic"
    }
    fn install(&self) -> &'static str {
        "cargo build --release --locked --workspace"
    }
    fn build_command(&self, _repo: &Path) -> Option<Vec<String>> {
        // The whole workspace (./callbench and the default run's servers build only what that run needs).
        Some(self.install().split(' ').map(String::from).collect())
    }
    fn counts_calls(&self) -> bool {
        true
    }
    fn checks_certificates(&self) -> bool {
        true
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        one_at_a_time(self.name(), load)?;
        if load.protocol != Protocol::Grpc || load.call.grpc_method != "callbench.v1.Auth/Test" {
            return Err(PeerError::Unsupported(
                "seed000-tonic makes the article's gRPC auth call only (callbench.v1.Auth/Test)".into(),
            ));
        }
        let (id, password) = auth_request(load)?;
        let scheme = if load.tls { "https" } else { "http" };
        let mut i = Invocation::new(["seed000-tonic".to_string(), format!("{scheme}://{}", load.authority)]);
        i.args(["--id".to_string(), id, "--password".to_string(), password]);
        if load.tls {
            let ca = load.ca_cert.as_ref().ok_or_else(|| {
                PeerError::Unsupported("seed000-tonic checks the server's certificate: no CA file given".into())
            })?;
            // The reference servers' certificates name localhost.
            i.args(["--ca".to_string(), ca.display().to_string(), "--domain".into(), "localhost".into()]);
        }
        bounds(&mut i, load);
        note_new_connections(&mut i, self.name(), load);
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        client_lines::parse(&output.stdout, &output.stderr)
    }
}

/// The auth call's user id and password, read from its REST form (`/auth/{id}`, `{"password": …}`).
fn auth_request(load: &Load) -> Result<(String, String), PeerError> {
    let id = load.call.path.strip_prefix("/auth/").filter(|id| id.parse::<i64>().is_ok());
    let body: Option<serde_json::Value> = load.call.body.as_deref().and_then(|b| serde_json::from_slice(b).ok());
    let password = body.as_ref().and_then(|b| b["password"].as_str());
    match (id, password) {
        (Some(id), Some(password)) => Ok((id.to_string(), password.to_string())),
        _ => Err(PeerError::Unsupported(format!("not an auth call: {} {}", load.call.method, load.call.path))),
    }
}

impl Tool for Seed003Java {
    fn name(&self) -> &'static str {
        "seed003-java"
    }
    fn program(&self) -> &'static str {
        "java"
    }
    fn install(&self) -> &'static str {
        "mvn -q -B -DskipTests package -f clients/seed003-java/pom.xml"
    }
    fn build_command(&self, repo: &Path) -> Option<Vec<String>> {
        Some(argv(repo, self.install()))
    }
    fn counts_calls(&self) -> bool {
        true
    }
    fn prepared(&self, repo: &Path) -> Result<(), PeerError> {
        match repo.join(JAR).is_file() {
            true => Ok(()),
            false => Err(PeerError::Missing(format!(
                "{} is not built ({}); callbench run does it unless --no-build",
                self.name(),
                self.install()
            ))),
        }
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        one_at_a_time(self.name(), load)?;
        let calls = load.calls.ok_or_else(|| {
            PeerError::Unsupported("seed003-java makes a count of calls, as the article's runs did: set calls".into())
        })?;
        if load.tls {
            return Err(PeerError::Unsupported("seed003-java calls in plaintext, as the article's clients did".into()));
        }
        let (kind, target) = match load.protocol {
            Protocol::Http1 if load.call.path == "/cars" => ("rest", format!("http://{}", load.authority)),
            Protocol::Grpc if load.call.grpc_method == "callbench.v1.Cars/Send" => ("grpc", load.authority.clone()),
            Protocol::Http2 => return Err(PeerError::Unsupported("seed003-java's WebClient speaks HTTP/1.1".into())),
            _ => {
                return Err(PeerError::Unsupported(
                    "seed003-java makes the article's car calls only (POST /cars, Cars/Send)".into(),
                ))
            }
        };
        let jar: PathBuf = load.repo.join(JAR);
        let mut i = Invocation::new(["java".to_string(), "-jar".into(), jar.display().to_string()]);
        i.args([kind.to_string(), target, calls.to_string()]);
        i.approximated(
            "seed003-java sends randomly generated cars (seed 3), not the cell's one car, as the article did",
        );
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        client_lines::parse(&output.stdout, &output.stderr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::testing;

    #[test]
    fn the_rest_client_is_sent_the_cells_call_and_bound() {
        let mut load = testing::auth(Protocol::Http1);
        load.concurrency = 1;
        load.calls = Some(20);
        let i = Seed000Rest.invocation(&load).unwrap();
        assert_eq!(
            i.command_line(),
            "node /src/callbench/clients/seed000-rest/call.js http://127.0.0.1:8080/auth/4242 --method PUT --body \
             '{\"password\":\"password-4242\"}' --duration-ms 10000 --calls 20"
        );
        assert!(i.approximations.iter().any(|a| a.contains("new connection for every call")), "{:?}", i.approximations);
    }

    #[test]
    fn the_tonic_client_trusts_the_servers_certificate_over_tls() {
        let mut load = testing::auth(Protocol::Grpc);
        load.concurrency = 1;
        load.tls = true;
        assert!(Seed000Tonic.invocation(&load).unwrap_err().to_string().contains("no CA file"));
        load.ca_cert = Some("/tmp/run/server.pem".into());
        let i = Seed000Tonic.invocation(&load).unwrap();
        assert_eq!(
            i.command_line(),
            "seed000-tonic https://127.0.0.1:8080 --id 4242 --password password-4242 --ca /tmp/run/server.pem \
             --domain localhost --duration-ms 10000"
        );
    }

    #[test]
    fn the_java_client_takes_a_count_and_the_car_calls_only() {
        let mut load = testing::load(Protocol::Grpc);
        load.concurrency = 1;
        load.call.path = "/cars".into();
        load.call.grpc_method = "callbench.v1.Cars/Send".into();
        assert!(Seed003Java.invocation(&load).unwrap_err().to_string().contains("set calls"));
        load.calls = Some(1000);
        let i = Seed003Java.invocation(&load).unwrap();
        assert_eq!(
            i.command_line(),
            "java -jar /src/callbench/clients/seed003-java/target/seed003-clients.jar grpc 127.0.0.1:8080 1000"
        );
        load.protocol = Protocol::Http1;
        assert!(Seed003Java.invocation(&load).unwrap().argv.contains(&"http://127.0.0.1:8080".to_string()));
    }

    #[test]
    fn their_builds_run_from_the_checkout_and_tonic_shares_the_workspaces() {
        let repo = Path::new("/src/callbench");
        let java = Seed003Java.build_command(repo).unwrap().join(" ");
        assert_eq!(java, "mvn -q -B -DskipTests package -f /src/callbench/clients/seed003-java/pom.xml");
        let node = Seed000Rest.build_command(repo).unwrap().join(" ");
        assert_eq!(node, "node /src/callbench/servers/_node-shared/build.js /src/callbench/clients/seed000-rest");
        assert_eq!(
            Seed000Tonic.build_command(repo).unwrap(),
            ["cargo", "build", "--release", "--locked", "--workspace"]
        );
        let unbuilt = Seed003Java.prepared(Path::new("/nonexistent")).unwrap_err();
        assert!(matches!(&unbuilt, PeerError::Missing(m) if m.contains("--no-build")), "{unbuilt:?}");
    }

    #[test]
    fn other_workloads_and_more_than_one_call_in_flight_are_refused_with_the_reason() {
        let mut load = testing::load(Protocol::Grpc);
        load.calls = Some(10);
        for tool in [&Seed000Rest as &dyn Tool, &Seed000Tonic, &Seed003Java] {
            let err = tool.invocation(&load).unwrap_err();
            assert!(
                matches!(&err, PeerError::Unsupported(m) if m.contains("one call at a time")),
                "{}: {err:?}",
                tool.name()
            );
        }
        load.concurrency = 1;
        assert!(Seed000Tonic.invocation(&load).unwrap_err().to_string().contains("auth call only"));
        assert!(Seed003Java.invocation(&load).unwrap_err().to_string().contains("car calls only"));
        assert!(Seed000Rest.invocation(&load).unwrap_err().to_string().contains("HTTP/1.1 only"));
    }
}
