<?php
// A JSON reply: status, extra headers, body. nginx gzips it when the client accepts gzip.
declare(strict_types=1);

namespace Callbench\Http;

final class Response
{
    private const JSON_FLAGS = JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR;

    /** @param array<string, string> $headers */
    private function __construct(
        private readonly int $status,
        private readonly string $body,
        private readonly array $headers = [],
    ) {
    }

    public static function json(array $value): self
    {
        return new self(200, json_encode($value, self::JSON_FLAGS));
    }

    /** The contract's error body: {"error": {"code", "message"}}. */
    public static function error(int $status, string $code, string $message, array $headers = []): self
    {
        $body = json_encode(['error' => ['code' => $code, 'message' => $message]], self::JSON_FLAGS);
        return new self($status, $body, $headers);
    }

    public function send(): void
    {
        http_response_code($this->status);
        header('Content-Type: application/json');
        foreach ($this->headers as $name => $value) {
            header("$name: $value");
        }
        echo $this->body;
    }
}
