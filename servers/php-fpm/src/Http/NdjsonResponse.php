<?php
// A 200 NDJSON reply written as it goes: one JSON line per value of an iterable, sent to nginx in pieces of
// STREAM_BYTES as they are made (never built whole). `X-Accel-Buffering: no` tells nginx to pass each piece on to
// the client at once (chunked on HTTP/1.1) instead of gathering the reply in its FastCGI buffers; nginx gzips it
// when the client accepts gzip, flushing the gzip stream with every piece.
declare(strict_types=1);

namespace Callbench\Http;

final class NdjsonResponse
{
    private const JSON_FLAGS = JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR;

    /** How much of the reply is gathered before it is sent: fewer, larger FastCGI records and chunks. */
    private const STREAM_BYTES = 32 * 1024;

    /** @param iterable<array> $values */
    public function __construct(private readonly iterable $values)
    {
    }

    public function send(): void
    {
        http_response_code(200);
        header('Content-Type: application/x-ndjson');
        header('X-Accel-Buffering: no');
        // php.ini-production's output_buffering would hold back the first 4 KiB: flush() below sends directly.
        while (ob_get_level() > 0) {
            ob_end_flush();
        }
        $piece = '';
        foreach ($this->values as $value) {
            $piece .= json_encode($value, self::JSON_FLAGS) . "\n";
            if (strlen($piece) >= self::STREAM_BYTES) {
                echo $piece;
                flush(); // through php-fpm's FastCGI buffer to nginx; a client gone ends the script here
                $piece = '';
            }
        }
        echo $piece;
    }
}
