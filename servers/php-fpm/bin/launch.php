<?php
// Starts the callbench PHP server the way PHP runs in production on Debian: php-fpm behind nginx.
//
//   php -n -d extension=posix bin/launch.php --host H --port P --workers N --mode M --users PATH [--tls]
//   php -n bin/launch.php --version      (the php-fpm that serves)
//
// Writes php.ini, the php-fpm pool and the nginx config (and the users as a PHP file) into a fresh temp dir,
// forks a supervisor (bin/lib/supervise.php: starts nginx, prints "listening on HOST:PORT", cleans up), then
// becomes php-fpm itself (exec). Why exec: php-fpm calls setsid() at start, which would take it and its children
// out of the server's process group, where the harness counts the server's CPU and memory and sends its signals;
// as the group's leader it cannot (setsid fails for a group leader), so every process that serves stays in it.
// SIGTERM/SIGINT to the group stops php-fpm (exit 0) and nginx; if either dies on its own, this process exits
// non-zero (php-fpm's own failure, or the supervisor kills the group when nginx dies).
declare(strict_types=1);

require __DIR__ . '/lib/setup.php';
require __DIR__ . '/lib/supervise.php';
require __DIR__ . '/lib/tls.php';

exit(main());

function main(): int
{
    $opts = getopt('', ['host:', 'port:', 'workers:', 'mode:', 'users:', 'tls', 'version']);
    if (isset($opts['version'])) {
        passthru(escapeshellarg(php_fpm_binary()) . ' --version', $code);
        return $code;
    }
    $host = $opts['host'] ?? '127.0.0.1';
    $port = (int) ($opts['port'] ?? 8080);
    $workers = (int) ($opts['workers'] ?? 1);
    $mode = $opts['mode'] ?? 'preloaded';
    $users = realpath($opts['users'] ?? 'users.json');
    if ($workers < 1 || !in_array($mode, ['preloaded', 'per-request'], true) || $users === false) {
        fwrite(STDERR, "usage: launch.php --host H --port P --workers N>=1 --mode preloaded|per-request --users FILE [--tls]\n");
        return 2;
    }
    if ($port === 0) {
        $port = free_port($host);
    }

    $tmp = make_temp_dir();
    try {
        $setup = write_setup($tmp, $host, $port, $workers, $mode, $users, isset($opts['tls']));
    } catch (RuntimeException $e) {
        remove_tree($tmp);
        fwrite(STDERR, 'launch.php: ' . $e->getMessage() . "\n");
        return 1;
    }

    $fpmPid = posix_getpid(); // this process, once it has become php-fpm
    $supervisor = pcntl_fork();
    if ($supervisor === 0) {
        return supervise($fpmPid, $setup);
    }
    if ($supervisor === -1) {
        remove_tree($tmp);
        fwrite(STDERR, "launch.php: cannot fork the supervisor\n");
        return 1;
    }
    // PHP_INI_SCAN_DIR is an empty dir of ours: php.ini in the temp dir is the whole PHP configuration.
    pcntl_exec($setup->fpm[0], array_slice($setup->fpm, 1), $setup->env);
    fwrite(STDERR, 'launch.php: cannot run ' . $setup->fpm[0] . "\n");
    posix_kill($supervisor, SIGTERM); // it stops nginx and removes the temp dir
    return 1;
}
