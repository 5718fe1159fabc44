//! `callbench run URL…`: the command line's endpoints, each with its call (`callbench load`'s call
//! flags, given once for all or once per endpoint in order) and its server's pids, probed with one
//! call each before anything is measured.

use callbench_load::{parse, LoadSpec};
use callbench_runner::endpoint::Endpoint;
use std::path::PathBuf;

/// What a call to the endpoints sends, as `callbench load` takes it.
#[derive(clap::Args, Debug, Default)]
pub struct CallFlags {
    /// HTTP method [default: GET, or POST with -d]; once for every REST endpoint, or once per REST endpoint in order
    #[arg(short = 'X', long = "method")]
    methods: Vec<String>,
    /// Header (HTTP) or metadata (gRPC) on every call, 'Name: value'; repeatable (Host: also HTTP/2's :authority)
    #[arg(short = 'H', long = "header", value_parser = parse::header)]
    headers: Vec<(String, String)>,
    /// Request body (REST) or message as JSON (gRPC), @FILE reads a file; once for all, or once per endpoint in order
    #[arg(short = 'd', long = "data")]
    data: Vec<String>,
    /// An NDJSON file of requests, one per line, used in turn (REST: bodies; gRPC: messages as JSON); once for
    /// all, or once per endpoint in order
    #[arg(long = "data-lines", value_name = "FILE", conflicts_with = "data")]
    data_lines: Vec<PathBuf>,
    /// -d (or each line of --data-lines) is a template filled in per call: {{call}}, {{caller}}, {{int A B}},
    /// {{string N}}, {{uuid}}; every endpoint gets the same values call by call
    #[arg(long)]
    template: bool,
    /// gRPC: .proto file describing the methods (repeatable); without --proto/--protoset, server reflection
    #[arg(long = "proto")]
    protos: Vec<PathBuf>,
    /// gRPC: where imports of --proto files are found (repeatable)
    #[arg(long = "import-path", short = 'I')]
    import_paths: Vec<PathBuf>,
    /// gRPC: a compiled FileDescriptorSet (protoc --descriptor_set_out --include_imports)
    #[arg(long)]
    protoset: Option<PathBuf>,
    /// REST over HTTP/2 (h2c with prior knowledge on http://, ALPN h2 on https://)
    #[arg(long)]
    http2: bool,
    /// REST over HTTP/3 (QUIC), on https:// only
    #[arg(long, conflicts_with = "http2")]
    http3: bool,
    /// TLS: accept any server certificate (self-signed)
    #[arg(short = 'k', long)]
    insecure: bool,
    /// TLS: also trust this CA certificate (PEM)
    #[arg(long = "cacert")]
    ca_file: Option<PathBuf>,
    /// TLS: the client's certificate (PEM), for servers that require one (mutual TLS); with --key
    #[arg(long = "cert", value_name = "FILE")]
    client_cert: Option<PathBuf>,
    /// TLS: the private key of --cert (PEM)
    #[arg(long = "key", value_name = "FILE")]
    client_key: Option<PathBuf>,
    /// TLS: the server name sent (SNI) and checked in the certificates, instead of the URLs' host
    #[arg(long, value_name = "NAME")]
    tls_server_name: Option<String>,
    /// The process id of an endpoint's server: its CPU (with its process group's) is measured; once for all, or
    /// once per endpoint in order; PID,PID for a server of several processes (a gateway and the gRPC server
    /// behind it). Without it the server's CPU is not measured (the report says so)
    #[arg(long = "server-pid", value_name = "PID", value_parser = pid_list)]
    server_pids: Vec<Vec<i32>>,
    /// The REST twin of a gRPC method from its google.api.http rule (in --proto or --protoset): the method
    /// (pkg.Service/Method), called over gRPC at --grpc and as its rule says over REST at --rest, with -d's message
    #[arg(long = "call", value_name = "METHOD", requires_all = ["rest", "grpc"])]
    twin: Option<String>,
    /// With --call: the REST service, http(s)://HOST:PORT (a path prefix allowed)
    #[arg(long = "rest", value_name = "URL", requires = "twin")]
    rest: Option<String>,
    /// With --call: the gRPC service, grpc(s)://HOST:PORT
    #[arg(long = "grpc", value_name = "URL", requires = "twin")]
    grpc: Option<String>,
}

impl CallFlags {
    /// Whether any call flag was given (they mean nothing for a suite file).
    pub fn any(&self) -> bool {
        !(self.methods.is_empty()
            && self.headers.is_empty()
            && self.data.is_empty()
            && self.data_lines.is_empty()
            && !self.template
            && self.protos.is_empty()
            && self.import_paths.is_empty()
            && self.protoset.is_none()
            && !self.http2
            && !self.http3
            && !self.insecure
            && self.ca_file.is_none()
            && self.client_cert.is_none()
            && self.tls_server_name.is_none()
            && self.server_pids.is_empty()
            && self.twin.is_none())
    }

    /// The spec of a call to `url`: the protocol's own flags where they fit, the TLS flags everywhere.
    /// The proto flags reach a REST call only with its google.api.http rule (`http_rule`).
    #[allow(clippy::too_many_arguments)]
    fn spec(
        &self,
        url: String,
        grpc: bool,
        method: Option<String>,
        headers: Vec<(String, String)>,
        (data, data_lines): (Option<String>, Option<PathBuf>),
        http_rule: Option<String>,
        allow_remote: bool,
    ) -> LoadSpec {
        let protos = grpc || http_rule.is_some();
        LoadSpec {
            target: url,
            method,
            headers,
            data,
            data_lines,
            template: self.template,
            http_rule,
            protos: if protos { self.protos.clone() } else { Vec::new() },
            import_paths: if protos { self.import_paths.clone() } else { Vec::new() },
            protoset: self.protoset.clone().filter(|_| protos),
            http2: self.http2 && !grpc,
            http3: self.http3 && !grpc,
            insecure: self.insecure,
            ca_file: self.ca_file.clone(),
            client_cert: self.client_cert.clone(),
            client_key: self.client_key.clone(),
            tls_server_name: self.tls_server_name.clone(),
            allow_remote,
            ..LoadSpec::default()
        }
    }

    /// Whether the endpoints are a method and its REST twin (`--call`).
    pub fn twin(&self) -> bool {
        self.twin.is_some()
    }
}

/// Whether the command line's inputs are endpoints (a URL with a scheme) rather than a suite file.
pub fn are_endpoints(inputs: &[String]) -> bool {
    inputs.iter().any(|i| i.contains("://"))
}

/// The endpoints `inputs` name (`[NAME=]URL`), or `--call`'s method and its REST twin, each with
/// its call; the error is one line.
pub fn endpoints(inputs: &[String], flags: &CallFlags, allow_remote: bool) -> Result<Vec<Endpoint>, String> {
    if flags.twin.is_some() {
        if !inputs.is_empty() {
            return Err("--call names the endpoints (--rest, --grpc): give no URL or suite besides".into());
        }
        return twin(flags, allow_remote);
    }
    let mut named = Vec::new();
    for input in inputs {
        let (name, url) = match input.split_once('=').filter(|(name, _)| !name.contains("://")) {
            Some((name, url)) => (Some(name.trim().to_string()), url.trim().to_string()),
            None => (None, input.trim().to_string()),
        };
        let grpc = match url.split_once("://").map(|(scheme, _)| scheme.to_ascii_lowercase()) {
            Some(s) if s == "http" || s == "https" => false,
            Some(s) if s == "grpc" || s == "grpcs" => true,
            _ => {
                return Err(format!(
                    "{input:?} is not an endpoint: give http://, https://, grpc:// or grpcs:// URLs (or one suite file)"
                ))
            }
        };
        parse::target(&url)?;
        named.push((name, url, grpc));
    }
    let rest_count = named.iter().filter(|(_, _, grpc)| !grpc).count();
    if !flags.methods.is_empty() && rest_count == 0 {
        return Err("-X/--method is for REST endpoints and none was given".into());
    }
    let labels = labels(&named)?;
    let mut rest_index = 0;
    let mut out = Vec::new();
    for (i, ((_, url, grpc), label)) in named.iter().zip(labels).enumerate() {
        let data = one_or_each(&flags.data, i, named.len(), "-d/--data")?;
        let data_lines = one_or_each(&flags.data_lines, i, named.len(), "--data-lines")?;
        let method = if *grpc {
            None
        } else {
            rest_index += 1;
            one_or_each(&flags.methods, rest_index - 1, rest_count, "-X/--method (one per REST endpoint)")?
        };
        let pid = one_or_each(&flags.server_pids, i, named.len(), "--server-pid")?;
        let spec =
            flags.spec(url.clone(), *grpc, method, flags.headers.clone(), (data, data_lines), None, allow_remote);
        out.push(Endpoint::new(label, spec, running(pid)?));
    }
    Ok(out)
}

/// `--call`'s gRPC method at --grpc and, at --rest, the REST call its google.api.http rule maps the
/// same message to.
fn twin(flags: &CallFlags, allow_remote: bool) -> Result<Vec<Endpoint>, String> {
    let (Some(method), Some(rest), Some(grpc)) = (&flags.twin, &flags.rest, &flags.grpc) else {
        return Err("--call needs --rest URL and --grpc URL".into());
    };
    let pool = match (&flags.protoset, flags.protos.is_empty()) {
        (Some(set), _) => callbench_dynproto::load_protoset(set)?,
        (None, false) => callbench_dynproto::load_protos(&flags.protos, &flags.import_paths)?,
        (None, true) => return Err("--call reads the method's google.api.http rule from --proto or --protoset".into()),
    };
    let descriptor = callbench_dynproto::find_method(&pool, method)?;
    if !flags.methods.is_empty() {
        return Err("-X: with --call the method's google.api.http rule says the HTTP method".into());
    }
    if flags.data.len() > 1 || flags.data_lines.len() > 1 {
        return Err("-d, --data-lines: with --call one message (or file of them), sent to both".into());
    }
    let data = flags.data.first().map(|d| parse::bytes(d, "-d")).transpose()?;
    let message = String::from_utf8(data.unwrap_or_default()).map_err(|_| "-d: the message is not UTF-8 JSON")?;
    if flags.data_lines.is_empty() && !flags.template {
        callbench_transcode::rest_twin(&descriptor, &message)?; // a method without a rule, a message it cannot map
    }
    let grpc_base = grpc.trim_end_matches('/');
    if !(grpc_base.starts_with("grpc://") || grpc_base.starts_with("grpcs://")) || grpc_base.matches('/').count() > 2 {
        return Err(format!("--grpc {grpc}: give grpc://HOST:PORT (or grpcs://), the method comes from --call"));
    }
    if !(rest.starts_with("http://") || rest.starts_with("https://")) {
        return Err(format!("--rest {rest}: give http://HOST:PORT (or https://)"));
    }
    let grpc_url = format!("{grpc_base}/{}", callbench_dynproto::grpc_path(&descriptor).trim_start_matches('/'));
    let pid = |i: usize| one_or_each(&flags.server_pids, i, 2, "--server-pid");
    let message = Some(message).filter(|m| !m.trim().is_empty());
    let data_lines = flags.data_lines.first().cloned();
    let mut out = Vec::new();
    for (i, (url, grpc)) in [(rest.clone(), false), (grpc_url, true)].into_iter().enumerate() {
        parse::target(&url)?;
        // The REST request is made per message, from the rule, by the load it runs.
        let rule = (!grpc).then(|| method.clone());
        let data = (message.clone(), data_lines.clone());
        let spec = flags.spec(url, grpc, None, flags.headers.clone(), data, rule, allow_remote);
        let label = if grpc { "grpc" } else { "rest" };
        out.push(Endpoint::new(label.into(), spec, running(pid(i)?)?));
    }
    Ok(out)
}

/// Each endpoint's label: the name given, else `rest` / `grpc` (`rest-1`, `rest-2` when one repeats).
fn labels(named: &[(Option<String>, String, bool)]) -> Result<Vec<String>, String> {
    let kind = |grpc: bool| if grpc { "grpc" } else { "rest" };
    let count = |grpc: bool| named.iter().filter(|(name, _, g)| name.is_none() && *g == grpc).count();
    let mut seen = std::collections::BTreeMap::<bool, usize>::new();
    let mut labels: Vec<String> = Vec::new();
    for (name, _, grpc) in named {
        let label = match name {
            Some(name) => name.clone(),
            None if count(*grpc) == 1 => kind(*grpc).to_string(),
            None => {
                let n = seen.entry(*grpc).or_default();
                *n += 1;
                format!("{}-{n}", kind(*grpc))
            }
        };
        if label.is_empty() || !label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.') {
            return Err(format!("endpoint name {label:?}: letters, digits, '-', '_' or '.'"));
        }
        if label == "inproc" || labels.contains(&label) {
            return Err(format!("endpoint name {label:?} is taken: give each endpoint its own NAME=URL"));
        }
        labels.push(label);
    }
    Ok(labels)
}

/// `--server-pid 4242` or `4242,4343`: the processes of one endpoint's server.
fn pid_list(text: &str) -> Result<Vec<i32>, String> {
    text.split(',').map(|p| p.trim().parse::<i32>().map_err(|_| format!("'{p}' is not a process id"))).collect()
}

/// A `--server-pid` whose every process runs.
fn running(pids: Option<Vec<i32>>) -> Result<Vec<i32>, String> {
    let pids = pids.unwrap_or_default();
    match pids.iter().find(|&&pid| pid <= 0 || !std::path::Path::new(&format!("/proc/{pid}")).exists()) {
        Some(pid) => Err(format!("--server-pid {pid}: no such process")),
        None => Ok(pids),
    }
}

/// The value for endpoint `i` of `n`: none given, one for all, or one each in order.
fn one_or_each<T: Clone>(values: &[T], i: usize, n: usize, flag: &str) -> Result<Option<T>, String> {
    match values.len() {
        0 => Ok(None),
        1 => Ok(Some(values[0].clone())),
        m if m == n => Ok(Some(values[i].clone())),
        m => Err(format!("{flag} given {m} times for {n} endpoints: give it once for all, or once per endpoint")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn urls_are_endpoints_and_a_path_is_a_suite() {
        assert!(are_endpoints(&inputs(&["http://127.0.0.1:8080/x"])));
        assert!(are_endpoints(&inputs(&["api=grpc://127.0.0.1:1/p.S/M"])));
        assert!(!are_endpoints(&inputs(&["suites/default.toml"])));
    }

    #[test]
    fn labels_say_the_protocol_or_the_name_given() {
        let flags = CallFlags::default();
        let one = endpoints(&inputs(&["http://127.0.0.1:1/a", "grpc://127.0.0.1:2/p.S/M"]), &flags, false).unwrap();
        let labels: Vec<&str> = one.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels, ["rest", "grpc"]);
        let two = endpoints(
            &inputs(&["http://127.0.0.1:1/a", "http://127.0.0.1:2/b", "mine=grpc://127.0.0.1:3"]),
            &flags,
            false,
        )
        .unwrap();
        let labels: Vec<&str> = two.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels, ["rest-1", "rest-2", "mine"]);
        assert!(endpoints(&inputs(&["a=http://127.0.0.1:1/", "a=grpc://127.0.0.1:2"]), &flags, false)
            .unwrap_err()
            .contains("taken"));
        assert!(endpoints(&inputs(&["a b=http://127.0.0.1:1/"]), &flags, false).unwrap_err().contains("letters"));
    }

    #[test]
    fn a_flag_is_given_once_for_all_or_once_per_endpoint() {
        let urls = inputs(&["http://127.0.0.1:1/a", "grpc://127.0.0.1:2/p.S/M"]);
        let flags = CallFlags {
            data: vec!["{}".into()],
            server_pids: vec![vec![std::process::id() as i32]],
            ..Default::default()
        };
        let all = endpoints(&urls, &flags, false).unwrap();
        assert!(all.iter().all(|e| e.spec.data.as_deref() == Some("{}") && e.server_pids.len() == 1));
        let each = CallFlags { data: vec!["a".into(), "b".into()], ..Default::default() };
        let got: Vec<Option<String>> =
            endpoints(&urls, &each, false).unwrap().into_iter().map(|e| e.spec.data).collect();
        assert_eq!(got, [Some("a".to_string()), Some("b".to_string())]);
        let three = CallFlags { data: vec!["a".into(), "b".into(), "c".into()], ..Default::default() };
        assert!(endpoints(&urls, &three, false).unwrap_err().contains("-d/--data given 3 times for 2 endpoints"));
        let dead = CallFlags { server_pids: vec![vec![i32::MAX]], ..Default::default() };
        assert!(endpoints(&urls, &dead, false).unwrap_err().contains("no such process"));
        // Several processes for one server: all measured, each must run.
        let me = std::process::id() as i32;
        let two = CallFlags { server_pids: vec![pid_list(&format!("{me},{me}")).unwrap()], ..Default::default() };
        assert!(endpoints(&urls, &two, false).unwrap().iter().all(|e| e.server_pids == [me, me]));
        let one_dead = CallFlags { server_pids: vec![vec![me, i32::MAX]], ..Default::default() };
        assert!(endpoints(&urls, &one_dead, false).unwrap_err().contains("no such process"));
        assert!(pid_list("12,x").unwrap_err().contains("'x'"));
    }

    #[test]
    fn protocol_flags_go_where_they_fit() {
        let urls = inputs(&["http://127.0.0.1:1/a", "grpc://127.0.0.1:2/p.S/M"]);
        let flags = CallFlags {
            methods: vec!["POST".into()],
            http2: true,
            protos: vec!["api.proto".into()],
            insecure: true,
            ..Default::default()
        };
        let e = endpoints(&urls, &flags, true).unwrap();
        assert_eq!(e[0].spec.method.as_deref(), Some("POST"));
        assert!(e[0].spec.http2 && e[0].spec.protos.is_empty() && e[0].spec.insecure && e[0].spec.allow_remote);
        assert!(e[1].spec.method.is_none() && !e[1].spec.http2 && e[1].spec.protos.len() == 1 && e[1].spec.insecure);
        let grpc_only = CallFlags { methods: vec!["POST".into()], ..Default::default() };
        assert!(endpoints(&urls[1..], &grpc_only, false).unwrap_err().contains("-X/--method is for REST"));
        assert!(endpoints(&inputs(&["raw://127.0.0.1:1"]), &CallFlags::default(), false)
            .unwrap_err()
            .contains("is not an endpoint"));
    }
}
