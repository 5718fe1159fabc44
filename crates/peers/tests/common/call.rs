//! The students call every tool makes in the peers' own tests and fixture recordings.

use callbench_peers::Call;

pub fn students() -> Call {
    let preset = callbench_load::preset::preset("students", &Default::default()).unwrap();
    Call {
        method: preset.method.into(),
        path: preset.path.clone(),
        body: preset.body.as_ref().map(|b| serde_json::to_vec(b).unwrap()),
        grpc_method: preset.grpc_method.into(),
        grpc_message: preset.grpc_message(&preset.contract_method()).unwrap(),
        descriptor_set: callbench_contract::FILE_DESCRIPTOR_SET.to_vec(),
    }
}
