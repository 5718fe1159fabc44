//! A REST call's request as the flags make it: a preset's with the user's headers and `--gzip`,
//! or one made from the text of each call (its body, or its message through `--http-rule`).

use crate::spec::LoadSpec;
use callbench_engine::request::HttpRequest;

/// A preset's request with the user's headers (over its own, by name) and `--gzip`.
pub fn with_flags(mut request: HttpRequest, spec: &LoadSpec) -> HttpRequest {
    request.headers.retain(|(name, _)| !spec.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)));
    request.headers.extend(spec.headers.iter().cloned());
    request.gzip = spec.gzip;
    request
}

/// Makes a REST call's request from its text: the body (`-X`, or POST with a body and GET
/// without), or with `--http-rule` the message its method's rule maps to a request under `path`.
pub(crate) fn rest_request(
    spec: &LoadSpec,
    path: &str,
) -> Result<impl Fn(&[u8]) -> Result<HttpRequest, String> + Send + Sync + 'static, String> {
    let rule = match &spec.http_rule {
        None => None,
        Some(name) => {
            if spec.method.is_some() {
                return Err("-X: with --http-rule the method's google.api.http rule says the HTTP method".into());
            }
            let pool = match (&spec.protoset, spec.protos.is_empty()) {
                (Some(set), _) => callbench_dynproto::load_protoset(set)?,
                (None, false) => callbench_dynproto::load_protos(&spec.protos, &spec.import_paths)?,
                (None, true) => return Err("--http-rule reads the method's rule from --proto or --protoset".into()),
            };
            Some(callbench_dynproto::find_method(&pool, name)?)
        }
    };
    let (spec, prefix) = (spec.clone(), path.trim_end_matches('/').to_string());
    let path = path.to_string();
    Ok(move |text: &[u8]| {
        let mut request = match &rule {
            None => {
                let method = spec.method.clone().unwrap_or_else(|| if text.is_empty() { "GET" } else { "POST" }.into());
                let mut r = HttpRequest::get(&path);
                r.method = method.to_ascii_uppercase();
                r.body = text.to_vec().into();
                r
            }
            Some(method) => {
                let json = std::str::from_utf8(text).map_err(|_| "the message JSON is not UTF-8".to_string())?;
                let twin = callbench_transcode::rest_twin(method, json)?;
                let mut r = HttpRequest::get(&format!("{prefix}{}", twin.path));
                r.method = twin.method;
                if let Some(body) = twin.body {
                    r.body = body.into_bytes().into();
                }
                r
            }
        };
        request.headers.extend(spec.headers.iter().cloned());
        request.gzip = spec.gzip;
        Ok(request)
    })
}
