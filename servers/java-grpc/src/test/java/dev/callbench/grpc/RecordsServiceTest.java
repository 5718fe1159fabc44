package dev.callbench.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import callbench.v1.EchoOuterClass.EchoMessage;
import callbench.v1.EchoOuterClass.Kind;
import callbench.v1.EchoOuterClass.Location;
import callbench.v1.EchoOuterClass.Record;
import callbench.v1.RecordsGrpc;
import callbench.v1.RecordsOuterClass.DownloadRequest;
import callbench.v1.RecordsOuterClass.UploadSummary;
import dev.callbench.workloads.Mode;
import dev.callbench.workloads.UserStore;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** callbench.v1.Records on the server as Main sets it up (one event loop), called over a real socket. */
class RecordsServiceTest {
    private static final long SECONDS = 30;

    private static Transport transport;
    private static Server server;
    private static ManagedChannel channel;

    @BeforeAll
    static void start() throws Exception {
        Path users = Files.createTempFile("cb-users", ".json");
        Files.writeString(users, "[{\"id\":1,\"hash\":\"x\"}]");
        transport = Transport.create(1);
        server = Routes.build(transport.serverBuilder(new InetSocketAddress("127.0.0.1", 0)),
                UserStore.open(users, Mode.PRELOADED)).build().start();
        Files.delete(users);
        int port = ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
        channel = Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create()).build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        transport.close();
    }

    private static Record record(long id, boolean active, int samples) {
        Record.Builder r = Record.newBuilder().setId(id).setActive(active).setKind(Kind.KIND_MEDIUM);
        for (int i = 0; i < samples; i++) {
            r.addSamples(i);
        }
        return r.build();
    }

    /** One call's answers and how it ended. */
    private static final class Answers<T> implements StreamObserver<T> {
        final BlockingQueue<T> messages = new LinkedBlockingQueue<>();
        final CompletableFuture<Status> end = new CompletableFuture<>();

        @Override
        public void onNext(T value) {
            messages.add(value);
        }

        @Override
        public void onError(Throwable t) {
            end.complete(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            end.complete(Status.OK);
        }

        Status status() throws Exception {
            return end.get(SECONDS, TimeUnit.SECONDS);
        }

        T next() throws InterruptedException {
            T message = messages.poll(SECONDS, TimeUnit.SECONDS);
            assertTrue(message != null, "no answer in time");
            return message;
        }
    }

    private static Answers<UploadSummary> upload(List<Record> records) {
        Answers<UploadSummary> answers = new Answers<>();
        StreamObserver<Record> requests = RecordsGrpc.newStub(channel).upload(answers);
        records.forEach(requests::onNext);
        requests.onCompleted();
        return answers;
    }

    @Test
    void healthAndReflectionKnowRecords() throws Exception {
        HealthCheckResponse health = HealthGrpc.newBlockingStub(channel)
                .check(HealthCheckRequest.newBuilder().setService(RecordsGrpc.SERVICE_NAME).build());
        assertEquals(HealthCheckResponse.ServingStatus.SERVING, health.getStatus());

        Answers<ServerReflectionResponse> answers = new Answers<>();
        StreamObserver<ServerReflectionRequest> requests =
                ServerReflectionGrpc.newStub(channel).serverReflectionInfo(answers);
        requests.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
        requests.onNext(ServerReflectionRequest.newBuilder().setFileContainingSymbol(RecordsGrpc.SERVICE_NAME).build());
        requests.onCompleted();
        assertTrue(answers.next().getListServicesResponse().getServiceList().stream()
                .anyMatch(s -> s.getName().equals(RecordsGrpc.SERVICE_NAME)));
        assertTrue(answers.next().getFileDescriptorResponse().getFileDescriptorProtoCount() > 0);
        assertEquals(Status.Code.OK, answers.status().getCode());
    }

    @Test
    void uploadsAreSummedOnceTheClientHalfCloses() throws Exception {
        Answers<UploadSummary> none = upload(List.of());
        assertEquals(Status.Code.OK, none.status().getCode());
        assertEquals(UploadSummary.getDefaultInstance(), none.next());

        Answers<UploadSummary> one = upload(List.of(record(5, true, 2)));
        assertEquals(Status.Code.OK, one.status().getCode());
        assertEquals(UploadSummary.newBuilder().setCount(1).setActiveCount(1).setFirstId(5).setLastId(5)
                .setSampleCount(2).build(), one.next());

        List<Record> many = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            many.add(record(i + 1, i % 2 == 0, 3));
        }
        Answers<UploadSummary> thousand = upload(many);
        assertEquals(Status.Code.OK, thousand.status().getCode());
        assertEquals(UploadSummary.newBuilder().setCount(1000).setActiveCount(500).setFirstId(1).setLastId(1000)
                .setSampleCount(3000).build(), thousand.next());
    }

    @Test
    void anInvalidUploadedRecordIsInvalidArgument() throws Exception {
        Record unknownKind = Record.newBuilder().setId(2).setKindValue(9).build();
        Record infinite = Record.newBuilder().setId(2).setScore(Double.POSITIVE_INFINITY).build();
        Record nanLocation = Record.newBuilder().setLocation(Location.newBuilder().setLatitude(Double.NaN)).build();
        for (Record bad : List.of(unknownKind, infinite, nanLocation)) {
            Answers<UploadSummary> answers = upload(List.of(record(1, true, 0), bad, record(3, true, 0)));
            Status status = answers.status();
            assertEquals(Status.Code.INVALID_ARGUMENT, status.getCode());
            assertTrue(status.getDescription().contains("records[1]"), status.getDescription());
            assertTrue(answers.messages.isEmpty());
        }
    }

    @Test
    void aConversationAnswersEachMessageInOrder() throws Exception {
        // All messages first, then the answers.
        List<EchoMessage> messages = List.of(
                EchoMessage.newBuilder().addRecords(record(1, true, 1)).build(),
                EchoMessage.getDefaultInstance(),
                EchoMessage.newBuilder().addRecords(record(2, false, 0)).addRecords(record(3, true, 4)).build());
        Answers<EchoMessage> answers = new Answers<>();
        StreamObserver<EchoMessage> requests = RecordsGrpc.newStub(channel).converse(answers);
        messages.forEach(requests::onNext);
        requests.onCompleted();
        assertEquals(Status.Code.OK, answers.status().getCode());
        assertEquals(messages, new ArrayList<>(answers.messages));

        // One at a time: every answer comes before the next message is sent.
        Answers<EchoMessage> turns = new Answers<>();
        StreamObserver<EchoMessage> turnRequests = RecordsGrpc.newStub(channel).converse(turns);
        for (EchoMessage m : messages) {
            turnRequests.onNext(m);
            assertEquals(m, turns.next());
        }
        turnRequests.onCompleted();
        assertEquals(Status.Code.OK, turns.status().getCode());

        // None at all.
        Answers<EchoMessage> silent = new Answers<>();
        RecordsGrpc.newStub(channel).converse(silent).onCompleted();
        assertEquals(Status.Code.OK, silent.status().getCode());
        assertTrue(silent.messages.isEmpty());
    }

    @Test
    void anInvalidMessageEndsTheConversationAfterTheAnswersBeforeIt() throws Exception {
        EchoMessage good = EchoMessage.newBuilder().addRecords(record(1, true, 1)).build();
        EchoMessage bad = EchoMessage.newBuilder().addRecords(Record.newBuilder().setKindValue(9)).build();
        Answers<EchoMessage> answers = new Answers<>();
        StreamObserver<EchoMessage> requests = RecordsGrpc.newStub(channel).converse(answers);
        requests.onNext(good);
        requests.onNext(good);
        requests.onNext(bad);
        requests.onNext(good);
        requests.onCompleted();
        assertEquals(Status.Code.INVALID_ARGUMENT, answers.status().getCode());
        assertEquals(List.of(good, good), new ArrayList<>(answers.messages));
    }

    @Test
    void downloadsFollowTheContractsRule() {
        RecordsGrpc.RecordsBlockingStub stub = RecordsGrpc.newBlockingStub(channel);
        assertTrue(!stub.download(DownloadRequest.newBuilder().setCount(0).build()).hasNext());

        Iterator<Record> three = stub.download(DownloadRequest.newBuilder().setCount(3).build());
        Location springfield = Location.newBuilder().setCity("Springfield").setLatitude(39.78).setLongitude(-89.65)
                .build();
        assertEquals(Record.newBuilder().setId(1).setName("record-000000").setScore(0).setActive(true)
                .setKind(Kind.KIND_SMALL).setLocation(springfield).addTags("alpha").addTags("beta")
                .addSamples(0).addSamples(1).addSamples(2).build(), three.next());
        assertEquals(Record.newBuilder().setId(2).setName("record-000001").setScore(0.5).setActive(false)
                .setKind(Kind.KIND_MEDIUM).setLocation(springfield).addTags("alpha").addTags("beta")
                .addSamples(1).addSamples(2).addSamples(3).build(), three.next());
        assertEquals(Kind.KIND_LARGE, three.next().getKind());
        assertTrue(!three.hasNext());

        Iterator<Record> all = stub.download(DownloadRequest.newBuilder().setCount(100_000).build());
        int n = 0;
        Record last = null;
        while (all.hasNext()) {
            last = all.next();
            n++;
        }
        assertEquals(100_000, n);
        assertEquals("record-099999", last.getName());
        assertEquals(49_999.5, last.getScore());

        for (long count : new long[] {-1, 100_001, Long.MAX_VALUE}) {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> stub.download(DownloadRequest.newBuilder().setCount(count).build()).hasNext());
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        }
    }

    /** A client that takes one record at a time gets them all, in order (the server waits for it, not fails). */
    @Test
    void aSlowReaderGetsTheWholeDownload() throws Exception {
        int count = 20_000;
        CompletableFuture<Integer> received = new CompletableFuture<>();
        RecordsGrpc.newStub(channel).download(DownloadRequest.newBuilder().setCount(count).build(),
                new ClientResponseObserver<DownloadRequest, Record>() {
                    private ClientCallStreamObserver<DownloadRequest> call;
                    private int next;

                    @Override
                    public void beforeStart(ClientCallStreamObserver<DownloadRequest> requestStream) {
                        call = requestStream;
                        call.disableAutoRequestWithInitial(1);
                    }

                    @Override
                    public void onNext(Record r) {
                        if (r.getId() != ++next) {
                            received.completeExceptionally(new AssertionError("record " + r.getId() + " out of order"));
                        }
                        call.request(1);
                    }

                    @Override
                    public void onError(Throwable t) {
                        received.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        received.complete(next);
                    }
                });
        try {
            assertEquals(count, received.get(SECONDS, TimeUnit.SECONDS));
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        }
    }
}
