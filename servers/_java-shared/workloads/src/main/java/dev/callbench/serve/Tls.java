package dev.callbench.serve;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.cert.CertificateFactory;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * {@code --tls}: a fresh self-signed certificate at every start, as the Rust and Go servers make theirs: an
 * ECDSA P-256 key and a certificate for localhost, 127.0.0.1 and ::1, made by the openssl command line (the
 * JDK can serve a certificate but has no public API to make one). The framework serves it with its own TLS.
 */
public final class Tls {
    private Tls() {}

    /** A certificate and its private key (PKCS#8), both PEM text. */
    public record Pem(String cert, String key) {}

    private static final List<String> NAMES = List.of("localhost", "127.0.0.1", "::1");

    /** Makes the key and certificate and prints the certificate's SHA-256 fingerprint on stderr. */
    public static Pem selfSigned() {
        Path dir = null;
        try {
            dir = Files.createTempDirectory("callbench-tls-");
            Path cert = dir.resolve("cert.pem");
            Path key = dir.resolve("key.pem");
            String altNames = NAMES.stream()
                    .map(n -> (Character.isDigit(n.charAt(0)) || n.contains(":") ? "IP:" : "DNS:") + n)
                    .collect(Collectors.joining(","));
            Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec",
                    "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key.toString(),
                    "-out", cert.toString(), "-days", "3650", "-subj", "/O=callbench (self-signed)/CN=localhost",
                    "-addext", "subjectAltName=" + altNames, "-addext", "extendedKeyUsage=serverAuth")
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            String errors = new String(openssl.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (openssl.waitFor() != 0) {
                ServeArgs.fail("cannot make a certificate: " + errors.substring(errors.lastIndexOf('\n') + 1));
            }
            Pem pem = new Pem(Files.readString(cert), Files.readString(key));
            System.err.println("tls: self-signed certificate for " + String.join(", ", NAMES)
                    + ", SHA-256 fingerprint " + fingerprint(pem.cert()));
            return pem;
        } catch (IOException | GeneralSecurityException e) {
            ServeArgs.fail("cannot make a certificate: " + e.getMessage()
                    + (e.getMessage() != null && e.getMessage().contains("openssl") ? " (apt-get install openssl)" : ""));
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ServeArgs.fail("interrupted while making a certificate");
            return null;
        } finally {
            deleteTree(dir);
        }
    }

    private static String fingerprint(String certPem) throws GeneralSecurityException {
        var cert = CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(certPem.getBytes(StandardCharsets.US_ASCII)));
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(cert.getEncoded());
        return HexFormat.ofDelimiter(":").withUpperCase().formatHex(digest);
    }

    private static void deleteTree(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind is not worth failing the start for
        }
    }
}
