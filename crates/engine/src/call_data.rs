//! What a target's calls send when it is not one fixed request: several requests used in turn
//! (call `i` sends request `i mod n`, as ghz rotates its data), or one made per call from the call's
//! [`Turn`] (a template). Requests in turn are prepared once, as a single request is; a request made
//! per call is prepared per call, a cost the client pays (and the results say so; measured in
//! bench/results/call-data-cost-2026-12-06.md).

use crate::EngineError;
use std::sync::Arc;

/// Which call this is: its number in the run (from 0, in the order calls are scheduled) and the
/// caller (concurrency slot, from 0) making it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Turn {
    pub call: u64,
    pub caller: usize,
}

tokio::task_local! {
    /// The turn of the call the current task is making; the driver sets it around each call.
    static TURN: Turn;
}

impl Turn {
    /// The turn of the call being made (the default outside a driver, as in a lone test call).
    pub fn current() -> Turn {
        TURN.try_with(|turn| *turn).unwrap_or_default()
    }

    /// Runs `call` as this turn's call. Not an async fn: one would hold `call` twice (its argument
    /// and the scope that takes it), doubling what a caller holds.
    pub fn scope<F: std::future::Future>(self, call: F) -> tokio::task::futures::TaskLocalFuture<Turn, F> {
        TURN.scope(self, call)
    }

    /// Runs `call` as this turn's call when `told`, else as it is: one future either way, where
    /// choosing between `scope(call)` and `call` held both in every caller.
    pub fn scope_if<F: std::future::Future>(self, told: bool, call: F) -> Scoped<F> {
        Scoped { turn: told.then_some(self), call }
    }
}

/// A call that runs in its turn's scope, or in none ([`Turn::scope_if`]).
pub struct Scoped<F> {
    turn: Option<Turn>,
    call: F,
}

impl<F: std::future::Future> std::future::Future for Scoped<F> {
    type Output = F::Output;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<F::Output> {
        // SAFETY: `call` is pinned with `self` and never moved out; `turn` is Copy.
        let this = unsafe { self.get_unchecked_mut() };
        let call = unsafe { std::pin::Pin::new_unchecked(&mut this.call) };
        match this.turn {
            Some(turn) => TURN.sync_scope(turn, || call.poll(cx)),
            None => call.poll(cx),
        }
    }
}

/// Makes the request of a call from its turn; a request that cannot be made is the call's error
/// (one line), recorded as a failed call without anything sent.
pub type MakeRequest<R> = Arc<dyn Fn(Turn) -> Result<R, String> + Send + Sync>;

/// The requests of a target's calls, as the caller describes them (`R`: an [`crate::request::HttpRequest`],
/// a gRPC call's messages).
pub enum CallData<R> {
    /// Every call sends this one.
    One(R),
    /// Call `i` sends request `i mod n` (there is at least one).
    InTurn(Vec<R>),
    /// Each call sends the request made for its turn.
    PerCall(MakeRequest<R>),
}

impl<R> CallData<R> {
    /// How the data is used, for a report: `one`, `in-turn`, `per-call`.
    pub fn kind(&self) -> &'static str {
        match self {
            CallData::One(_) => "one",
            CallData::InTurn(_) => "in-turn",
            CallData::PerCall(_) => "per-call",
        }
    }
}

impl<R: Clone> CallData<R> {
    /// The first call's request (what a report shows as the call); none, or one that cannot be
    /// made, is an [`EngineError::Settings`].
    pub fn first(&self) -> Result<R, EngineError> {
        match self {
            CallData::One(request) => Ok(request.clone()),
            CallData::InTurn(requests) => {
                requests.first().cloned().ok_or_else(|| EngineError::Settings("no requests to send in turn".into()))
            }
            CallData::PerCall(make) => make(Turn::default()).map_err(EngineError::Settings),
        }
    }
}

/// A target's requests, each as its protocol sends it (`P`): prepared once, or per call.
pub(crate) struct Prepared<P> {
    ready: Vec<P>,
    make: Option<MakeRequest<P>>,
}

/// The request of one call: one of those prepared once, or made for it. A made one is boxed: held
/// inline it would take its whole size in every caller's state, made or not, where the box costs
/// only calls that make one (bench/results/h2-stream-memory-2026-12-07.md).
pub(crate) enum Picked<'a, P> {
    Ready(&'a P),
    Made(Box<P>),
}

impl<P> std::ops::Deref for Picked<'_, P> {
    type Target = P;
    fn deref(&self) -> &P {
        match self {
            Picked::Ready(p) => p,
            Picked::Made(p) => p,
        }
    }
}

impl<P: Send + Sync + 'static> Prepared<P> {
    /// Prepares `data` with `prepare`: now for requests given whole, per call for requests made per call.
    /// A request given whole that cannot be prepared is the error.
    pub(crate) fn new<R: 'static>(
        data: CallData<R>,
        prepare: impl Fn(&R) -> Result<P, String> + Send + Sync + 'static,
    ) -> Result<Self, String> {
        let ready = match data {
            CallData::One(request) => vec![prepare(&request)?],
            CallData::InTurn(requests) if requests.is_empty() => return Err("no requests to send in turn".into()),
            CallData::InTurn(requests) => requests.iter().map(&prepare).collect::<Result<_, _>>()?,
            CallData::PerCall(make) => {
                let make: MakeRequest<P> = Arc::new(move |turn| prepare(&make(turn)?));
                return Ok(Prepared { ready: Vec::new(), make: Some(make) });
            }
        };
        Ok(Prepared { ready, make: None })
    }

    /// Whether calls send different requests.
    pub(crate) fn varies(&self) -> bool {
        self.make.is_some() || self.ready.len() > 1
    }

    /// The request of the current call (see [`Turn::current`]).
    pub(crate) fn pick(&self) -> Result<Picked<'_, P>, String> {
        match (&self.make, self.ready.len()) {
            (None, 1) => Ok(Picked::Ready(&self.ready[0])),
            (None, n) => Ok(Picked::Ready(&self.ready[(Turn::current().call % n as u64) as usize])),
            (Some(make), _) => make(Turn::current()).map(|p| Picked::Made(Box::new(p))),
        }
    }

    /// The first request (prepared once, or made for turn 0): what a probe sends.
    pub(crate) fn first(&self) -> Result<Picked<'_, P>, String> {
        match &self.make {
            None => Ok(Picked::Ready(&self.ready[0])),
            Some(make) => make(Turn::default()).map(|p| Picked::Made(Box::new(p))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(data: CallData<u64>) -> Prepared<String> {
        Prepared::new(data, |n: &u64| if *n < 100 { Ok(format!("r{n}")) } else { Err(format!("{n} is too big")) })
            .unwrap()
    }

    async fn at(p: &Prepared<String>, call: u64, caller: usize) -> Result<String, String> {
        Turn { call, caller }.scope(async { p.pick().map(|r| r.clone()) }).await
    }

    #[tokio::test]
    async fn one_request_serves_every_call() {
        let p = prepared(CallData::One(7));
        assert_eq!(at(&p, 0, 0).await.unwrap(), "r7");
        assert_eq!(at(&p, 41, 3).await.unwrap(), "r7");
    }

    #[tokio::test]
    async fn requests_in_turn_follow_the_call_number() {
        let p = prepared(CallData::InTurn(vec![1, 2, 3]));
        let sent: Vec<String> = sent_by_calls(&p, 0..7).await;
        assert_eq!(sent, ["r1", "r2", "r3", "r1", "r2", "r3", "r1"]);
    }

    async fn sent_by_calls(p: &Prepared<String>, calls: std::ops::Range<u64>) -> Vec<String> {
        let mut out = Vec::new();
        for call in calls {
            out.push(at(p, call, 0).await.unwrap());
        }
        out
    }

    #[tokio::test]
    async fn a_request_per_call_is_made_from_its_turn() {
        let p = prepared(CallData::PerCall(Arc::new(|turn: Turn| Ok(turn.call * 10 + turn.caller as u64))));
        assert_eq!(at(&p, 3, 2).await.unwrap(), "r32");
        assert_eq!(at(&p, 9, 0).await.unwrap(), "r90");
        assert_eq!(at(&p, 12, 0).await.unwrap_err(), "120 is too big");
        assert_eq!(&*p.first().unwrap(), "r0");
    }

    #[test]
    fn requests_given_whole_are_checked_once() {
        let bad = Prepared::new(CallData::InTurn(vec![1, 200]), |n: &u64| match *n < 100 {
            true => Ok(*n),
            false => Err(format!("{n} is too big")),
        });
        assert_eq!(bad.err().unwrap(), "200 is too big");
        assert!(Prepared::new(CallData::<u64>::InTurn(vec![]), |n: &u64| Ok(*n)).is_err());
    }

    #[test]
    fn outside_a_driver_the_turn_is_the_first() {
        assert_eq!(Turn::current(), Turn::default());
    }
}
