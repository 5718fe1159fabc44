package dev.callbench.grpc;

import dev.callbench.serve.Lifecycle;
import dev.callbench.serve.ServeArgs;
import dev.callbench.serve.Tls;
import dev.callbench.serve.Versions;
import dev.callbench.workloads.UserStore;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** callbench reference server: gRPC on grpc-java (Netty transport, grpc-netty-shaded). */
public final class Main {
    private Main() {}

    /** {@code --version NAME}: what the manifest's [versions] print, read from the loaded jars. */
    private static final Map<String, Supplier<String>> VERSIONS = new LinkedHashMap<>();

    static {
        VERSIONS.put("grpc-java", () -> Versions.ofJar(io.grpc.Server.class));
        VERSIONS.put("protobuf-java", () -> Versions.ofJar(com.google.protobuf.Message.class));
        VERSIONS.put("netty", Main::nettyVersion);
    }

    public static void main(String[] argv) throws IOException, InterruptedException {
        ServeArgs args = ServeArgs.parse(argv);
        if (args.version() != null) {
            Versions.print(args.version(), VERSIONS);
            return;
        }
        UserStore users = args.openUsers();
        Transport transport = Transport.create(args.workers());
        NettyServerBuilder builder = transport.serverBuilder(new InetSocketAddress(args.host(), args.port()));
        if (args.tls()) {
            builder.sslContext(sslContext(Tls.selfSigned()));
        }
        Server server = Routes.build(builder, users).build().start();

        Lifecycle.exitOnSignal(() -> stop(server, transport));
        Lifecycle.announce((InetSocketAddress) server.getListenSockets().get(0));
        server.awaitTermination();
    }

    /**
     * --tls: Netty's TLS as grpc-java configures it (GrpcSslContexts: ALPN h2, HTTP/2's cipher suites; the
     * OpenSSL provider when netty-tcnative loads, else the JDK's), TLS 1.3 and 1.2.
     */
    private static SslContext sslContext(Tls.Pem pem) throws IOException {
        return GrpcSslContexts.forServer(
                        new ByteArrayInputStream(pem.cert().getBytes(StandardCharsets.US_ASCII)),
                        new ByteArrayInputStream(pem.key().getBytes(StandardCharsets.US_ASCII)))
                .protocols("TLSv1.3", "TLSv1.2")
                .build();
    }

    /** The Netty inside grpc-netty-shaded: its versions file is relocated with its classes. */
    private static String nettyVersion() {
        try (InputStream in = Main.class.getResourceAsStream(
                "/META-INF/io.grpc.netty.shaded.io.netty.versions.properties")) {
            Properties versions = new Properties();
            versions.load(in);
            return versions.getProperty("netty-common.version");
        } catch (IOException | RuntimeException e) {
            return "unknown (" + e + ")";
        }
    }

    /** Stops accepting, gives open calls at most one second, then cancels them. */
    private static void stop(Server server, Transport transport) {
        server.shutdown();
        try {
            if (!server.awaitTermination(1, TimeUnit.SECONDS)) {
                server.shutdownNow().awaitTermination(1, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        transport.close();
    }
}
