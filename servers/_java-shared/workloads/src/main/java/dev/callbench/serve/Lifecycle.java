package dev.callbench.serve;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/** The start and stop steps every Java server shares: the ready line, and SIGINT/SIGTERM. */
public final class Lifecycle {
    private Lifecycle() {}

    /** The line the harness waits for: {@code listening on HOST:PORT}, flushed at once. */
    public static void announce(InetAddress address, int port) {
        String host = address instanceof Inet6Address ? "[" + compressed(address.getHostAddress()) + "]"
                : address.getHostAddress();
        System.out.println("listening on " + host + ":" + port);
        System.out.flush();
    }

    /** An IPv6 address as RFC 5952 writes it ({@code ::1}); Java writes {@code 0:0:0:0:0:0:0:1}. */
    static String compressed(String full) {
        String[] groups = full.replaceFirst("%.*$", "").split(":");
        int bestStart = -1;
        int bestLength = 1; // a single 0 group stays as it is
        for (int i = 0; i < groups.length; ) {
            int j = i;
            while (j < groups.length && groups[j].equals("0")) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        if (bestStart < 0) {
            return String.join(":", groups);
        }
        String head = String.join(":", java.util.Arrays.copyOfRange(groups, 0, bestStart));
        String tail = String.join(":", java.util.Arrays.copyOfRange(groups, bestStart + bestLength, groups.length));
        return head + "::" + tail;
    }

    public static void announce(InetSocketAddress address) {
        announce(address.getAddress(), address.getPort());
    }

    /**
     * On SIGINT or SIGTERM: runs {@code stop}, then exits with status 0. The JVM's own handling would run the
     * shutdown hooks too, but then exit with 128 + the signal (130, 143), which is not a clean stop.
     */
    public static void exitOnSignal(Runnable stop) {
        SignalHandler handler = signal -> {
            try {
                stop.run();
            } finally {
                System.exit(0);
            }
        };
        Signal.handle(new Signal("TERM"), handler);
        Signal.handle(new Signal("INT"), handler);
    }
}
