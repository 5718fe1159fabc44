package dev.callbench.grpc;

import dev.callbench.workloads.Limits;
import dev.callbench.workloads.UserStore;
import io.grpc.ServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import java.util.List;

/** Every service the server answers, and the settings they share: the 4 MiB limit and gzip replies. */
final class Routes {
    private Routes() {}

    /** The contract's services, by the names health reports on. */
    static final List<String> SERVICE_NAMES = List.of(callbench.v1.AuthGrpc.SERVICE_NAME,
            callbench.v1.StudentsGrpc.SERVICE_NAME, callbench.v1.CarsGrpc.SERVICE_NAME,
            callbench.v1.LifeGrpc.SERVICE_NAME, callbench.v1.EchoGrpc.SERVICE_NAME,
            callbench.v1.RecordsGrpc.SERVICE_NAME);

    static <T extends ServerBuilder<T>> T build(T builder, UserStore users) {
        // "" (the whole server) is SERVING from the start; nothing ever turns a service off.
        HealthStatusManager health = new HealthStatusManager();
        for (String name : SERVICE_NAMES) {
            health.setStatus(name, ServingStatus.SERVING);
        }
        return builder
                // grpc-java refuses a longer message (declared length, or gzip-inflated size) with
                // RESOURCE_EXHAUSTED, as the contract wants; exactly 4 MiB passes.
                .maxInboundMessageSize(Limits.MAX_BODY_BYTES)
                .intercept(new GzipReplies())
                .addService(new Services.AuthService(users))
                .addService(new Services.StudentsService())
                .addService(new Services.CarsService())
                .addService(new Services.LifeService())
                .addService(new Services.EchoService())
                .addService(new RecordsService())
                .addService(health.getHealthService())
                // Both reflection versions, so any grpcurl lists everything.
                .addService(ProtoReflectionServiceV1.newInstance())
                .addService(reflectionV1Alpha());
    }

    @SuppressWarnings("deprecation") // v1alpha: still what older clients speak
    private static io.grpc.BindableService reflectionV1Alpha() {
        return ProtoReflectionService.newInstance();
    }
}
