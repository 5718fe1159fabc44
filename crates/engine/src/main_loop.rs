//! A program's main future driven on the runtime the engine's tasks run on. tokio's scheduler
//! loop is compiled where `Runtime::block_on` is called, with that crate's optimisation: called
//! here, it is compiled with the engine's, whichever level the caller is built at (with a CLI at
//! opt-level 0 calling it itself, HTTP/1.1 calls at 50 in flight took a quarter more client CPU:
//! bench/results/first-build-*.md).

use std::future::Future;
use std::pin::Pin;

/// What `callbench`'s main future ends with: an exit code, or an error's text.
pub type MainResult = Result<i32, String>;

/// Runs `main` to its end on `runtime` (its spawned tasks with it). Never inlined: rustc inlines a
/// function this small into its callers' crates, and the scheduler loop with it.
#[inline(never)]
pub fn block_on(runtime: &tokio::runtime::Runtime, main: Pin<Box<dyn Future<Output = MainResult> + '_>>) -> MainResult {
    runtime.block_on(main)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_future_and_its_tasks_run_to_the_end() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let result = block_on(
            &runtime,
            Box::pin(async {
                let task = tokio::spawn(async { 41 });
                task.await.map(|n| n + 1).map_err(|e| e.to_string())
            }),
        );
        assert_eq!(result, Ok(42));
    }
}
