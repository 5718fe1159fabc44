//! The load tools people use, as clients of a cell: one adapter per tool turns what the cell asks
//! ([`Load`]) into the tool's command line ([`Invocation`], with every setting it could only
//! approximate said in words) and the tool's own report into its claims ([`Claims`]). Running the
//! tool and measuring it from outside (CPU, memory, the server's count) is the runner's job.

mod ab;
mod claims;
mod client_lines;
mod error;
pub mod execute;
mod fortio;
mod ghz;
mod h2load;
mod hey;
mod load;
mod locust;
mod oha;
mod seed_clients;
mod tool;
mod unavailable;
mod vegeta;
mod wrk;

pub use claims::{Claims, Latency};
pub use error::PeerError;
pub use load::{Call, Invocation, Load, Output, Protocol};
pub use tool::Tool;

/// Every tool callbench can run, and those it names but cannot (their rows say why).
pub fn all() -> Vec<&'static dyn Tool> {
    vec![
        &wrk::Wrk,
        &ab::Ab,
        &h2load::H2load,
        &hey::Hey,
        &fortio::Fortio,
        &ghz::Ghz,
        &vegeta::Vegeta,
        &oha::Oha,
        &locust::Locust::HTTP,
        &locust::Locust::FAST_HTTP,
        &locust::Locust::GRPC,
        &unavailable::K6,
        &unavailable::Ali,
    ]
}

/// The seed articles' own clients (`clients/`): programs that make the calls an article timed, one
/// at a time, for its workload only.
pub fn seed_clients() -> Vec<&'static dyn Tool> {
    vec![&seed_clients::Seed000Rest, &seed_clients::Seed000Tonic, &seed_clients::Seed003Java]
}

/// The tool or seed client named `name`, or an error listing the known ones.
pub fn by_name(name: &str) -> Result<&'static dyn Tool, PeerError> {
    let known = || all().into_iter().chain(seed_clients());
    known().find(|t| t.name() == name).ok_or_else(|| {
        let names: Vec<&str> = known().map(|t| t.name()).collect();
        PeerError::Unknown(format!("unknown client '{name}' (callbench, {})", names.join(", ")))
    })
}

/// `tool`'s command for `load`, with what it could only approximate, its lack of a warm-up included.
pub fn invocation(tool: &dyn Tool, load: &Load) -> Result<Invocation, PeerError> {
    if load.calls.is_some() && !tool.counts_calls() {
        return Err(PeerError::Unsupported(format!("{} runs for a duration, not a count of calls", tool.name())));
    }
    let mut i = tool.invocation(load)?;
    if !load.warmup.is_zero() && !tool.warms_up() {
        i.approximated(format!(
            "{} has no warm-up: its figures include the first {} ms of the run",
            tool.name(),
            load.warmup.as_millis()
        ));
    }
    Ok(i)
}

/// Why a tool cannot be run at all here (not installable), if so.
pub fn unavailable(tool: &dyn Tool) -> Option<&'static str> {
    unavailable::why(tool.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_a_distinct_name_and_unknown_ones_are_listed() {
        let mut names: Vec<&str> = all().iter().chain(&seed_clients()).map(|t| t.name()).collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
        let Some(PeerError::Unknown(err)) = by_name("jmeter").err() else { panic!("an unknown client") };
        assert!(err.contains("unknown client 'jmeter'") && err.contains("wrk") && err.contains("locust-grpc"), "{err}");
        assert!(err.contains("seed003-java"), "{err}");
        assert!(unavailable(by_name("k6").unwrap()).is_some());
        assert!(unavailable(by_name("wrk").unwrap()).is_none());
    }

    #[test]
    fn a_warm_up_is_left_out_by_the_tools_that_can_and_said_of_the_others() {
        let mut load = load::testing::load(Protocol::Http1);
        load.warmup = std::time::Duration::from_millis(500);
        let wrk = invocation(by_name("wrk").unwrap(), &load).unwrap();
        assert!(wrk.approximations.iter().any(|a| a.contains("no warm-up")), "{:?}", wrk.approximations);
        let h2load = invocation(by_name("h2load").unwrap(), &load).unwrap();
        assert!(h2load.argv.contains(&"--warm-up-time=500ms".to_string()));
        assert!(!h2load.approximations.iter().any(|a| a.contains("warm-up")), "{:?}", h2load.approximations);
    }

    #[test]
    fn a_count_of_calls_is_refused_by_the_tools_that_run_for_a_duration() {
        let mut load = load::testing::load(Protocol::Http1);
        load.calls = Some(100);
        let err = invocation(by_name("wrk").unwrap(), &load).unwrap_err();
        assert_eq!(err, PeerError::Unsupported("wrk runs for a duration, not a count of calls".into()));
    }

    #[test]
    fn a_tool_that_cannot_be_installed_here_is_missing_not_unsupported() {
        let load = load::testing::load(Protocol::Http1);
        let k6 = invocation(by_name("k6").unwrap(), &load).unwrap_err();
        assert!(matches!(&k6, PeerError::Missing(m) if m.starts_with("k6 is not installed here")), "{k6:?}");
        let grpc = invocation(by_name("wrk").unwrap(), &load::testing::load(Protocol::Grpc)).unwrap_err();
        assert_eq!(grpc, PeerError::Unsupported("wrk has no gRPC".into()));
    }
}
