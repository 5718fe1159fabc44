package dev.callbench.grpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;

/**
 * Replies gzip-compressed. grpc-java only uses the compressor when the client's {@code grpc-accept-encoding}
 * names it, and sends the reply uncompressed otherwise; gzip requests are accepted without any setting.
 */
final class GzipReplies implements ServerInterceptor {
    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        call.setCompression("gzip");
        return next.startCall(call, headers);
    }
}
