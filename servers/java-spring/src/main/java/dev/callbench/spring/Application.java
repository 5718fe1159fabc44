package dev.callbench.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.callbench.serve.Lifecycle;
import dev.callbench.serve.ServeArgs;
import dev.callbench.serve.Tls;
import dev.callbench.serve.Versions;
import dev.callbench.workloads.UserStore;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

/** callbench reference server: REST/JSON on Spring Boot 3 (Spring MVC, embedded Tomcat, Jackson). */
@SpringBootApplication
public class Application {

    /** {@code --version NAME}: what the manifest's [versions] print, read from the loaded classes. */
    private static final Map<String, Supplier<String>> VERSIONS = new LinkedHashMap<>();

    static {
        VERSIONS.put("spring-boot", SpringBootVersion::getVersion);
        VERSIONS.put("spring-framework", org.springframework.core.SpringVersion::getVersion);
        // "Apache Tomcat/10.1.55": the version Tomcat reports in its own server header and logs.
        VERSIONS.put("tomcat", () -> org.apache.catalina.util.ServerInfo.getServerInfo().replaceFirst("^[^/]*/", ""));
        VERSIONS.put("jackson", () -> com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString());
    }

    public static void main(String[] argv) {
        ServeArgs args = ServeArgs.parse(argv);
        if (args.version() != null) {
            Versions.print(args.version(), VERSIONS);
            return;
        }
        UserStore users = args.openUsers();
        InetAddress host = resolve(args.host());

        SpringApplication app = new SpringApplication(Application.class);
        // The flags, as properties (the settings that do not depend on them are in application.properties).
        // --workers N: N Tomcat request threads, all started at once. Tomcat's NIO connector parks idle
        // keep-alive connections in its poller, so a thread is busy only while it serves a call; the calls
        // are CPU-bound, and more threads than cores measured no faster here (see README.md).
        // The same N for Spring's task executor, whose threads write the streamed downloads
        // (StreamingResponseBody) once their request thread has returned (Boot's default is 8).
        String threads = Integer.toString(args.workers());
        Map<String, Object> flags = new HashMap<>(Map.of(
                "server.address", host.getHostAddress(),
                "server.port", Integer.toString(args.port()),
                "server.tomcat.threads.max", threads,
                "server.tomcat.threads.min-spare", threads,
                "spring.task.execution.pool.core-size", threads,
                "spring.task.execution.pool.max-size", threads));
        if (args.tls()) {
            flags.putAll(tlsProperties(Tls.selfSigned()));
        }
        app.addInitializers(context -> {
            // First: the flags win over everything, environment variables such as SERVER_PORT included.
            context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("flags", flags));
            context.getBeanFactory().registerSingleton("userStore", users);
        });
        // Spring Boot's shutdown hook closes the context (gracefully, application.properties); the handler
        // only makes the exit status 0, from the first moment.
        Lifecycle.exitOnSignal(() -> {});
        // Spring's own flags are not used: ours are --flag value, which Spring would not read anyway.
        ConfigurableApplicationContext context = app.run();
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        Lifecycle.announce(host, port);
    }

    /**
     * --tls: Tomcat's own TLS (JSSE) serving the certificate through a Spring Boot SSL bundle, whose PEM
     * properties take the PEM text itself (no file on disk). TLS 1.3 and 1.2; HTTP/1.1 only (no ALPN), as the
     * server is without TLS.
     */
    private static Map<String, Object> tlsProperties(Tls.Pem pem) {
        String bundle = "spring.ssl.bundle.pem.callbench.";
        return Map.of(
                bundle + "keystore.certificate", pem.cert(),
                bundle + "keystore.private-key", pem.key(),
                bundle + "options.enabled-protocols", "TLSv1.3,TLSv1.2",
                "server.ssl.bundle", "callbench");
    }

    private static InetAddress resolve(String host) {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            ServeArgs.fail("cannot resolve --host " + host);
            return null;
        }
    }
}
