<?php
// A call that ends in the contract's error status; the front controller turns it into the error body.
declare(strict_types=1);

namespace Callbench\Http;

use Exception;

final class HttpError extends Exception
{
    /** @param array<string, string> $headers */
    public function __construct(
        public readonly int $status,
        public readonly string $errorCode,
        string $message,
        private readonly array $headers = [],
    ) {
        parent::__construct($message);
    }

    public static function badRequest(string $message): self
    {
        return new self(400, 'INVALID_ARGUMENT', $message);
    }

    public static function notFound(string $message): self
    {
        return new self(404, 'NOT_FOUND', $message);
    }

    public static function methodNotAllowed(string $allow): self
    {
        return new self(405, 'METHOD_NOT_ALLOWED', 'method not allowed', ['Allow' => $allow]);
    }

    public static function tooLarge(): self
    {
        return new self(413, 'RESOURCE_EXHAUSTED', 'the body is larger than 4 MiB (4194304 bytes)');
    }

    public function toResponse(): Response
    {
        return Response::error($this->status, $this->errorCode, $this->getMessage(), $this->headers);
    }
}
