<?php
// The request as php-fpm gives it ($_SERVER, php://input), and its JSON body read the contract's way.
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
            $_SERVER['CONTENT_TYPE'] ?? '',
            $_SERVER['HTTP_CONTENT_ENCODING'] ?? '',
        );
    }

    /** The body as a JSON object: 415 unless application/json, 413 over 4 MiB once inflated, 400 if not JSON. */
    public function json(): stdClass
    {
        $mediaType = strtolower(trim(explode(';', $this->contentType, 2)[0]));
        if ($mediaType !== 'application/json') {
            throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
        }
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

    /** Undoes Content-Encoding: gzip, stopping at the 4 MiB limit (a small bomb must not fill the memory). */
    private function inflate(string $body): string
    {
        $encoding = strtolower(trim($this->contentEncoding));
        if ($encoding === '' || $encoding === 'identity') {
            return $body;
        }
        if ($encoding !== 'gzip' && $encoding !== 'x-gzip') {
            throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', "Content-Encoding $encoding is not supported (gzip is)");
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
