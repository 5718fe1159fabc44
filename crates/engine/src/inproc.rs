//! The in-process target: a workload function called directly, the baseline with no boundary.
//! No wire: wire bytes are 0 and payload bytes are the REST JSON sizes of request and answer.

use crate::call_data::Turn;
use crate::record::{ByteCounts, ErrorKind};
use crate::target::{Connected, Reply, Target};
use crate::EngineError;
use callbench_workloads::{auth, cars, echo, life, students, users};
use std::path::Path;

pub enum Workload {
    /// Nothing at all: the cost of the engine's own loop.
    Noop,
    /// `auth.test(id, password)` against a preloaded user store.
    Auth {
        store: auth::UserStore,
        id: i64,
        password: String,
    },
    Students,
    Cars(cars::CarMessage),
    /// `life.setup()`: the starting board.
    LifeSetup,
    Life {
        board: Vec<life::Cell>,
        ntimes: u32,
    },
    /// `life.step(board, ntimes)` on the boards of one run from the acorn (`life::run_boards`), in
    /// turn: call `i` steps board `i mod calls`, the board one caller advancing through the run
    /// would step at that call.
    LifeRun {
        boards: Vec<Vec<life::Cell>>,
        ntimes: u32,
    },
    Echo(echo::EchoMessage),
}

impl Workload {
    /// Auth with users written to `users_file` (if needed) and preloaded.
    pub fn auth(users_file: &Path, id: i64) -> std::io::Result<Self> {
        users::write_users_json(users_file)?;
        let store = auth::UserStore::open(users_file, auth::Mode::Preloaded)?;
        Ok(Workload::Auth { store, id, password: format!("password-{id}") })
    }

    /// The boards of one run of `ntimes` generations a call, computed now.
    pub fn life_run(ntimes: u32) -> Result<Self, callbench_workloads::WorkloadError> {
        Ok(Workload::LifeRun { boards: life::run_boards(ntimes)?, ntimes })
    }

    /// The board the current call steps (see [`Turn::current`]); the last board is the run's end
    /// and is never stepped.
    fn turn_board(boards: &[Vec<life::Cell>]) -> &[life::Cell] {
        let calls = boards.len().saturating_sub(1).max(1) as u64;
        boards.get((Turn::current().call % calls) as usize).map_or(&[], Vec::as_slice)
    }

    /// Echo of a message whose JSON is about `bytes` long.
    pub fn echo_of_size(bytes: usize) -> Self {
        Workload::Echo(echo::payload(echo::records_for_json_bytes(bytes)))
    }

    /// Runs the workload once; the JSON sizes of request and answer, or the workload's refusal.
    fn run(&self) -> Result<(usize, usize), callbench_workloads::WorkloadError> {
        let len = |v: &dyn erased::Json| v.json_len();
        Ok(match self {
            Workload::Auth { store, id, password } => {
                (len(&auth::AuthBody { password: password.clone() }), len(&store.test(*id, password)?))
            }
            Workload::Noop => (0, 0),
            Workload::Students => (0, len(&students::list())),
            Workload::LifeSetup => (0, len(&life::setup())),
            Workload::Cars(m) => (len(m), len(&cars::send(m.clone())?)),
            Workload::Life { board, ntimes } => {
                let request = life::StepRequest { ntimes: *ntimes, board: board.clone() };
                (len(&request), len(&life::step(board, *ntimes)?))
            }
            Workload::LifeRun { boards, ntimes } => {
                // The mean over the run's calls: the boards grow from 7 cells to hundreds.
                let calls = boards.len().saturating_sub(1).max(1);
                let (mut sent, mut received) = (0, 0);
                for pair in boards.windows(2) {
                    sent += len(&life::StepRequest { ntimes: *ntimes, board: pair[0].clone() });
                    received += len(&life::Board { board: pair[1].clone() });
                }
                life::step(Self::turn_board(boards), *ntimes)?;
                (sent / calls, received / calls)
            }
            Workload::Echo(m) => (len(m), len(&echo::echo(m.clone())?)),
        })
    }

    /// Calls the workload only (no size measurement): the hot path.
    fn call(&self) -> Result<(), callbench_workloads::WorkloadError> {
        match self {
            Workload::Auth { store, id, password } => store.test(*id, password).map(drop),
            Workload::Noop => Ok(()),
            Workload::Students => {
                std::hint::black_box(students::list());
                Ok(())
            }
            Workload::LifeSetup => {
                std::hint::black_box(life::setup());
                Ok(())
            }
            Workload::Cars(m) => cars::send(m.clone()).map(|r| drop(std::hint::black_box(r))),
            Workload::Life { board, ntimes } => life::step(board, *ntimes).map(|r| drop(std::hint::black_box(r))),
            Workload::LifeRun { boards, ntimes } => {
                life::step(Self::turn_board(boards), *ntimes).map(|r| drop(std::hint::black_box(r)))
            }
            Workload::Echo(m) => echo::echo(m.clone()).map(|r| drop(std::hint::black_box(r))),
        }
    }
}

mod erased {
    pub trait Json {
        fn json_len(&self) -> usize;
    }
    impl<T: serde::Serialize> Json for T {
        fn json_len(&self) -> usize {
            serde_json::to_vec(self).map_or(0, |v| v.len())
        }
    }
}

/// A workload as a `Target`; payload sizes are measured once, at construction (of a run's boards:
/// the mean over its calls).
pub struct InProc {
    workload: Workload,
    bytes: ByteCounts,
}

impl InProc {
    /// Fails if the workload refuses its own request (a bad request would only measure errors).
    pub fn new(workload: Workload) -> Result<Self, EngineError> {
        let (sent, received) =
            workload.run().map_err(|e| EngineError::Settings(format!("the workload refused the request: {e}")))?;
        let bytes = ByteCounts { sent: sent as u64, received: received as u64 };
        Ok(InProc { workload, bytes })
    }
}

impl Target for InProc {
    type Conn = ();

    async fn connect(&self, _slot: usize) -> Result<Connected<()>, ErrorKind> {
        Ok(Connected::existing(())) // nothing to open
    }

    async fn call(&self, _: &mut ()) -> Reply {
        match self.workload.call() {
            Ok(()) => Reply::ok(self.bytes),
            Err(_) => Reply::error(ErrorKind::Validation, ByteCounts::default()),
        }
    }

    fn varies(&self) -> bool {
        matches!(self.workload, Workload::LifeRun { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn once(w: Workload) -> Reply {
        InProc::new(w).unwrap().call(&mut ()).await
    }

    #[tokio::test]
    async fn every_workload_answers() {
        let dir = std::env::temp_dir().join(format!("callbench-engine-inproc-{}", std::process::id()));
        let auth = Workload::auth(&dir.join("users.json"), 42).unwrap();
        let board = life::setup().board;
        for w in [
            auth,
            Workload::Students,
            Workload::LifeSetup,
            Workload::Life { board, ntimes: 10 },
            Workload::echo_of_size(1000),
        ] {
            let r = once(w).await;
            assert!(r.outcome.is_ok() && r.bytes.received > 0, "{r:?}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_runs_calls_step_its_boards_in_turn() {
        let target = InProc::new(Workload::life_run(1000).unwrap()).unwrap();
        assert!(target.varies());
        let Workload::LifeRun { boards, .. } = &target.workload else { unreachable!() };
        for call in [0, 3, 13] {
            let stepped = Turn { call, caller: 0 }.scope(async { Workload::turn_board(boards).to_vec() }).await;
            assert_eq!(stepped, boards[(call % 10) as usize], "call {call}");
        }
        assert!(once(Workload::life_run(10).unwrap()).await.outcome.is_ok());
    }

    #[test]
    fn a_refused_request_is_refused_up_front() {
        assert!(InProc::new(Workload::Life { board: Vec::new(), ntimes: 0 }).is_err());
        assert!(InProc::new(Workload::Cars(cars::CarMessage::default())).is_err());
    }
}
