<?php
// The lines of an NDJSON upload, read from php://input a piece at a time as the body comes in (nginx passes it
// on as it arrives, chunked or not), a gzip body inflated as it is read; never held whole. A line is at most
// 4 MiB and the upload at most 64 MiB, on the wire and once inflated (413).
declare(strict_types=1);

namespace Callbench\Http;

use Generator;
use InflateContext;

final class NdjsonLines
{
    /** The contract's limits: a line (without its "\n") and the whole upload. */
    public const MAX_LINE_BYTES = 4 * 1024 * 1024;
    public const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

    /**
     * What one read asks of php://input: php-fpm returns from a read only once it has that much of the body (or
     * its end), so this is how far the reading may lag behind the client.
     */
    private const READ_BYTES = 8 * 1024;
    /** gzip is inflated this much input at a time, so that one piece inflates to a few MiB at most. */
    private const INFLATE_BYTES = 4 * 1024;

    /** @param resource $input php://input */
    public function __construct(private $input, private readonly bool $gzip)
    {
        // Unbuffered: a read asks php-fpm for READ_BYTES exactly, where PHP's stream buffer would ask for up to
        // twice its 8 KiB chunk and wait for all of it.
        stream_set_read_buffer($this->input, 0);
    }

    /**
     * The lines that are not blank, without their "\n", keyed by their line number (from 1). The last line may
     * have no "\n". Throws HttpError (413, or 400 for bad gzip) as soon as the body breaks a rule.
     *
     * @return Generator<int, string>
     */
    public function lines(): Generator
    {
        $inflater = $this->gzip ? inflate_init(ZLIB_ENCODING_GZIP) : null;
        $received = 0; // bytes of the body
        $size = 0; // bytes of the upload, inflated
        $pending = ''; // the start of a line whose end has not come yet
        $number = 0;
        while (!feof($this->input)) {
            $piece = fread($this->input, self::READ_BYTES);
            if ($piece === false) {
                throw HttpError::badRequest('the body could not be read');
            }
            $received += strlen($piece);
            if ($inflater !== null) {
                $piece = self::inflate($inflater, $piece);
            }
            $size += strlen($piece);
            if ($received > self::MAX_UPLOAD_BYTES || $size > self::MAX_UPLOAD_BYTES) {
                throw self::uploadTooLarge();
            }
            $pending .= $piece;
            $start = 0;
            while (($end = strpos($pending, "\n", $start)) !== false) {
                $number++;
                if ($end - $start > self::MAX_LINE_BYTES) {
                    throw self::lineTooLarge();
                }
                if (!self::blank($pending, $start, $end)) {
                    yield $number => substr($pending, $start, $end - $start);
                }
                $start = $end + 1;
            }
            $pending = $start === 0 ? $pending : substr($pending, $start);
            if (strlen($pending) > self::MAX_LINE_BYTES) {
                throw self::lineTooLarge();
            }
        }
        if ($inflater !== null && inflate_get_status($inflater) !== ZLIB_STREAM_END) {
            throw HttpError::badRequest('the body is not valid gzip (it ends before the gzip stream does)');
        }
        if (!self::blank($pending, 0, strlen($pending))) {
            yield $number + 1 => $pending;
        }
    }

    /** One piece of the gzip body, inflated a few KiB of input at a time. */
    private static function inflate(InflateContext $inflater, string $piece): string
    {
        $out = '';
        for ($at = 0; $at < strlen($piece); $at += self::INFLATE_BYTES) {
            $inflated = @inflate_add($inflater, substr($piece, $at, self::INFLATE_BYTES), ZLIB_SYNC_FLUSH);
            if ($inflated === false) {
                error_clear_last();
                throw HttpError::badRequest('the body is not valid gzip');
            }
            $out .= $inflated;
            if (strlen($out) > self::MAX_UPLOAD_BYTES) {
                throw self::uploadTooLarge();
            }
        }
        return $out;
    }

    /** Whether $text[$start, $end) is only blanks (spaces, tabs, "\r"). */
    private static function blank(string $text, int $start, int $end): bool
    {
        return strspn($text, " \t\r", $start, $end - $start) === $end - $start;
    }

    private static function lineTooLarge(): HttpError
    {
        return new HttpError(413, 'RESOURCE_EXHAUSTED', 'a line is over 4 MiB (4194304 bytes)');
    }

    private static function uploadTooLarge(): HttpError
    {
        return new HttpError(413, 'RESOURCE_EXHAUSTED', 'the upload is over 64 MiB (67108864 bytes)');
    }
}
