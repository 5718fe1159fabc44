<?php
// Seed 000's processing step in PHP: read user.json, json_decode all of it into arrays, find the
// user by id with array_search over array_column, SHA-512 hex of the password. Timed per
// iteration with hrtime(true).
declare(strict_types=1);

const USAGE = 'usage: auth.php --users PATH --id N --password P [--iterations K] [--warmup W]';

// One iteration, the article's code: the file is read and decoded on every call.
function authenticate(string $usersPath, int $inputId, string $inputPassword): ?array
{
    $json = file_get_contents($usersPath);
    if ($json === false) {
        throw new RuntimeException("cannot read $usersPath");
    }
    $users = json_decode($json, true, 512, JSON_THROW_ON_ERROR);
    $index = array_search($inputId, array_column($users, 'id'), true);
    if ($index === false) {
        return null;
    }
    $user = $users[$index];
    // mhash(MHASH_SHA512, ...) of the article is deprecated since PHP 8.1: hash() is its replacement.
    $hash = hash('sha512', $inputPassword);
    return [$user, $hash];
}

function parse_args(array $argv): array
{
    $opts = ['iterations' => 1, 'warmup' => 0];
    for ($i = 0; $i < count($argv); $i += 2) {
        $flag = $argv[$i];
        $value = $argv[$i + 1] ?? null;
        if ($value === null) {
            throw new InvalidArgumentException("$flag needs a value");
        }
        switch ($flag) {
            case '--users': $opts['users'] = $value; break;
            case '--id': $opts['id'] = integer($flag, $value, PHP_INT_MIN); break;
            case '--password': $opts['password'] = $value; break;
            case '--iterations': $opts['iterations'] = integer($flag, $value, 1); break;
            case '--warmup': $opts['warmup'] = integer($flag, $value, 0); break;
            default: throw new InvalidArgumentException("unknown argument $flag");
        }
    }
    foreach (['users', 'id', 'password'] as $name) {
        if (!isset($opts[$name])) {
            throw new InvalidArgumentException("--$name is required");
        }
    }
    return $opts;
}

function integer(string $flag, string $text, int $min): int
{
    $n = filter_var($text, FILTER_VALIDATE_INT);
    if ($n === false) {
        throw new InvalidArgumentException("$flag: not an integer: $text");
    }
    if ($n < $min) {
        throw new InvalidArgumentException("$flag: must be >= $min: $text");
    }
    return $n;
}

function main(array $argv): int
{
    try {
        $opts = parse_args(array_slice($argv, 1));
    } catch (InvalidArgumentException $e) {
        fwrite(STDERR, 'error ' . $e->getMessage() . '; ' . USAGE . "\n");
        return 2;
    }
    $times = [];
    $last = null;
    for ($i = 0; $i < $opts['warmup'] + $opts['iterations']; $i++) {
        $start = hrtime(true);
        $result = authenticate($opts['users'], $opts['id'], $opts['password']);
        $elapsed = hrtime(true) - $start;
        // Checked outside the timed part: every result is used.
        if ($result === null) {
            fwrite(STDERR, "error user {$opts['id']} not found\n");
            return 2;
        }
        [$user, $hash] = $result;
        if ($user['id'] !== $opts['id'] || ($last !== null && $hash !== $last)) {
            fwrite(STDERR, "error inconsistent result\n");
            return 1;
        }
        $last = $hash;
        if ($i >= $opts['warmup']) {
            $times[] = $elapsed;
        }
    }
    $out = "hash $last\n";
    foreach ($times as $ns) {
        $out .= "ns $ns\n";
    }
    fwrite(STDOUT, $out);
    return 0;
}

try {
    exit(main($argv));
} catch (Throwable $e) {
    fwrite(STDERR, 'error ' . $e->getMessage() . "\n");
    exit(1);
}
