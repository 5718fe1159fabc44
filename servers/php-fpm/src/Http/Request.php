<?php
// The request as php-fpm gives it ($_SERVER, $_GET, php://input), and its body read the contract's way: one
// JSON object, or the lines of an NDJSON upload.
declare(strict_types=1);

namespace Callbench\Http;

use JsonException;
use stdClass;

final class Request
{
    /** The contract's body limit; nginx refuses larger bodies on the wire, this checks inflated gzip ones. */
    public const MAX_BODY_BYTES = 4 * 1024 * 1024;

    private function __construct(
        public readonly string $method,
        public readonly string $path,
        /** @var array<string, string|array> the query parameters, as PHP parses them */
        public readonly array $query,
        private readonly string $contentType,
        private readonly string $contentEncoding,
    ) {
    }

    public static function fromGlobals(): self
    {
        $uri = $_SERVER['REQUEST_URI'] ?? '/';
        $query = strpos($uri, '?');
        return new self(
            $_SERVER['REQUEST_METHOD'] ?? 'GET',
            $query === false ? $uri : substr($uri, 0, $query),
            $_GET,
            $_SERVER['CONTENT_TYPE'] ?? '',
            $_SERVER['HTTP_CONTENT_ENCODING'] ?? '',
        );
    }

    /** The body as a JSON object: 415 unless application/json, 413 over 4 MiB once inflated, 400 if not JSON. */
    public function json(): stdClass
    {
        $this->requireMediaType('application/json');
        $body = $this->inflate((string) file_get_contents('php://input'));
        try {
            $value = json_decode($body, false, 512, JSON_THROW_ON_ERROR);
        } catch (JsonException $e) {
            throw HttpError::badRequest('malformed JSON: ' . $e->getMessage());
        }
        if (!$value instanceof stdClass) {
            throw HttpError::badRequest('the body must be a JSON object');
        }
        return $value;
    }

    /** The lines of an NDJSON body, read as it comes in: 415 unless application/x-ndjson, plain or gzip. */
    public function ndjson(): NdjsonLines
    {
        $this->requireMediaType('application/x-ndjson');
        return new NdjsonLines(fopen('php://input', 'rb'), $this->gzipped());
    }

    /** 415 unless the Content-Type is $mediaType (parameters such as charset allowed). */
    private function requireMediaType(string $mediaType): void
    {
        if (strtolower(trim(explode(';', $this->contentType, 2)[0])) !== $mediaType) {
            throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', "Content-Type must be $mediaType");
        }
    }

    /** Whether the body is gzip; 415 for an encoding other than gzip or identity. */
    private function gzipped(): bool
    {
        $encoding = strtolower(trim($this->contentEncoding));
        return match ($encoding) {
            '', 'identity' => false,
            'gzip', 'x-gzip' => true,
            default => throw new HttpError(
                415,
                'UNSUPPORTED_MEDIA_TYPE',
                "Content-Encoding $encoding is not supported (gzip is)",
            ),
        };
    }

    /** Undoes Content-Encoding: gzip, stopping at the 4 MiB limit (a small bomb must not fill the memory). */
    private function inflate(string $body): string
    {
        if (!$this->gzipped()) {
            return $body;
        }
        $inflated = @gzdecode($body, self::MAX_BODY_BYTES + 1);
        if ($inflated === false) {
            // gzdecode says "insufficient memory" when it reaches the length cap, "data error" for bad input.
            $tooLarge = str_contains(error_get_last()['message'] ?? '', 'insufficient memory');
            error_clear_last();
            throw $tooLarge ? HttpError::tooLarge() : HttpError::badRequest('the body is not valid gzip');
        }
        if (strlen($inflated) > self::MAX_BODY_BYTES) {
            throw HttpError::tooLarge();
        }
        return $inflated;
    }
}
