<?php
// The front controller: nginx hands every request to this file (one php-fpm child runs it per call).
declare(strict_types=1);

use Callbench\Http\HttpError;
use Callbench\Http\Request;
use Callbench\Http\Response;
use Callbench\Routes;

// PSR-4 for the one namespace of src/ (what Composer's autoloader would do, without Composer: no dependencies).
spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'Callbench\\')) {
        require dirname(__DIR__) . '/src/' . strtr(substr($class, 10), '\\', '/') . '.php';
    }
});

try {
    $response = Routes::dispatch(Request::fromGlobals());
} catch (HttpError $e) {
    $response = $e->toResponse();
} catch (Throwable $e) {
    error_log((string) $e);
    $response = Response::error(500, 'INTERNAL', 'internal error');
}
$response->send();
