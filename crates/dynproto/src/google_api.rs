//! The transcoding files a user's .proto imports (`google/api/annotations.proto` and
//! `google/api/http.proto`, under `google_api/`), known without `-I` as the well-known types are.

/// The file's text, if `name` is one of them.
pub(crate) fn embedded(name: &str) -> Option<&'static str> {
    match name {
        "google/api/http.proto" => Some(include_str!("google_api/http.proto")),
        "google/api/annotations.proto" => Some(include_str!("google_api/annotations.proto")),
        _ => None,
    }
}
