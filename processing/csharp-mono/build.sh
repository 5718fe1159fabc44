#!/bin/sh
# Compiles Auth.cs with mcs -optimize+ into OUT/auth.exe (OUT = $1), unless the sources, this
# script and the compiler/library versions are unchanged since the last build (stamp file).
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUT_DIR}
mkdir -p "$out"
stamp=$( { cat "$dir/Auth.cs" "$dir/build.sh"; mcs --version; pkg-config --modversion newtonsoft-json; } | sha256sum | cut -d' ' -f1)
if [ -f "$out/auth.exe" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
# Newtonsoft.Json comes from Debian's libnewtonsoft-json-cil-dev (pkg-config newtonsoft-json);
# at run time mono loads it from the GAC, where the Debian package installs it.
mcs -optimize+ -target:exe -pkg:newtonsoft-json -r:System.Core -out:"$out/auth.exe" "$dir/Auth.cs"
echo "$stamp" > "$out/.stamp"
