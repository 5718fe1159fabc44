#!/bin/sh
# Builds go-grpc: `build.sh ROOT OUT` (server.toml passes {root} and {target}/servers/go-grpc).
#  1. Generates the protobuf and gRPC code from the repo's contract/proto/ into internal/pb/
#     (git-ignored), only when the .proto files, the pinned plugin versions
#     (go.mod/go.sum), protoc or this script changed; a stamp file holds their hash.
#  2. Compiles OUT/server; go build is incremental, so an unchanged tree costs well under a second.
set -eu
export CGO_ENABLED=0 # a static binary; no C toolchain needed
root=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
cd "$(dirname "$0")"

command -v protoc >/dev/null || { echo "go-grpc: protoc not found (Debian: apt-get install protobuf-compiler)" >&2; exit 1; }
protos=$(cd "$root/contract/proto" && echo callbench/v1/*.proto)
stamp=$( (protoc --version; cat go.mod go.sum build.sh; cd "$root/contract/proto" && cat $protos) | sha256sum | cut -d' ' -f1)

if [ "$(cat internal/pb/.stamp 2>/dev/null)" != "$stamp" ]; then
	# The plugins at the versions go.mod pins (its `tool` directives).
	go build -trimpath -o "$out/bin/" google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc
	# The .proto files have no go_package option: map each to our package.
	opts=module=callbench/go-grpc
	for p in $protos; do opts="$opts,M$p=callbench/go-grpc/internal/pb"; done
	tmp=$(mktemp -d internal.gen.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	protoc -I "$root/contract/proto" \
		--plugin=protoc-gen-go="$out/bin/protoc-gen-go" --go_out="$tmp" --go_opt="$opts" \
		--plugin=protoc-gen-go-grpc="$out/bin/protoc-gen-go-grpc" --go-grpc_out="$tmp" --go-grpc_opt="$opts" \
		$protos
	echo "$stamp" > "$tmp/internal/pb/.stamp"
	rm -rf internal/pb
	mkdir -p internal
	mv "$tmp/internal/pb" internal/pb
	echo "go-grpc: generated internal/pb from contract/proto/callbench/v1" >&2
fi

go build -trimpath -o "$out/server" .
