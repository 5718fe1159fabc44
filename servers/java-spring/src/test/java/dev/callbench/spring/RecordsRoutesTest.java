package dev.callbench.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.callbench.workloads.Mode;
import dev.callbench.workloads.UserStore;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

/** The records routes on the application as Application.main starts it (Tomcat on a free port), over HTTP/1.1. */
class RecordsRoutesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NDJSON = "application/x-ndjson";

    private static ConfigurableApplicationContext context;
    private static HttpClient client;
    private static String base;

    @BeforeAll
    static void start() throws IOException {
        Path users = Files.createTempFile("cb-users", ".json");
        Files.writeString(users, "[{\"id\":1,\"hash\":\"x\"}]");
        UserStore store = UserStore.open(users, Mode.PRELOADED);
        Files.delete(users);
        SpringApplication app = new SpringApplication(Application.class);
        Map<String, Object> flags = Map.of("server.address", "127.0.0.1", "server.port", "0",
                "server.tomcat.threads.max", "2", "spring.task.execution.pool.core-size", "1");
        app.addInitializers(c -> {
            c.getEnvironment().getPropertySources().addFirst(new MapPropertySource("flags", flags));
            c.getBeanFactory().registerSingleton("userStore", store);
        });
        context = app.run();
        base = "http://127.0.0.1:" + ((WebServerApplicationContext) context).getWebServer().getPort();
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest.Builder post(String path, String contentType, HttpRequest.BodyPublisher body) {
        return HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", contentType).POST(body);
    }

    /** A body of unknown length: the JDK client sends it chunked. */
    private static HttpRequest.BodyPublisher chunked(byte[] body) {
        return HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body));
    }

    private static String summary(long count, long active, long first, long last, long samples) {
        return "{\"count\":" + count + ",\"activeCount\":" + active + ",\"firstId\":" + first + ",\"lastId\":" + last
                + ",\"sampleCount\":" + samples + "}";
    }

    private static String thousandLines() {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 1000; i++) {
            lines.append("{\"id\":").append(i + 1).append(",\"active\":").append(i % 2 == 0)
                    .append(",\"kind\":\"KIND_LARGE\",\"samples\":[1,2,3]}\n");
        }
        return lines.toString();
    }

    @Test
    void aBatchIsSummed() throws Exception {
        HttpResponse<String> r = send(post("/records/batch", "application/json", HttpRequest.BodyPublishers.ofString(
                "{\"records\":[{\"id\":3,\"active\":true,\"samples\":[1,2]},{\"id\":9}]}")));
        assertEquals(200, r.statusCode());
        assertEquals(summary(2, 1, 3, 9, 2), r.body());
        assertEquals(summary(0, 0, 0, 0, 0), send(post("/records/batch", "application/json",
                HttpRequest.BodyPublishers.ofString("{\"records\":[]}"))).body());
        for (String bad : List.of("{}", "{\"records\":null}", "{\"records\":[{\"kind\":9}]}",
                "{\"records\":[{\"kind\":\"KIND_HUGE\"}]}", "{\"records\":[{\"id\":\"1\"}]}")) {
            assertEquals(400, send(post("/records/batch", "application/json",
                    HttpRequest.BodyPublishers.ofString(bad))).statusCode(), bad);
        }
    }

    @Test
    void anUploadIsReadLineByLineChunkedOrNot() throws Exception {
        byte[] thousand = thousandLines().getBytes(StandardCharsets.UTF_8);
        String expected = summary(1000, 500, 1, 1000, 3000);
        for (HttpRequest.BodyPublisher body : List.of(HttpRequest.BodyPublishers.ofByteArray(thousand),
                chunked(thousand))) {
            HttpResponse<String> r = send(post("/records/upload", NDJSON, body));
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(expected, r.body());
        }
        // Blank lines skipped, CRLF taken, the last line without its newline, parameters in the type.
        String lines = "\n{\"id\":4,\"active\":true}\r\n  \n{\"id\":6,\"samples\":[7]}";
        HttpResponse<String> r = send(post("/records/upload", NDJSON + "; charset=utf-8",
                HttpRequest.BodyPublishers.ofString(lines)));
        assertEquals(summary(2, 1, 4, 6, 1), r.body());
        assertEquals(summary(0, 0, 0, 0, 0),
                send(post("/records/upload", NDJSON, HttpRequest.BodyPublishers.noBody())).body());
    }

    @Test
    void aBadUploadIsRefused() throws Exception {
        assertEquals(415, send(post("/records/upload", "application/json",
                HttpRequest.BodyPublishers.ofString("{\"id\":1}\n"))).statusCode());
        for (String bad : List.of("{\"id\":1}\n{\"id\":\"2\"}\n", "{\"id\":1}\nnull\n", "[]\n", "{\"id\":1} {}\n",
                "{\"kind\":\"KIND_HUGE\"}\n", "{\"id\":1\n")) {
            HttpResponse<String> r = send(post("/records/upload", NDJSON, HttpRequest.BodyPublishers.ofString(bad)));
            assertEquals(400, r.statusCode(), bad);
            assertEquals("INVALID_ARGUMENT", JSON.readTree(r.body()).path("error").path("code").asText());
        }
        // A line of exactly 4 MiB passes; one byte more is 413, chunked or not.
        int limit = 4 * 1024 * 1024;
        String head = "{\"id\":1,\"name\":\"";
        String longest = head + "x".repeat(limit - head.length() - 2) + "\"}";
        assertEquals(summary(1, 0, 1, 1, 0), send(post("/records/upload", NDJSON,
                HttpRequest.BodyPublishers.ofString(longest + "\n"))).body());
        byte[] tooLong = ("{}\n" + head + "x".repeat(limit - head.length() - 1) + "\"}\n")
                .getBytes(StandardCharsets.UTF_8);
        for (HttpRequest.BodyPublisher body : List.of(HttpRequest.BodyPublishers.ofByteArray(tooLong),
                chunked(tooLong))) {
            assertEquals(413, send(post("/records/upload", NDJSON, body)).statusCode());
        }
    }

    @Test
    void aDownloadIsStreamedAsNdjson() throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(base + "/records?count=3")));
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith(NDJSON));
        assertEquals("chunked", r.headers().firstValue("Transfer-Encoding").orElse(""));
        String[] lines = r.body().split("\n", -1);
        assertEquals(4, lines.length); // every line ends in \n
        assertEquals("", lines[3]);
        assertEquals(JSON.readTree("{\"id\":2,\"name\":\"record-000001\",\"score\":0.5,\"active\":false,"
                + "\"kind\":\"KIND_MEDIUM\",\"location\":{\"city\":\"Springfield\",\"latitude\":39.78,"
                + "\"longitude\":-89.65},\"tags\":[\"alpha\",\"beta\"],\"samples\":[1,2,3]}"), JSON.readTree(lines[1]));
        assertTrue(lines[0].startsWith("{\"id\":1,") && lines[2].startsWith("{\"id\":3,"), r.body());

        HttpResponse<String> none = send(HttpRequest.newBuilder(URI.create(base + "/records?count=0")));
        assertEquals(200, none.statusCode());
        assertEquals("", none.body());

        HttpResponse<String> all = send(HttpRequest.newBuilder(URI.create(base + "/records?count=100000")));
        String[] allLines = all.body().split("\n");
        assertEquals(100_000, allLines.length);
        JsonNode last = JSON.readTree(allLines[99_999]);
        assertEquals("record-099999", last.path("name").asText());
        assertEquals(100_001, last.path("samples").path(2).asLong());

        for (String query : List.of("", "?count=", "?count=abc", "?count=1.5", "?count=-1", "?count=100001",
                "?count=99999999999999999999")) {
            assertEquals(400, send(HttpRequest.newBuilder(URI.create(base + "/records" + query))).statusCode(), query);
        }
    }
}
