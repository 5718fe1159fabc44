package dev.callbench.grpc;

import callbench.v1.EchoOuterClass.EchoMessage;
import callbench.v1.EchoOuterClass.Record;
import callbench.v1.RecordsGrpc;
import callbench.v1.RecordsOuterClass.DownloadRequest;
import callbench.v1.RecordsOuterClass.UploadSummary;
import dev.callbench.workloads.Records;
import dev.callbench.workloads.WorkloadException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * callbench.v1.Records, the streaming calls, on the event-loop threads as every call here (direct executor):
 * each message is handled as it arrives or leaves, so a stream never sits whole in memory. Converse reads the
 * next message and Download makes the next record only while the client takes the answers (grpc-java's
 * {@code isReady} and on-ready handler, its flow control for observers); Upload reads as grpc-java delivers.
 * A record is checked as echo checks it.
 */
final class RecordsService extends RecordsGrpc.RecordsImplBase {

    /**
     * Counts the records until the client half-closes, then answers their summary; the first invalid record ends
     * the call with INVALID_ARGUMENT.
     */
    @Override
    public StreamObserver<Record> upload(StreamObserver<UploadSummary> reply) {
        return new StreamObserver<>() {
            private final Records.Upload upload = new Records.Upload();
            private boolean failed;

            @Override
            public void onNext(Record record) {
                if (failed) {
                    return;
                }
                try {
                    Convert.add(upload, record);
                } catch (WorkloadException e) {
                    failed = true;
                    reply.onError(Services.status(e));
                }
            }

            @Override
            public void onError(Throwable t) {
                // The client went away: there is no one to answer.
            }

            @Override
            public void onCompleted() {
                if (!failed) {
                    reply.onNext(Convert.summary(upload.summary()));
                    reply.onCompleted();
                }
            }
        };
    }

    /**
     * Answers every message unchanged as soon as it is read, and ends the call when the client half-closes; an
     * invalid message ends it with INVALID_ARGUMENT after the answers to the messages before it. The next
     * message is asked for only while the answers can be sent, so a client that does not read its answers
     * stops the conversation instead of filling the server's memory.
     */
    @Override
    public StreamObserver<EchoMessage> converse(StreamObserver<EchoMessage> reply) {
        ServerCallStreamObserver<EchoMessage> call = (ServerCallStreamObserver<EchoMessage>) reply;
        call.disableAutoRequest();
        Conversation conversation = new Conversation(call);
        call.setOnReadyHandler(conversation::ready);
        conversation.ready(); // the first message, if the call is already ready
        return conversation;
    }

    /** Sends the count records of the contract's rule, one message each, made as they are sent. */
    @Override
    public void download(DownloadRequest request, StreamObserver<Record> reply) {
        int count;
        try {
            count = Records.checkDownload(request.getCount());
        } catch (WorkloadException e) {
            reply.onError(Services.status(e));
            return;
        }
        ServerCallStreamObserver<Record> call = (ServerCallStreamObserver<Record>) reply;
        Download download = new Download(call, count);
        call.setOnCancelHandler(download::cancel);
        call.setOnReadyHandler(download::send);
        download.send();
    }

    /** One Converse call: one message asked for at a time, while the call can take the answer. */
    private static final class Conversation implements StreamObserver<EchoMessage> {
        private final ServerCallStreamObserver<EchoMessage> call;
        private boolean asked; // a message is asked for and not yet read
        private boolean failed;

        Conversation(ServerCallStreamObserver<EchoMessage> call) {
            this.call = call;
        }

        /** Asks for the next message once the call can send again. */
        void ready() {
            if (!asked && !failed && call.isReady()) {
                asked = true;
                call.request(1);
            }
        }

        @Override
        public void onNext(EchoMessage message) {
            asked = false;
            if (failed) {
                return;
            }
            try {
                Convert.checkEcho(message);
            } catch (WorkloadException e) {
                failed = true;
                call.onError(Services.status(e));
                return;
            }
            call.onNext(message);
            ready();
        }

        @Override
        public void onError(Throwable t) {
            // The client went away: there is no one to answer.
        }

        @Override
        public void onCompleted() {
            if (!failed) {
                call.onCompleted();
            }
        }
    }

    /** One Download call: records made and sent while the call is ready, resumed by its on-ready handler. */
    private static final class Download {
        private final ServerCallStreamObserver<Record> call;
        private final int count;
        private int next;
        private boolean done;

        Download(ServerCallStreamObserver<Record> call, int count) {
            this.call = call;
            this.count = count;
        }

        void send() {
            while (!done && next < count && call.isReady()) {
                call.onNext(Convert.record(Records.downloaded(next++)));
            }
            if (!done && next == count) {
                done = true;
                call.onCompleted();
            }
        }

        /** The client went away: nothing more is sent. */
        void cancel() {
            done = true;
        }
    }
}
