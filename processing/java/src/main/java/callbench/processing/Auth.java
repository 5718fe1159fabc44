package callbench.processing;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * Seed 000's processing step in Java: read user.json, parse all of it with Jackson into a
 * {@code List<User>}, find the user by id with a stream, SHA-512 hex of the password. Timed per
 * iteration with {@link System#nanoTime()}.
 */
public final class Auth {
    private static final String USAGE =
            "usage: processing-java --users PATH --id N --password P [--iterations K] [--warmup W]";

    /** One entry of users.json. */
    public record User(long id, String hash) {}

    /** The found user and the hash of the password. */
    record Result(User user, String hash) {}

    /** Thrown for bad command-line arguments. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    // One mapper for the whole process, as Jackson recommends: it is thread-safe and caches
    // its (de)serializers, so only the file is read and parsed anew on every call.
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final TypeReference<List<User>> USER_LIST = new TypeReference<>() {};

    private Auth() {}

    /** One iteration, the article's steps: the file is read and parsed on every call. */
    static Optional<Result> authenticate(Path usersPath, long inputId, String inputPassword)
            throws IOException, NoSuchAlgorithmException {
        String json = Files.readString(usersPath);
        List<User> users = MAPPER.readValue(json, USER_LIST);
        Optional<User> user = users.stream().filter(u -> u.id() == inputId).findFirst();
        if (user.isEmpty()) {
            return Optional.empty();
        }
        byte[] digest = MessageDigest.getInstance("SHA-512")
                .digest(inputPassword.getBytes(StandardCharsets.UTF_8));
        return Optional.of(new Result(user.get(), HexFormat.of().formatHex(digest)));
    }

    public static void main(String[] argv) {
        System.exit(run(argv));
    }

    static int run(String[] argv) {
        String users = null;
        String password = null;
        Long id = null;
        long iterations = 1;
        long warmup = 0;
        try {
            for (int i = 0; i < argv.length; i += 2) {
                if (i + 1 >= argv.length) {
                    throw new UsageException(argv[i] + " needs a value");
                }
                String value = argv[i + 1];
                switch (argv[i]) {
                    case "--users" -> users = value;
                    case "--id" -> id = integer(argv[i], value, Long.MIN_VALUE);
                    case "--password" -> password = value;
                    case "--iterations" -> iterations = integer(argv[i], value, 1);
                    case "--warmup" -> warmup = integer(argv[i], value, 0);
                    default -> throw new UsageException("unknown argument " + argv[i]);
                }
            }
            if (users == null) throw new UsageException("--users is required");
            if (id == null) throw new UsageException("--id is required");
            if (password == null) throw new UsageException("--password is required");
        } catch (UsageException e) {
            System.err.println("error " + e.getMessage() + "; " + USAGE);
            return 2;
        }

        Path usersPath = Path.of(users);
        List<Long> times = new ArrayList<>();
        String last = null;
        for (long i = 0; i < warmup + iterations; i++) {
            long start = System.nanoTime();
            Optional<Result> result;
            try {
                result = authenticate(usersPath, id, password);
            } catch (IOException | NoSuchAlgorithmException e) {
                System.err.println("error " + e);
                return 1;
            }
            long elapsed = System.nanoTime() - start;
            // Checked outside the timed part: every result is used, so the JIT cannot drop any work.
            if (result.isEmpty()) {
                System.err.println("error user " + id + " not found");
                return 2;
            }
            Result r = result.get();
            if (r.user().id() != id || (last != null && !r.hash().equals(last))) {
                System.err.println("error inconsistent result");
                return 1;
            }
            last = r.hash();
            if (i >= warmup) {
                times.add(elapsed);
            }
        }
        StringBuilder out = new StringBuilder("hash ").append(last).append('\n');
        for (long ns : times) {
            out.append("ns ").append(ns).append('\n');
        }
        System.out.print(out);
        System.out.flush();
        return 0;
    }

    private static long integer(String flag, String text, long min) throws UsageException {
        long value;
        try {
            value = Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new UsageException(flag + ": not an integer: " + text);
        }
        if (value < min) {
            throw new UsageException(flag + ": must be >= " + min + ": " + text);
        }
        return value;
    }
}
