package dev.callbench.workloads;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/** Seed 000's auth workload: the request and answer shapes, and the hash (crates/workloads/src/auth.rs). */
public final class Auth {
    private Auth() {}

    /** REST body of {@code PUT /auth/{id}}; {@code password} is required. */
    public record Body(@JsonProperty(required = true) String password) {
        public Body {
            Objects.requireNonNull(password, "password is required");
        }
    }

    public record Response(String hash) {}

    /** The password's checks: 1..1024 UTF-8 bytes. Returns those bytes. */
    static byte[] checkPassword(String password) {
        if (password.isEmpty()) {
            throw WorkloadException.invalid("password must not be empty");
        }
        byte[] bytes = password.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > Limits.MAX_PASSWORD_BYTES) {
            throw WorkloadException.invalid("password is longer than " + Limits.MAX_PASSWORD_BYTES + " bytes");
        }
        return bytes;
    }

    /** Lowercase hex SHA-512. */
    public static String sha512Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-512").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-512", e);
        }
    }

    public static String sha512Hex(String text) {
        return sha512Hex(text.getBytes(StandardCharsets.UTF_8));
    }
}
