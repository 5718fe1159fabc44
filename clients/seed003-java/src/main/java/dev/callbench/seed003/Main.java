package dev.callbench.seed003;

import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Random;

/**
 * Seed 003's client run: N sequential car + driver calls from a fresh JVM, as the article ran its
 * clients, over REST (WebClient, {@code .block()}) or gRPC (a blocking stub).
 *
 * <pre>java -jar seed003-clients.jar rest|grpc TARGET CALLS [SEED]</pre>
 *
 * TARGET is {@code http://host:port} for REST, {@code grpc://host:port} or {@code host:port} for gRPC.
 * Prints one JSON line per call, {@code {"us": …, "ok": true}} (its time in microseconds), then
 * {@code {"jvm_to_first_call_ms": …, "calls": N, "failed": F}}: how long the JVM ran before the first
 * call began. Exits 1 when a call failed.
 */
public final class Main {
    private Main() {}

    /** One call of a client: sends the car and says whether the same car came back. */
    interface Caller extends AutoCloseable {
        boolean call(Cars.Car car) throws Exception;

        @Override
        void close();
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3 || args.length > 4) {
            System.err.println("usage: seed003-clients rest|grpc TARGET CALLS [SEED]");
            System.exit(2);
        }
        int calls = Integer.parseInt(args[2]);
        long seed = args.length == 4 ? Long.parseLong(args[3]) : 3;
        if (calls < 1) {
            System.err.println("seed003-clients: CALLS must be at least 1");
            System.exit(2);
        }
        Random random = new Random(seed);
        long[] us = new long[calls];
        String[] errors = new String[calls];
        long firstCallAt;
        try (Caller caller = switch (args[0]) {
            case "rest" -> new RestCaller(args[1]);
            case "grpc" -> new GrpcCaller(args[1]);
            default -> throw new IllegalArgumentException("the client is rest or grpc, not " + args[0]);
        }) {
            firstCallAt = System.currentTimeMillis();
            for (int i = 0; i < calls; i++) {
                Cars.Car car = Cars.random(random);
                long start = System.nanoTime();
                try {
                    if (!caller.call(car)) {
                        errors[i] = "the answer is not the car sent";
                    }
                } catch (Exception e) {
                    errors[i] = String.valueOf(e);
                }
                us[i] = (System.nanoTime() - start) / 1000;
            }
        }
        int failed = 0;
        var out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        for (int i = 0; i < calls; i++) {
            if (errors[i] == null) {
                out.write("{\"us\": " + us[i] + ", \"ok\": true}\n");
            } else {
                failed++;
                out.write("{\"us\": " + us[i] + ", \"ok\": false, \"error\": " + Cars.quote(errors[i]) + "}\n");
            }
        }
        long jvm = firstCallAt - ManagementFactory.getRuntimeMXBean().getStartTime();
        out.write("{\"jvm_to_first_call_ms\": " + jvm + ", \"calls\": " + calls + ", \"failed\": " + failed + "}\n");
        out.flush();
        System.exit(failed == 0 ? 0 : 1);
    }
}
