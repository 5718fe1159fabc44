#!/bin/sh
# A TLS-terminating front end, as Cloud Run's sits before its containers: nginx on the link's server
# side (`callbench serve --front`), serving TLS 1.3/1.2 with ALPN h2 and http/1.1 on
# $CALLBENCH_FRONT_ADDR and passing each call in plaintext to the server at $CALLBENCH_UPSTREAM:
#
#   nginx-front.sh rest|grpc close|keepalive DIR
#
# rest: proxy_pass over HTTP/1.1 (close: HTTP/1.0 and a new connection to the server per call, nginx's
# default; keepalive: kept connections); grpc: grpc_pass over HTTP/2 (close: a connection per call;
# keepalive: kept). DIR (made by the caller, removed by it) receives the certificate and the config.
set -eu
protocol=$1 upstream_connections=$2 dir=$3
: "${CALLBENCH_FRONT_ADDR:?run by callbench serve --front}" "${CALLBENCH_UPSTREAM:?run by callbench serve --front}"
mkdir -p "$dir/temp"
# A certificate for localhost, as the servers' own: an end entity (CA:FALSE) on a P-256 key.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost -addext basicConstraints=critical,CA:FALSE \
  -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null

case $upstream_connections in
  close) keepalive="" ;;
  keepalive) keepalive="keepalive 16;" ;;
  *) echo "nginx-front.sh: close or keepalive, not $upstream_connections" >&2; exit 2 ;;
esac
case $protocol in
  rest)
    if [ -n "$keepalive" ]; then
      pass='proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection "";'
    else
      pass='proxy_pass http://app;'
    fi ;;
  grpc) pass='grpc_pass grpc://app;' ;;
  *) echo "nginx-front.sh: rest or grpc, not $protocol" >&2; exit 2 ;;
esac

cat >"$dir/nginx.conf" <<EOF
worker_processes 1;
daemon off;
user root;
pid $dir/nginx.pid;
error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $dir/temp/body;
  proxy_temp_path $dir/temp/proxy;
  fastcgi_temp_path $dir/temp/fastcgi;
  uwsgi_temp_path $dir/temp/uwsgi;
  scgi_temp_path $dir/temp/scgi;
  upstream app { server $CALLBENCH_UPSTREAM; $keepalive }
  server {
    listen $CALLBENCH_FRONT_ADDR ssl http2;
    ssl_certificate $dir/cert.pem;
    ssl_certificate_key $dir/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    location / { $pass }
  }
}
EOF
exec /usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf"
