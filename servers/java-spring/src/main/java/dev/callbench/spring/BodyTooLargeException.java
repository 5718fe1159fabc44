package dev.callbench.spring;

import java.io.IOException;

/** A request body past the contract's 4 MiB, found while reading it; {@link ApiErrors} makes it 413. */
final class BodyTooLargeException extends IOException {
    BodyTooLargeException(String message) {
        super(message);
    }
}
