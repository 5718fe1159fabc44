//! Workload errors as gRPC statuses.

use callbench_workloads::WorkloadError;
use tonic::{Code, Status};

/// The status of a failed workload call. The code comes from the workload
/// crate's own table (`ErrorKind::grpc_code`), so every Rust server agrees.
pub fn from_workload(error: WorkloadError) -> Status {
    Status::new(Code::from(error.kind.grpc_code()), error.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_keeps_its_code() {
        let cases = [
            (WorkloadError::invalid("x"), Code::InvalidArgument),
            (WorkloadError::not_found("x"), Code::NotFound),
            (WorkloadError::internal("x"), Code::Internal),
            (
                WorkloadError { kind: callbench_workloads::ErrorKind::ResourceExhausted, message: "x".into() },
                Code::ResourceExhausted,
            ),
        ];
        for (error, code) in cases {
            let status = from_workload(error);
            assert_eq!(status.code(), code);
            assert_eq!(status.message(), "x");
        }
    }
}
