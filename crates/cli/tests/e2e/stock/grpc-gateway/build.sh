#!/bin/sh
# Builds grpc-gateway-route-guide: `build.sh OUT` (scripts/setup passes {target}/stock/grpc-gateway).
#  1. Generates the protobuf, gRPC-client and grpc-gateway code of route_guide_http.proto into
#     routeguide/ (git-ignored) with the plugins go.mod pins, when they or the proto changed.
#  2. Compiles OUT/grpc-gateway-route-guide (go build is incremental).
set -eu
export CGO_ENABLED=0
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")"
api=../../../../../dynproto/src/google_api
stamp=$( (protoc --version; cat go.mod go.sum build.sh route_guide_http.proto "$api"/*.proto) | sha256sum | cut -d' ' -f1)
if [ "$(cat routeguide/.stamp 2>/dev/null)" != "$stamp" ]; then
	go build -trimpath -o "$out/bin/" google.golang.org/protobuf/cmd/protoc-gen-go \
		google.golang.org/grpc/cmd/protoc-gen-go-grpc \
		github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway
	tmp=$(mktemp -d gen.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	# google/api/*.proto as callbench's dynproto knows them; the Go code of them is genproto's.
	mkdir -p "$tmp/include/google/api" "$tmp/out"
	cp "$api"/annotations.proto "$api"/http.proto "$tmp/include/google/api/"
	m=Mgoogle/api/annotations.proto=google.golang.org/genproto/googleapis/api/annotations
	m=$m,Mgoogle/api/http.proto=google.golang.org/genproto/googleapis/api/annotations
	protoc -I . -I "$tmp/include" \
		--plugin=protoc-gen-go="$out/bin/protoc-gen-go" --go_out="$tmp/out" --go_opt="module=callbench/grpc-gateway-route-guide,$m" \
		--plugin=protoc-gen-go-grpc="$out/bin/protoc-gen-go-grpc" --go-grpc_out="$tmp/out" \
		--go-grpc_opt="module=callbench/grpc-gateway-route-guide,$m" \
		--plugin=protoc-gen-grpc-gateway="$out/bin/protoc-gen-grpc-gateway" --grpc-gateway_out="$tmp/out" \
		--grpc-gateway_opt="module=callbench/grpc-gateway-route-guide,$m" \
		route_guide_http.proto
	echo "$stamp" > "$tmp/out/routeguide/.stamp"
	rm -rf routeguide
	mv "$tmp/out/routeguide" routeguide
fi
go build -trimpath -o "$out/grpc-gateway-route-guide" .
