<?php
// --tls: a fresh self-signed certificate at every start, as the Rust and Go servers make theirs (an ECDSA P-256
// key and a certificate for localhost, 127.0.0.1 and ::1), written into the server's temp dir for nginx, which
// serves it with its own TLS (OpenSSL). Made by the openssl command line: PHP's openssl extension can sign a
// certificate, but subjectAltName needs an OpenSSL config file of its own.
declare(strict_types=1);

const TLS_NAMES = ['localhost', '127.0.0.1', '::1'];

/** Writes $tmp/cert.pem and $tmp/key.pem, prints the certificate's SHA-256 fingerprint on stderr. */
function make_certificate(string $tmp): void
{
    $altNames = implode(',', array_map(
        fn ($n) => (preg_match('/^[0-9]|:/', $n) ? 'IP:' : 'DNS:') . $n,
        TLS_NAMES,
    ));
    $argv = ['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-keyout', "$tmp/key.pem", '-out', "$tmp/cert.pem", '-days', '3650',
        '-subj', '/O=callbench (self-signed)/CN=localhost',
        '-addext', "subjectAltName=$altNames", '-addext', 'extendedKeyUsage=serverAuth'];
    $process = @proc_open($argv, [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['pipe', 'w']], $pipes);
    if ($process === false) {
        throw new RuntimeException('cannot make a certificate: cannot run openssl (apt-get install openssl)');
    }
    $errors = trim(stream_get_contents($pipes[2]));
    fclose($pipes[2]);
    if (proc_close($process) !== 0) {
        $lines = explode("\n", $errors);
        throw new RuntimeException('cannot make a certificate: ' . ($errors === '' ? 'openssl failed' : end($lines)));
    }
    $fingerprint = openssl_x509_fingerprint((string) file_get_contents("$tmp/cert.pem"), 'sha256');
    if ($fingerprint === false) {
        throw new RuntimeException('cannot read the certificate openssl made');
    }
    fwrite(STDERR, 'tls: self-signed certificate for ' . implode(', ', TLS_NAMES) . ', SHA-256 fingerprint '
        . implode(':', str_split(strtoupper($fingerprint), 2)) . "\n");
}

/** The nginx lines that serve it: TLS 1.3 and 1.2, HTTP/1.1 (no ALPN), as without TLS. */
function nginx_tls_lines(string $tmp): string
{
    return "ssl_certificate $tmp/cert.pem;\n        ssl_certificate_key $tmp/key.pem;\n"
        . "        ssl_protocols TLSv1.2 TLSv1.3;";
}
