<?php
// The contract's routes: path -> HTTP method -> handler, and the tiny router that picks one.
declare(strict_types=1);

namespace Callbench;

use Callbench\Http\HttpError;
use Callbench\Http\NdjsonResponse;
use Callbench\Http\Request;
use Callbench\Http\Response;
use Callbench\Workloads\Auth;
use Callbench\Workloads\Cars;
use Callbench\Workloads\EchoMessage;
use Callbench\Workloads\Life;
use Callbench\Workloads\Records;
use Callbench\Workloads\Students;

final class Routes
{
    /**
     * Fixed paths. A handler takes the request (and path parameters) and returns the JSON reply as an array, or
     * a streamed reply.
     */
    private const EXACT = [
        '/students' => ['GET' => [Students::class, 'list']],
        '/cars' => ['POST' => [Cars::class, 'send']],
        '/life/setup' => ['GET' => [Life::class, 'setup']],
        '/life/step' => ['POST' => [Life::class, 'step']],
        '/echo' => ['POST' => [EchoMessage::class, 'echo']],
        '/records/batch' => ['POST' => [Records::class, 'batch']],
        '/records/upload' => ['POST' => [Records::class, 'upload']],
        '/records' => ['GET' => [Records::class, 'download']],
        '/health' => ['GET' => [self::class, 'health']],
    ];

    /** Paths with parameters, as regular expressions with named groups. */
    private const PATTERNS = [
        '#^/auth/(?<id>[^/]+)$#' => ['PUT' => [Auth::class, 'test']],
    ];

    public static function dispatch(Request $request): Response|NdjsonResponse
    {
        [$methods, $params] = self::match($request->path);
        $handler = $methods[$request->method]
            ?? throw HttpError::methodNotAllowed(implode(', ', array_keys($methods)));
        $reply = $handler($request, $params);
        return is_array($reply) ? Response::json($reply) : $reply;
    }

    /** @return array{0: array<string, callable>, 1: array<string, string>} the route's methods and parameters */
    private static function match(string $path): array
    {
        if (isset(self::EXACT[$path])) {
            return [self::EXACT[$path], []];
        }
        foreach (self::PATTERNS as $pattern => $methods) {
            if (preg_match($pattern, $path, $m)) {
                return [$methods, $m];
            }
        }
        throw HttpError::notFound('no such route');
    }

    public static function health(): array
    {
        return ['status' => 'SERVING'];
    }
}
