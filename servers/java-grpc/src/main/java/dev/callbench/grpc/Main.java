package dev.callbench.grpc;

import dev.callbench.serve.Lifecycle;
import dev.callbench.serve.ServeArgs;
import dev.callbench.serve.Versions;
import dev.callbench.workloads.UserStore;
import io.grpc.Server;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
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
        Server server = Routes.build(transport.serverBuilder(new InetSocketAddress(args.host(), args.port())), users)
                .build()
                .start();

        Lifecycle.exitOnSignal(() -> stop(server, transport));
        Lifecycle.announce((InetSocketAddress) server.getListenSockets().get(0));
        server.awaitTermination();
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
