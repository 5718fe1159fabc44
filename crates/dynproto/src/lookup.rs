//! Finding a method by the names people type; every call shape (unary, client,
//! server and bidi streaming) is the engine's to drive.

use crate::DynprotoError;
use callbench_primitives::error_text::one_line;
use prost_reflect::{DescriptorPool, MethodDescriptor};

/// Splits `package.Service/Method` or `package.Service.Method` (a leading `/`,
/// as in an HTTP/2 `:path`, is accepted too) into service and method.
pub fn split_method_name(name: &str) -> Result<(&str, &str), DynprotoError> {
    split(name).map_err(DynprotoError::Method)
}

fn split(name: &str) -> Result<(&str, &str), String> {
    let trimmed = name.trim();
    let trimmed = trimmed.strip_prefix('/').unwrap_or(trimmed);
    let split = match trimmed.rsplit_once('/') {
        Some(parts) => Some(parts),
        None => trimmed.rsplit_once('.'),
    };
    match split {
        Some((service, method))
            if !service.is_empty() && !method.is_empty() && !service.contains('/') && !method.contains('.') =>
        {
            Ok((service, method))
        }
        _ => Err(format!("bad method name {name:?}: expected package.Service/Method")),
    }
}

/// The method `name` in `pool`.
pub fn find_method(pool: &DescriptorPool, name: &str) -> Result<MethodDescriptor, DynprotoError> {
    // Names come from the user and from the descriptors: keep the message one line.
    find(pool, name).map_err(|e| DynprotoError::Method(one_line(&e)))
}

fn find(pool: &DescriptorPool, name: &str) -> Result<MethodDescriptor, String> {
    let (service_name, method_name) = split(name)?;
    let Some(service) = pool.get_service_by_name(service_name) else {
        let mut names: Vec<String> = pool.services().map(|s| s.full_name().to_string()).collect();
        names.sort();
        return Err(format!("service {service_name} not found (services: {})", list(&names)));
    };
    let Some(method) = service.methods().find(|m| m.name() == method_name) else {
        let names: Vec<String> = service.methods().map(|m| m.name().to_string()).collect();
        return Err(format!("method {method_name} not found in {service_name} (methods: {})", list(&names)));
    };
    Ok(method)
}

/// Whether the answer is a stream of messages rather than exactly one.
pub fn is_server_streaming(method: &MethodDescriptor) -> bool {
    method.is_server_streaming()
}

/// The HTTP/2 `:path` of a call: `/package.Service/Method`.
pub fn grpc_path(method: &MethodDescriptor) -> String {
    format!("/{}/{}", method.parent_service().full_name(), method.name())
}

fn list(names: &[String]) -> String {
    match names.is_empty() {
        true => "none".to_string(),
        false => names.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::split_method_name;

    #[test]
    fn both_separators_and_a_leading_slash() {
        assert_eq!(split_method_name("a.b.Svc/Do"), Ok(("a.b.Svc", "Do")));
        assert_eq!(split_method_name("a.b.Svc.Do"), Ok(("a.b.Svc", "Do")));
        assert_eq!(split_method_name("/a.b.Svc/Do"), Ok(("a.b.Svc", "Do")));
        assert_eq!(split_method_name("Svc/Do"), Ok(("Svc", "Do")));
    }

    #[test]
    fn malformed_names_are_errors() {
        for bad in ["", "Svc", "Svc/", "/Do", "a/b/c", "a.Svc/Do.x", ".Do", "Svc."] {
            let err = split_method_name(bad).unwrap_err().to_string();
            assert!(err.contains("expected package.Service/Method"), "{bad}: {err}");
        }
    }
}
