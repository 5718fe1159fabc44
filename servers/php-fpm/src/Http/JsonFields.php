<?php
// Strictly typed fields of a decoded JSON object (json_decode gives stdClass for objects, arrays for lists).
// A string where a number belongs is 400, although proto3 JSON parsers accept it: the contract wants strict
// REST parsing. As in proto3 JSON, an absent field or null is the type's default; `required` makes it 400.
declare(strict_types=1);

namespace Callbench\Http;

use stdClass;

final class JsonFields
{
    public static function string(stdClass $o, string $name, bool $required = false): string
    {
        $v = $o->$name ?? self::absent($name, $required, '');
        return is_string($v) ? $v : throw self::wrongType($name, 'a string');
    }

    /** A JSON integer (json_decode gives a float for 1.5, 1e3 or anything past 64 bits). */
    public static function int(stdClass $o, string $name, bool $required = false): int
    {
        $v = $o->$name ?? self::absent($name, $required, 0);
        return is_int($v) ? $v : throw self::wrongType($name, 'an integer');
    }

    /** A double: any JSON number. */
    public static function number(stdClass $o, string $name): float
    {
        $v = $o->$name ?? 0.0;
        return is_float($v) || is_int($v) ? (float) $v : throw self::wrongType($name, 'a number');
    }

    public static function bool(stdClass $o, string $name): bool
    {
        $v = $o->$name ?? false;
        return is_bool($v) ? $v : throw self::wrongType($name, 'true or false');
    }

    /** A nested message, null when absent. */
    public static function object(stdClass $o, string $name): ?stdClass
    {
        $v = $o->$name ?? null;
        return $v === null || $v instanceof stdClass ? $v : throw self::wrongType($name, 'an object');
    }

    /** A JSON array, as a PHP list. */
    public static function list(stdClass $o, string $name, bool $required = false): array
    {
        $v = $o->$name ?? self::absent($name, $required, []);
        return is_array($v) ? $v : throw self::wrongType($name, 'an array');
    }

    /** @return array<int, int> a list of JSON integers */
    public static function intList(stdClass $o, string $name): array
    {
        $list = self::list($o, $name);
        foreach ($list as $v) {
            if (!is_int($v)) {
                throw self::wrongType($name, 'an array of integers');
            }
        }
        return $list;
    }

    /** @return array<int, string> a list of JSON strings */
    public static function stringList(stdClass $o, string $name): array
    {
        $list = self::list($o, $name);
        foreach ($list as $v) {
            if (!is_string($v)) {
                throw self::wrongType($name, 'an array of strings');
            }
        }
        return $list;
    }

    private static function absent(string $name, bool $required, mixed $default): mixed
    {
        return $required ? throw HttpError::badRequest("$name is required") : $default;
    }

    private static function wrongType(string $name, string $type): HttpError
    {
        return HttpError::badRequest("$name must be $type");
    }
}
