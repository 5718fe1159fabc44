//! `callbench.v1.Records`, the streaming calls: an upload summed up as its records come, a
//! conversation that answers each message as soon as it is read, and a download whose records are
//! made as they are sent. Records are checked exactly as Echo checks them: the contract crate's
//! conversion (an unknown kind is INVALID_ARGUMENT) and the workload's finiteness check.

use crate::services::echo_message;
use crate::status::from_workload;
use callbench_contract::pb;
use callbench_workloads::echo::{self, EchoMessage};
use callbench_workloads::records::{self, UploadSummary};
use callbench_workloads::WorkloadError;
use futures_util::stream::{self, Stream};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tonic::{Request, Response, Status, Streaming};

pub struct RecordsService;

/// The records of a download, made one by one as tonic encodes them.
pub type DownloadStream = stream::Iter<std::iter::Map<std::ops::Range<usize>, fn(usize) -> Result<pb::Record, Status>>>;

#[tonic::async_trait]
impl pb::records_server::Records for RecordsService {
    async fn upload(&self, request: Request<Streaming<pb::Record>>) -> Result<Response<pb::UploadSummary>, Status> {
        let mut records = request.into_inner();
        let mut summary = UploadSummary::default();
        // A status from the stream (an undecodable or over-limit message) ends the call as it is.
        while let Some(record) = records.message().await? {
            let record = record_from_pb(record).map_err(|e| invalid_record(summary.count, e))?;
            summary.add(&record).map_err(from_workload)?;
        }
        Ok(Response::new(summary_to_pb(summary)))
    }

    type ConverseStream = Conversation;

    async fn converse(&self, request: Request<Streaming<pb::EchoMessage>>) -> Result<Response<Conversation>, Status> {
        Ok(Response::new(Conversation { inbound: request.into_inner(), ended: false }))
    }

    type DownloadStream = DownloadStream;

    async fn download(&self, request: Request<pb::DownloadRequest>) -> Result<Response<DownloadStream>, Status> {
        let count = records::download_count(request.into_inner().count).map_err(from_workload)?;
        let make: fn(usize) -> Result<pb::Record, Status> = |i| Ok(record_to_pb(records::downloaded(i)));
        Ok(Response::new(stream::iter((0..count).map(make))))
    }
}

/// The answers of a conversation: each message checked and given back as soon as it is read
/// (tonic sends what it has whenever the inbound side has nothing more yet); the first invalid
/// message, or a status from the inbound stream, ends it after the answers before it.
pub struct Conversation {
    inbound: Streaming<pb::EchoMessage>,
    ended: bool,
}

impl Stream for Conversation {
    type Item = Result<pb::EchoMessage, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let answer = match ready!(Pin::new(&mut self.inbound).poll_next(cx)) {
            Some(Ok(message)) => echo_message(message),
            Some(Err(status)) => Err(status),
            None => return Poll::Ready(None),
        };
        self.ended = answer.is_err();
        Poll::Ready(Some(answer))
    }
}

/// One record through Echo's own conversion: INVALID_ARGUMENT for an unknown kind.
fn record_from_pb(record: pb::Record) -> Result<echo::Record, WorkloadError> {
    let message = EchoMessage::try_from(pb::EchoMessage { records: vec![record] })?;
    Ok(message.records.into_iter().next().expect("one record in, one out"))
}

fn record_to_pb(record: echo::Record) -> pb::Record {
    let message = pb::EchoMessage::from(EchoMessage { records: vec![record] });
    message.records.into_iter().next().expect("one record in, one out")
}

/// The conversion's error names the record by its place in the upload, not in a one-record message.
fn invalid_record(index: i64, error: WorkloadError) -> Status {
    let detail = error.message.strip_prefix("records[0].").unwrap_or(&error.message);
    from_workload(WorkloadError { message: format!("record {index}: {detail}"), ..error })
}

fn summary_to_pb(s: UploadSummary) -> pb::UploadSummary {
    pb::UploadSummary {
        count: s.count,
        active_count: s.active_count,
        first_id: s.first_id,
        last_id: s.last_id,
        sample_count: s.sample_count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_convert_both_ways_and_unknown_kinds_are_invalid() {
        let record = records::downloaded(4);
        assert_eq!(record_from_pb(record_to_pb(record.clone())).unwrap(), record);
        let error = record_from_pb(pb::Record { kind: 9, ..Default::default() }).unwrap_err();
        let status = invalid_record(3, error);
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert_eq!(status.message(), "record 3: kind: unknown value 9");
    }

    #[test]
    fn summaries_keep_every_field() {
        let s = UploadSummary { count: 5, active_count: 3, first_id: 1, last_id: 5, sample_count: 15 };
        let pb::UploadSummary { count, active_count, first_id, last_id, sample_count } = summary_to_pb(s);
        assert_eq!((count, active_count, first_id, last_id, sample_count), (5, 3, 1, 5, 15));
    }
}
