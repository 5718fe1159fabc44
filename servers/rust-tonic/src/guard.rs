//! A tower layer in front of every service that enforces what tonic leaves out
//! or answers differently from the contract:
//!
//! - a request whose content-type is not gRPC gets HTTP 415 Unsupported Media
//!   Type, as the gRPC HTTP/2 spec says servers SHOULD, with grpc-status 3
//!   (INVALID_ARGUMENT) in the same headers-only response, as grpc-go answers;
//! - a message whose declared length (the on-the-wire length, compressed or
//!   not) is over the limit gets a trailers-only RESOURCE_EXHAUSTED, where
//!   tonic would say OUT_OF_RANGE. Only the 5-byte frame headers are read, as
//!   the body streams by: the body is never buffered, and the rest of an
//!   over-limit body is never read (h2 resets the stream once we answer).
//!   A call whose requests stream (client-streaming and bidirectional methods)
//!   is handed on at once instead: its client may wait for the answer's headers
//!   before it sends. Every header of it is checked as it passes, the first one
//!   too, and an over-limit one ends the call with RESOURCE_EXHAUSTED.

use bytes::{Buf, Bytes};
use http::header::CONTENT_TYPE;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tonic::Status;
use tower::BoxError;
use tower::{Layer, Service};

/// gRPC frame header: 1 byte compressed flag, 4 bytes big-endian length.
const HEADER_LEN: usize = 5;
const GRPC_CONTENT_TYPE: &[u8] = b"application/grpc";

#[derive(Debug, Clone)]
pub struct GuardLayer {
    max_message_bytes: usize,
    streaming_requests: Arc<[String]>,
}

impl GuardLayer {
    /// Refuses messages declared longer than `max_message_bytes` (exactly that many pass).
    pub fn new(max_message_bytes: usize) -> Self {
        GuardLayer { max_message_bytes, streaming_requests: Arc::new([]) }
    }

    /// The paths (`/package.Service/Method`) of the methods whose requests stream: their calls
    /// are handed on before the first message comes.
    pub fn streaming_requests(self, paths: Vec<String>) -> Self {
        GuardLayer { streaming_requests: paths.into(), ..self }
    }
}

impl<S> Layer<S> for GuardLayer {
    type Service = Guard<S>;
    fn layer(&self, inner: S) -> Guard<S> {
        Guard { inner, max_message_bytes: self.max_message_bytes, streaming_requests: self.streaming_requests.clone() }
    }
}

#[derive(Debug, Clone)]
pub struct Guard<S> {
    inner: S,
    max_message_bytes: usize,
    streaming_requests: Arc<[String]>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B, ResBody> Service<Request<B>> for Guard<S>
where
    S: Service<Request<GuardedBody<B>>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Send,
    B: Body<Data = Bytes> + Unpin + Send + 'static,
    B::Error: Into<BoxError>,
    ResBody: Default + Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Response<ResBody>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if !is_grpc(request.headers()) {
            return Box::pin(std::future::ready(Ok(unsupported_media_type(request.headers()))));
        }
        // The service that was polled ready is the one to call; leave a fresh clone behind.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let limit = self.max_message_bytes;
        let streaming = self.streaming_requests.iter().any(|path| path == request.uri().path());
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let mut body = GuardedBody::new(body, limit);
            // Unary and server-streaming calls cannot answer before the first
            // message anyway, so waiting for its header costs nothing.
            if !streaming {
                if let Err(too_large) = body.read_first_header().await {
                    return Ok(too_large.into_status().into_http());
                }
            }
            inner.call(Request::from_parts(parts, body)).await
        })
    }
}

/// `application/grpc`, alone or followed by `+codec` or `;params` (the rule of
/// grpc-go), in any case.
fn is_grpc(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(CONTENT_TYPE).map(|v| v.as_bytes()) else {
        return false;
    };
    let Some(prefix) = value.get(..GRPC_CONTENT_TYPE.len()) else {
        return false;
    };
    prefix.eq_ignore_ascii_case(GRPC_CONTENT_TYPE)
        && matches!(value.get(GRPC_CONTENT_TYPE.len()), None | Some(b'+' | b';'))
}

fn unsupported_media_type<B: Default>(headers: &HeaderMap) -> Response<B> {
    let got = headers.get(CONTENT_TYPE).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let message = match got {
        Some(got) => format!("invalid gRPC request content-type {got:?}"),
        None => "missing gRPC request content-type".to_string(),
    };
    let mut response = Status::invalid_argument(message).into_http();
    *response.status_mut() = StatusCode::UNSUPPORTED_MEDIA_TYPE;
    response
}

/// A frame header declared a message longer than the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    pub declared: u32,
    pub limit: usize,
}

impl TooLarge {
    fn into_status(self) -> Status {
        Status::resource_exhausted(format!(
            "message of {} bytes is over the limit of {} bytes",
            self.declared, self.limit
        ))
    }
}

/// Follows the gRPC framing across data chunks of any size: skips message
/// bytes, gathers each 5-byte header and checks the length it declares.
#[derive(Debug)]
struct FrameScanner {
    limit: usize,
    header: [u8; HEADER_LEN],
    header_filled: usize,
    message_left: usize,
    headers_seen: u64,
}

impl FrameScanner {
    fn new(limit: usize) -> Self {
        FrameScanner { limit, header: [0; HEADER_LEN], header_filled: 0, message_left: 0, headers_seen: 0 }
    }

    fn scan(&mut self, chunk: &[u8]) -> Result<(), TooLarge> {
        self.scan_at(chunk).map_err(|(_, too_large)| too_large)
    }

    /// As `scan`, and on failure also says how many bytes of `chunk` came before the header
    /// (whole messages, handed on before the failure).
    fn scan_at(&mut self, mut chunk: &[u8]) -> Result<(), (usize, TooLarge)> {
        let len = chunk.len();
        while !chunk.is_empty() {
            if self.message_left > 0 {
                let skip = self.message_left.min(chunk.len());
                self.message_left -= skip;
                chunk = &chunk[skip..];
                continue;
            }
            // Where this header starts in the chunk (0 when it began in an earlier one).
            let header_start = if self.header_filled == 0 { len - chunk.len() } else { 0 };
            let take = (HEADER_LEN - self.header_filled).min(chunk.len());
            self.header[self.header_filled..self.header_filled + take].copy_from_slice(&chunk[..take]);
            self.header_filled += take;
            chunk = &chunk[take..];
            if self.header_filled == HEADER_LEN {
                self.header_filled = 0;
                self.headers_seen += 1;
                let [_flag, length @ ..] = self.header;
                let declared = u32::from_be_bytes(length);
                if declared as usize > self.limit {
                    return Err((header_start, TooLarge { declared, limit: self.limit }));
                }
                self.message_left = declared as usize;
            }
        }
        Ok(())
    }
}

/// The request body handed on: first the frames read ahead (unchanged), then
/// the rest of the body, its frame headers checked as they pass.
pub struct GuardedBody<B> {
    inner: B,
    read_ahead: VecDeque<Result<Frame<Bytes>, BoxError>>,
    scanner: FrameScanner,
    /// The inner body has ended (or failed): never poll it again.
    inner_done: bool,
}

impl<B> GuardedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    fn new(inner: B, limit: usize) -> Self {
        GuardedBody { inner, read_ahead: VecDeque::new(), scanner: FrameScanner::new(limit), inner_done: false }
    }

    /// Reads frames until the first message header is complete (or the body
    /// ends), keeping them to hand on; fails if that header is over the limit.
    async fn read_first_header(&mut self) -> Result<(), TooLarge> {
        while self.scanner.headers_seen == 0 && !self.inner_done {
            match self.inner.frame().await {
                Some(Ok(frame)) => {
                    let is_trailers = frame.is_trailers();
                    if let Some(data) = frame.data_ref() {
                        self.scanner.scan(data)?;
                    }
                    self.read_ahead.push_back(Ok(frame));
                    // No data can follow trailers.
                    self.inner_done |= is_trailers;
                }
                // Handed on as they are: tonic turns them into a status.
                Some(Err(error)) => {
                    self.read_ahead.push_back(Err(error.into()));
                    self.inner_done = true;
                }
                None => self.inner_done = true,
            }
        }
        Ok(())
    }
}

impl<B> Body for GuardedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if let Some(frame) = this.read_ahead.pop_front() {
            return Poll::Ready(Some(frame));
        }
        if this.inner_done {
            return Poll::Ready(None);
        }
        let polled = ready!(Pin::new(&mut this.inner).poll_frame(cx));
        Poll::Ready(match polled {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    if let Err((before, too_large)) = this.scanner.scan_at(data.chunk()) {
                        // A later message of a stream: tonic passes this status on as it is,
                        // after the whole messages before it in the chunk (a conversation
                        // answers them first).
                        this.inner_done = true;
                        let status = Err(too_large.into_status().into());
                        if before == 0 {
                            return Poll::Ready(Some(status));
                        }
                        this.read_ahead.push_back(status);
                        return Poll::Ready(Some(Ok(Frame::data(data.slice(..before)))));
                    }
                }
                Some(Ok(frame))
            }
            Some(Err(error)) => {
                this.inner_done = true;
                Some(Err(error.into()))
            }
            None => {
                this.inner_done = true;
                None
            }
        })
    }

    fn is_end_stream(&self) -> bool {
        self.read_ahead.is_empty() && (self.inner_done || self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        let ahead: u64 =
            self.read_ahead.iter().filter_map(|f| f.as_ref().ok()?.data_ref()).map(|d| d.len() as u64).sum();
        if self.inner_done {
            return SizeHint::with_exact(ahead);
        }
        let inner = self.inner.size_hint();
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower().saturating_add(ahead));
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(ahead));
        }
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream::{self, StreamExt};
    use http_body_util::{Full, StreamBody};
    use std::convert::Infallible;
    use tower::ServiceExt;

    const LIMIT: usize = 16;

    /// A grpc frame header declaring `len` bytes.
    fn header(len: u32) -> Vec<u8> {
        let mut h = vec![0];
        h.extend_from_slice(&len.to_be_bytes());
        h
    }

    /// A body yielding `chunks`, then ending (or, if `hang`, never ending).
    fn body(chunks: Vec<Vec<u8>>, hang: bool) -> impl Body<Data = Bytes, Error = Infallible> + Unpin + Send + 'static {
        let frames = stream::iter(chunks).map(|c| Ok::<_, Infallible>(Frame::data(Bytes::from(c))));
        let tail = if hang { stream::pending().boxed() } else { stream::empty().boxed() };
        StreamBody::new(frames.chain(tail))
    }

    const STREAMING: &str = "/callbench.v1.Records/Converse";

    fn request<B>(content_type: Option<&str>, body: B) -> Request<B> {
        streaming_request(content_type, body, "/callbench.v1.Echo/Echo")
    }

    fn streaming_request<B>(content_type: Option<&str>, body: B, path: &str) -> Request<B> {
        let mut builder = Request::builder().method("POST").uri(path);
        if let Some(ct) = content_type {
            builder = builder.header(CONTENT_TYPE, ct);
        }
        builder.body(body).expect("a valid request")
    }

    /// The dummy inner service: answers 200 with every byte of the body it got,
    /// or grpc-status from a body error.
    async fn inner<B>(request: Request<GuardedBody<B>>) -> Result<Response<Full<Bytes>>, Infallible>
    where
        B: Body<Data = Bytes> + Unpin,
        B::Error: Into<BoxError>,
    {
        match request.into_body().collect().await {
            Ok(collected) => Ok(Response::new(Full::new(collected.to_bytes()))),
            Err(error) => Ok(Status::from_error(error).into_http()),
        }
    }

    async fn call<B>(request: Request<B>) -> Response<Full<Bytes>>
    where
        B: Body<Data = Bytes> + Unpin + Send + 'static,
        B::Error: Into<BoxError>,
    {
        call_with(request, tower::service_fn(inner::<B>)).await
    }

    /// The answer of `service` behind the guard (with STREAMING as its one streaming method).
    async fn call_with<B, S>(request: Request<B>, service: S) -> Response<Full<Bytes>>
    where
        B: Body<Data = Bytes> + Unpin + Send + 'static,
        B::Error: Into<BoxError>,
        S: Service<Request<GuardedBody<B>>, Response = Response<Full<Bytes>>, Error = Infallible>
            + Clone
            + Send
            + 'static,
        S::Future: Send,
    {
        let service = GuardLayer::new(LIMIT).streaming_requests(vec![STREAMING.into()]).layer(service);
        let answer = tokio::time::timeout(std::time::Duration::from_secs(5), service.oneshot(request));
        answer.await.expect("the guard answers without waiting for the whole body").expect("infallible")
    }

    fn grpc_status<B>(response: &Response<B>) -> Option<&str> {
        response.headers().get("grpc-status").and_then(|v| v.to_str().ok())
    }

    async fn body_bytes(response: Response<Full<Bytes>>) -> Vec<u8> {
        response.into_body().collect().await.expect("full bodies do not fail").to_bytes().to_vec()
    }

    #[test]
    fn grpc_content_types() {
        let ok = ["application/grpc", "application/grpc+proto", "application/grpc;charset=utf-8", "Application/GRPC"];
        let refused =
            ["application/json", "application/grpcx", "application/grp", "", "text/plain", "application/grpc-web"];
        for (ct, expected) in ok.iter().map(|c| (c, true)).chain(refused.iter().map(|c| (c, false))) {
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, ct.parse().expect("a header value"));
            assert_eq!(is_grpc(&headers), expected, "{ct}");
        }
        assert!(!is_grpc(&HeaderMap::new()));
    }

    #[tokio::test]
    async fn wrong_or_missing_content_type_is_415() {
        for ct in [Some("application/json"), None] {
            // The body never ends: the guard must not read it.
            let response = call(request(ct, body(vec![], true))).await;
            assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
            assert_eq!(grpc_status(&response), Some("3"));
        }
    }

    #[tokio::test]
    async fn messages_up_to_the_limit_pass_intact() {
        for len in [0, 1, LIMIT as u32] {
            let mut frame = header(len);
            frame.extend(std::iter::repeat_n(7u8, len as usize));
            // Split into one-byte chunks so headers straddle chunks.
            let chunks: Vec<Vec<u8>> = frame.iter().map(|&b| vec![b]).collect();
            let response = call(request(Some("application/grpc"), body(chunks, false))).await;
            assert_eq!(response.status(), StatusCode::OK);
            assert_eq!(grpc_status(&response), None);
            assert_eq!(body_bytes(response).await, frame);
        }
    }

    #[tokio::test]
    async fn an_over_limit_header_is_refused_before_the_body_ends() {
        // The header arrives in two pieces and the body never ends.
        let mut first = header(LIMIT as u32 + 1);
        let second = first.split_off(2);
        let response = call(request(Some("application/grpc"), body(vec![first, second], true))).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(grpc_status(&response), Some("8"));
        assert!(response.headers().contains_key("grpc-message"));
        assert_eq!(response.headers().get(CONTENT_TYPE).map(|v| v.as_bytes()), Some(&b"application/grpc"[..]));
    }

    #[tokio::test]
    async fn the_largest_declared_length_is_refused() {
        let response = call(request(Some("application/grpc"), body(vec![header(u32::MAX)], true))).await;
        assert_eq!(grpc_status(&response), Some("8"));
    }

    #[tokio::test]
    async fn a_later_over_limit_message_fails_the_body() {
        let mut stream = header(2);
        stream.extend([1, 2]);
        let chunks = vec![stream, header(LIMIT as u32 + 1), vec![0; 4]];
        let response = call(request(Some("application/grpc"), body(chunks, false))).await;
        assert_eq!(grpc_status(&response), Some("8"));
    }

    #[tokio::test]
    async fn short_and_empty_bodies_are_handed_on() {
        for chunks in [vec![], vec![vec![0, 0]]] {
            let expected: Vec<u8> = chunks.concat();
            let response = call(request(Some("application/grpc"), body(chunks, false))).await;
            assert_eq!(response.status(), StatusCode::OK);
            assert_eq!(body_bytes(response).await, expected);
        }
    }

    #[tokio::test]
    async fn a_streaming_call_is_handed_on_before_its_first_message() {
        // The body never sends a byte; the inner service answers at once (its headers).
        let answer_at_once = tower::service_fn(|_: Request<GuardedBody<_>>| async {
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"headers"))))
        });
        let response =
            call_with(streaming_request(Some("application/grpc"), body(vec![], true), STREAMING), answer_at_once);
        assert_eq!(body_bytes(response.await).await, b"headers");
    }

    #[tokio::test]
    async fn a_streaming_calls_first_over_limit_message_fails_its_body() {
        let chunks = vec![header(LIMIT as u32 + 1), vec![0; 4]];
        let response = call(streaming_request(Some("application/grpc"), body(chunks, true), STREAMING)).await;
        assert_eq!(grpc_status(&response), Some("8"));
        // Its content type is still checked first.
        let response = call(streaming_request(Some("text/plain"), body(vec![], true), STREAMING)).await;
        assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }

    #[test]
    fn the_scanner_follows_several_messages_in_one_chunk() {
        let mut scanner = FrameScanner::new(LIMIT);
        let mut chunk = header(3);
        chunk.extend([1, 2, 3]);
        chunk.extend(header(0));
        chunk.extend(header(LIMIT as u32));
        assert_eq!(scanner.scan(&chunk), Ok(()));
        assert_eq!(scanner.headers_seen, 3);
        assert_eq!(scanner.scan(&[0; LIMIT]), Ok(()));
        assert_eq!(scanner.scan(&header(LIMIT as u32 + 1)), Err(TooLarge { declared: LIMIT as u32 + 1, limit: LIMIT }));
    }

    #[test]
    fn the_scanner_says_where_an_over_limit_header_starts() {
        let too_large = TooLarge { declared: LIMIT as u32 + 1, limit: LIMIT };
        let mut chunk = header(2);
        chunk.extend([1, 2]);
        chunk.extend(header(LIMIT as u32 + 1));
        assert_eq!(FrameScanner::new(LIMIT).scan_at(&chunk), Err((7, too_large)));
        // A header begun in an earlier chunk: nothing of this one comes before it.
        let mut scanner = FrameScanner::new(LIMIT);
        let (first, second) = chunk.split_at(9);
        assert_eq!(scanner.scan_at(first), Ok(()));
        assert_eq!(scanner.scan_at(second), Err((0, too_large)));
    }

    #[tokio::test]
    async fn the_messages_before_an_over_limit_one_are_handed_on_first() {
        let mut first = header(2);
        first.extend([1, 2]);
        let mut chunk = first.clone();
        chunk.extend(header(LIMIT as u32 + 1));
        let mut body = GuardedBody::new(body(vec![chunk], true), LIMIT);
        let frame = body.frame().await.expect("a frame").expect("data");
        assert_eq!(frame.into_data().expect("data"), first);
        let error = body.frame().await.expect("a frame").expect_err("then the failure");
        assert_eq!(Status::from_error(error).code(), tonic::Code::ResourceExhausted);
        assert!(body.frame().await.is_none());
    }
}
