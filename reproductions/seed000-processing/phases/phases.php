<?php
// Seed 000's auth work in PHP, as processing/php/auth.php does it, each phase timed apart.
//
//     php phases.php --users PATH --id N --password P [--iterations K] [--warmup W]
//
// One iteration: file_get_contents, json_decode into arrays, array_search over array_column,
// hash('sha512'), then unset the decoded users (auth.php frees them when it returns, inside its
// timed iteration). stdout: `hash <hex>`, then `phases <read> <parse> <search> <hash> <free>` in ns
// (hrtime) per timed iteration.
declare(strict_types=1);

function options(array $argv): array
{
    $o = ['iterations' => 1, 'warmup' => 0];
    for ($i = 0; $i < count($argv); $i += 2) {
        $flag = $argv[$i];
        $value = $argv[$i + 1] ?? null;
        if ($value === null) {
            throw new InvalidArgumentException("$flag needs a value");
        }
        $name = substr($flag, 2);
        if (!in_array($flag, ['--users', '--id', '--password', '--iterations', '--warmup'], true)) {
            throw new InvalidArgumentException("unknown argument $flag");
        }
        $o[$name] = in_array($name, ['users', 'password'], true) ? $value : (int) $value;
    }
    foreach (['users', 'id', 'password'] as $name) {
        if (!isset($o[$name])) {
            throw new InvalidArgumentException("--$name is required");
        }
    }
    if ($o['iterations'] < 1 || $o['warmup'] < 0) {
        throw new InvalidArgumentException('--iterations must be >= 1, --warmup >= 0');
    }
    return $o;
}

function main(array $argv): int
{
    try {
        $o = options(array_slice($argv, 1));
    } catch (InvalidArgumentException $e) {
        fwrite(STDERR, 'error ' . $e->getMessage() . "\n");
        return 2;
    }
    $lines = [];
    $last = null;
    for ($i = 0; $i < $o['warmup'] + $o['iterations']; $i++) {
        $t0 = hrtime(true);
        $json = file_get_contents($o['users']);
        $t1 = hrtime(true);
        $users = json_decode($json, true, 512, JSON_THROW_ON_ERROR);
        $t2 = hrtime(true);
        $index = array_search($o['id'], array_column($users, 'id'), true);
        $user = $index === false ? null : $users[$index];
        $t3 = hrtime(true);
        $hash = hash('sha512', $o['password']);
        $t4 = hrtime(true);
        unset($users, $json);
        $t5 = hrtime(true);
        // Checked outside the timed phases: every result is used.
        if ($user === null || $user['id'] !== $o['id'] || ($last !== null && $hash !== $last)) {
            fwrite(STDERR, "error user {$o['id']} not found or an inconsistent result\n");
            return 2;
        }
        $last = $hash;
        if ($i >= $o['warmup']) {
            $lines[] = sprintf('phases %d %d %d %d %d', $t1 - $t0, $t2 - $t1, $t3 - $t2, $t4 - $t3, $t5 - $t4);
        }
    }
    fwrite(STDOUT, "hash $last\n" . implode("\n", $lines) . "\n");
    return 0;
}

exit(main($argv));
