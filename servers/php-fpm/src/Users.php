<?php
// Where auth finds its users, in the mode the server was started with (php-fpm's pool sets the variables).
declare(strict_types=1);

namespace Callbench;

final class Users
{
    public static function exists(int $id): bool
    {
        return getenv('CALLBENCH_MODE') === 'per-request' ? self::searchFile($id) : isset(self::preloaded()[$id]);
    }

    /**
     * preloaded: users.json as a PHP array file written by the launcher at start. PHP keeps nothing between
     * requests, but opcache keeps that file compiled in shared memory: `require` hands back the same immutable
     * array (id => hash) to every call of every child, without parsing or copying it.
     */
    private static function preloaded(): array
    {
        return require getenv('CALLBENCH_USERS_PHP');
    }

    /** per-request: read users.json, decode it and search it linearly on every call, as seed 000 did. */
    private static function searchFile(int $id): bool
    {
        $users = json_decode(file_get_contents(getenv('CALLBENCH_USERS')), true, 512, JSON_THROW_ON_ERROR);
        foreach ($users as $user) {
            if ($user['id'] === $id) {
                return true;
            }
        }
        return false;
    }
}
