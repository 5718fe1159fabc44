<?php
// The supervisor, forked by the launcher just before the launcher becomes php-fpm: it starts nginx, prints
// "listening on HOST:PORT" once a call goes through both, and when php-fpm ends (however it ends) stops nginx
// and removes the temp dir. If nginx dies on its own it kills the server's process group, so the server fails.
declare(strict_types=1);

const READY_TIMEOUT_S = 15.0;
const STOP_GRACE_S = 2.0;

function supervise(int $fpmPid, Setup $setup): int
{
    // Signals only set a flag (nobody but a person sends them here: see setsid below); the loops look at it.
    $GLOBALS['supervisor_stop'] = false;
    pcntl_async_signals(true);
    foreach ([SIGTERM, SIGINT] as $signal) {
        pcntl_signal($signal, function (): void { $GLOBALS['supervisor_stop'] = true; }, false);
    }
    $fpmAlive = fn (): bool => posix_getppid() === $fpmPid; // php-fpm is our parent until it ends

    // nginx starts while we are still in the server's process group: its master and workers stay there.
    $nginx = spawn($setup->nginx, $setup->env);
    // Then leave the group: when the harness stops the server it may SIGKILL the whole group as soon as php-fpm
    // has exited, and the cleanup below must still happen.
    posix_setsid();

    $failed = false;
    try {
        $deadline = microtime(true) + READY_TIMEOUT_S;
        // nginx writes its pid file once its port is bound: before that, /health may be another server's.
        $nginxBound = fn (): bool => is_file("{$setup->tmp}/nginx.pid");
        while (!($nginxBound() && can_connect('unix://' . $setup->fpmSocket()) && health_ok($setup->host, $setup->port, $setup->tls))) {
            match (true) {
                !$fpmAlive() => throw new RuntimeException('php-fpm did not start (see its messages above)'),
                !running($nginx) => throw new RuntimeException('nginx did not start (see its messages above)'),
                $GLOBALS['supervisor_stop'] => throw new RuntimeException('stopped before it was ready'),
                microtime(true) > $deadline => throw new RuntimeException('not ready after ' . READY_TIMEOUT_S . ' s'),
                default => usleep(20_000),
            };
        }
        fwrite(STDOUT, "listening on {$setup->host}:{$setup->port}\n");
        fflush(STDOUT);

        while ($fpmAlive() && !$GLOBALS['supervisor_stop']) {
            // Read once: PHP 8.2 gives the exit code only to the first look after the exit.
            $nginxStatus = proc_get_status($nginx);
            if (!$nginxStatus['running']) {
                // A SIGTERM to the server's group reaches nginx and php-fpm at once, and nginx may be first to
                // end: that is a stop, and php-fpm is ending too (killing the group then turned its clean exit
                // into a SIGKILL, about one stop in twenty under load). Any other end of nginx is a failure.
                if (stopped_by_signal($nginxStatus)) {
                    break;
                }
                throw new RuntimeException('nginx exited');
            }
            usleep(100_000);
        }
    } catch (RuntimeException $e) {
        fwrite(STDERR, 'launch.php: ' . $e->getMessage() . "\n");
        $failed = true;
    }

    if ($failed && $fpmAlive()) {
        posix_kill(-$fpmPid, SIGKILL); // the server's whole group: the harness sees it fail
    } elseif ($fpmAlive()) {
        posix_kill($fpmPid, SIGTERM); // stopped by a signal to us: php-fpm stops its children and exits 0
    }
    stop_child($nginx);
    $deadline = microtime(true) + STOP_GRACE_S;
    while ($fpmAlive() && microtime(true) < $deadline) {
        usleep(10_000);
    }
    @posix_kill(-$fpmPid, SIGKILL); // whatever is left of the group (php-fpm children whose master was killed)
    remove_tree($setup->tmp);
    return $failed ? 1 : 0;
}

/** A child with stdin closed and its output on our stderr (stdout is for the harness). */
function spawn(array $argv, array $env)
{
    $child = proc_open($argv, [0 => ['file', '/dev/null', 'r'], 1 => STDERR, 2 => STDERR], $pipes, null, $env);
    return $child !== false ? $child : throw new RuntimeException('cannot start ' . $argv[0]);
}

/** nginx's fast shutdown on SIGTERM/SIGINT exits 0; a signal it did not handle shows as `signaled`. */
function stopped_by_signal(array $status): bool
{
    return $status['exitcode'] === 0 || ($status['signaled'] && in_array($status['termsig'], [SIGTERM, SIGINT], true));
}

function running($child): bool
{
    return proc_get_status($child)['running'];
}

/** SIGTERM (nginx's fast shutdown), SIGKILL after the grace period; reaps it. */
function stop_child($child): void
{
    if (running($child)) {
        proc_terminate($child, SIGTERM);
    }
    $deadline = microtime(true) + STOP_GRACE_S;
    while (running($child) && microtime(true) < $deadline) {
        usleep(10_000);
    }
    if (running($child)) {
        proc_terminate($child, SIGKILL);
    }
    proc_close($child);
}

function can_connect(string $address): bool
{
    $socket = @stream_socket_client($address, $errno, $error, 0.2);
    if ($socket === false) {
        return false;
    }
    fclose($socket);
    return true;
}

/** GET /health through nginx and php-fpm: 200 means both serve. */
function health_ok(string $host, int $port, bool $tls): bool
{
    $address = ($tls ? 'ssl' : 'tcp') . (str_contains($host, ':') ? "://[$host]:$port" : "://$host:$port");
    // The certificate is the one made at start: nothing to check it against.
    $context = stream_context_create(['ssl' => ['verify_peer' => false, 'verify_peer_name' => false]]);
    $socket = @stream_socket_client($address, $errno, $error, 0.2, STREAM_CLIENT_CONNECT, $context);
    if ($socket === false) {
        return false;
    }
    stream_set_timeout($socket, 2);
    fwrite($socket, "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    $line = (string) fgets($socket);
    fclose($socket);
    return str_starts_with($line, 'HTTP/1.1 200');
}
