package dev.callbench.serve;

import dev.callbench.workloads.Mode;
import dev.callbench.workloads.UserStore;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The flags of the contract's "Serving" section, with the defaults of the Rust servers' serverkit:
 * {@code --host 127.0.0.1 --port 8080 --workers 1 --mode preloaded --users users.json}, plus
 * {@code --version [NAME]} (the server's own versions, for the manifest's [versions]) and {@code --tls} (serve
 * TLS with a self-signed certificate made at start, see {@link Tls}).
 */
public record ServeArgs(String host, int port, int workers, Mode mode, Path users, String version, boolean tls) {

    /** Parses {@code --flag value} and {@code --flag=value}; exits with a one-line message on bad flags. */
    public static ServeArgs parse(String[] args) {
        String host = "127.0.0.1";
        int port = 8080;
        int workers = 1;
        Mode mode = Mode.PRELOADED;
        Path users = Path.of("users.json");
        String version = null;
        boolean tls = false;
        try {
            for (int i = 0; i < args.length; i++) {
                String flag = args[i];
                String value = null;
                int eq = flag.indexOf('=');
                if (flag.startsWith("--") && eq > 0) {
                    value = flag.substring(eq + 1);
                    flag = flag.substring(0, eq);
                }
                if (flag.equals("--version")) {
                    // An optional name: which version to print (the first one if none).
                    boolean named = value == null && i + 1 < args.length && !args[i + 1].startsWith("--");
                    version = value != null ? value : named ? args[++i] : "";
                    continue;
                }
                if (flag.equals("--tls")) {
                    if (value != null) {
                        throw new IllegalArgumentException("--tls takes no value");
                    }
                    tls = true;
                    continue;
                }
                if (value == null) {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException(flag + " needs a value");
                    }
                    value = args[++i];
                }
                switch (flag) {
                    case "--host" -> host = value;
                    case "--port" -> port = range(flag, value, 0, 65535);
                    case "--workers" -> workers = range(flag, value, 1, 1024);
                    case "--mode" -> mode = Mode.parse(value);
                    case "--users" -> users = Path.of(value);
                    default -> throw new IllegalArgumentException("unknown flag " + flag);
                }
            }
        } catch (IllegalArgumentException e) {
            fail(e.getMessage());
        }
        return new ServeArgs(host, port, workers, mode, users, version, tls);
    }

    private static int range(String flag, String value, int min, int max) {
        try {
            int n = Integer.parseInt(value);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(flag + " must be an integer in " + min + ".." + max);
    }

    /** Opens the users file in the chosen mode, or exits with a one-line message. */
    public UserStore openUsers() {
        try {
            return UserStore.open(users, mode);
        } catch (IOException | RuntimeException e) {
            fail("cannot read users file " + users + ": " + e.getMessage()
                    + " (write it with `callbench gen-users`)");
            return null;
        }
    }

    public static void fail(String message) {
        System.err.println("error: " + message);
        System.exit(2);
    }
}
