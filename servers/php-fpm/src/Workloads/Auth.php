<?php
// Seed 000's auth: PUT /auth/{id} {"password"} -> {"hash"}, the lowercase hex SHA-512 of the password.
declare(strict_types=1);

namespace Callbench\Workloads;

use Callbench\Http\HttpError;
use Callbench\Http\JsonFields;
use Callbench\Http\Request;
use Callbench\Users;

final class Auth
{
    private const MAX_PASSWORD_BYTES = 1024;

    public static function test(Request $request, array $params): array
    {
        // Digits with an optional sign that fit in 64 bits (past that, PHP's arithmetic gives a float).
        $id = preg_match('/^[+-]?[0-9]+$/', $params['id']) ? $params['id'] + 0 : null;
        if (!is_int($id)) {
            throw HttpError::badRequest('the user id must be an integer');
        }
        $password = JsonFields::string($request->json(), 'password', required: true);
        $bytes = strlen($password);
        if ($bytes < 1 || $bytes > self::MAX_PASSWORD_BYTES) {
            throw HttpError::badRequest('the password must be 1..' . self::MAX_PASSWORD_BYTES . ' bytes');
        }
        if (!Users::exists($id)) {
            throw HttpError::notFound("no user with id $id");
        }
        return ['hash' => hash('sha512', $password)];
    }
}
