//! The few grpc.reflection messages a client needs, as prost structs. v1 and
//! v1alpha are the same on the wire (only the service name differs), and
//! writing them here avoids pulling tonic in through tonic-reflection.
//! Fields we never send or read are left out; prost skips them on decode.

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ServerReflectionRequest {
    #[prost(string, tag = "1")]
    pub host: String,
    #[prost(oneof = "MessageRequest", tags = "3, 4, 7")]
    pub message_request: Option<MessageRequest>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum MessageRequest {
    #[prost(string, tag = "3")]
    FileByFilename(String),
    #[prost(string, tag = "4")]
    FileContainingSymbol(String),
    #[prost(string, tag = "7")]
    ListServices(String),
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ServerReflectionResponse {
    #[prost(oneof = "MessageResponse", tags = "4, 6, 7")]
    pub message_response: Option<MessageResponse>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
#[allow(clippy::enum_variant_names)] // the names of the proto's oneof
pub(crate) enum MessageResponse {
    #[prost(message, tag = "4")]
    FileDescriptorResponse(FileDescriptorResponse),
    #[prost(message, tag = "6")]
    ListServicesResponse(ListServiceResponse),
    #[prost(message, tag = "7")]
    ErrorResponse(ErrorResponse),
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FileDescriptorResponse {
    /// Serialized `google.protobuf.FileDescriptorProto`s.
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ListServiceResponse {
    #[prost(message, repeated, tag = "1")]
    pub service: Vec<ServiceResponse>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ServiceResponse {
    #[prost(string, tag = "1")]
    pub name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ErrorResponse {
    #[prost(int32, tag = "1")]
    pub error_code: i32,
    #[prost(string, tag = "2")]
    pub error_message: String,
}
