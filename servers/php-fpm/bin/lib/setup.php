<?php
// What the launcher prepares before anything runs: the temp dir, its configs, the binaries' paths.
declare(strict_types=1);

const APP_DIR = __DIR__ . '/../..';

/** Everything the processes need, all of it in the temp dir (nothing system-wide). */
final class Setup
{
    public function __construct(
        public readonly string $tmp,
        public readonly string $host,
        public readonly int $port,
        /** php-fpm's argv */
        public readonly array $fpm,
        /** nginx's argv */
        public readonly array $nginx,
        /** the environment of both */
        public readonly array $env,
        /** nginx serves TLS (--tls) */
        public readonly bool $tls,
    ) {
    }

    public function fpmSocket(): string
    {
        return "$this->tmp/php-fpm.sock";
    }
}

function write_setup(string $tmp, string $host, int $port, int $workers, string $mode, string $users, bool $tls): Setup
{
    $usersPhp = "$tmp/users.php";
    write_users_php($users, $usersPhp); // in both modes: a bad users file fails here, not on a call
    $root = posix_geteuid() === 0;
    $vars = [
        'tmp' => $tmp, 'workers' => (string) $workers, 'children' => (string) (2 * $workers),
        'mode' => $mode, 'users' => $users,
        'users_php' => $usersPhp, 'public' => realpath(APP_DIR . '/public'),
        'listen' => (str_contains($host, ':') ? "[$host]:$port" : "$host:$port") . ($tls ? ' ssl' : ''),
        'tls' => '',
        // As root, keep the harness's user instead of dropping to www-data: its files stay readable.
        'user' => $root ? 'user root;' : '',
    ];
    if ($tls) {
        make_certificate($tmp);
        $vars['tls'] = nginx_tls_lines($tmp);
    }
    write_file("$tmp/php.ini", production_php_ini() . "\n" . file_get_contents(APP_DIR . '/config/php.ini'));
    write_file("$tmp/php-fpm.conf", render(file_get_contents(APP_DIR . '/config/php-fpm.conf'), $vars));
    write_file("$tmp/nginx.conf", render(file_get_contents(APP_DIR . '/config/nginx.conf'), $vars));
    mkdir("$tmp/conf.d"); // scanned instead of /etc/php/*/fpm/conf.d: empty

    $fpm = [php_fpm_binary(), '--nodaemonize', '--fpm-config', "$tmp/php-fpm.conf", '-c', "$tmp/php.ini"];
    if ($root) {
        $fpm[] = '--allow-to-run-as-root';
    }
    $nginx = [nginx_binary(), '-p', $tmp, '-c', "$tmp/nginx.conf", '-e', 'stderr'];
    $env = ['PATH' => getenv('PATH') ?: '/usr/sbin:/usr/bin:/sbin:/bin', 'PHP_INI_SCAN_DIR' => "$tmp/conf.d"];
    return new Setup($tmp, $host, $port, $fpm, $nginx, $env, $tls);
}

/** The php-fpm of the same PHP version as this php-cli (Debian: /usr/sbin/php-fpm8.2), else any on PATH. */
function php_fpm_binary(): string
{
    return find_binary(['php-fpm' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION, 'php-fpm']);
}

function nginx_binary(): string
{
    return find_binary(['nginx']);
}

function find_binary(array $names): string
{
    $dirs = array_merge(explode(':', getenv('PATH') ?: ''), ['/usr/sbin', '/usr/local/sbin', '/sbin']);
    foreach ($names as $name) {
        foreach ($dirs as $dir) {
            if ($dir !== '' && is_executable("$dir/$name")) {
                return "$dir/$name";
            }
        }
    }
    throw new RuntimeException('not installed: ' . implode(' or ', $names) . ' (Debian packages php-fpm, nginx)');
}

/** Debian's php.ini-production for this PHP version (shipped by php-common, not in /etc). */
function production_php_ini(): string
{
    $path = '/usr/lib/php/' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION . '/php.ini-production';
    $text = @file_get_contents($path);
    return $text !== false ? $text : throw new RuntimeException("cannot read $path");
}

/**
 * users.json as `<?php return [id => hash, ...];`: opcache compiles it once into shared memory and every
 * `require` of it returns that immutable array without copying, in every php-fpm child.
 */
function write_users_php(string $json, string $out): void
{
    $users = json_decode((string) @file_get_contents($json), true);
    if (!is_array($users)) {
        throw new RuntimeException("$json is not a JSON list of users");
    }
    $map = [];
    foreach ($users as $user) {
        $map[$user['id']] = $user['hash'];
    }
    write_file($out, "<?php\n// Generated from $json by launch.php.\nreturn " . var_export($map, true) . ";\n");
    // opcache does not cache a file changed in the last 2 s (opcache.file_update_protection): backdate it.
    touch($out, time() - 60);
}

function render(string $template, array $vars): string
{
    return preg_replace_callback(
        '/\{\{(\w+)\}\}/',
        fn ($m) => $vars[$m[1]] ?? throw new RuntimeException("no value for {{{$m[1]}}}"),
        $template,
    );
}

function write_file(string $path, string $text): void
{
    if (file_put_contents($path, $text) === false) {
        throw new RuntimeException("cannot write $path");
    }
}

function make_temp_dir(): string
{
    $dir = sys_get_temp_dir() . '/callbench-php-fpm-' . bin2hex(random_bytes(6));
    if (!mkdir($dir, 0700)) {
        throw new RuntimeException("cannot create $dir");
    }
    return $dir;
}

function remove_tree(string $dir): void
{
    if (!is_dir($dir)) {
        return;
    }
    $entries = new RecursiveIteratorIterator(
        new RecursiveDirectoryIterator($dir, FilesystemIterator::SKIP_DOTS),
        RecursiveIteratorIterator::CHILD_FIRST,
    );
    foreach ($entries as $entry) {
        $entry->isDir() && !$entry->isLink() ? @rmdir($entry->getPathname()) : @unlink($entry->getPathname());
    }
    @rmdir($dir);
}

/** A port free now on $host (what --port 0 means; nginx cannot report the port it picked). */
function free_port(string $host): int
{
    $server = stream_socket_server(str_contains($host, ':') ? "tcp://[$host]:0" : "tcp://$host:0");
    $name = stream_socket_get_name($server, false);
    fclose($server);
    return (int) substr($name, strrpos($name, ':') + 1);
}
