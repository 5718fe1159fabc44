#!/usr/bin/env bash
# Builds one Java server of callbench (java-spring or java-grpc) into TARGET/servers/NAME/, with Maven from
# this reactor. Skips Maven altogether when nothing changed: the stamp is a hash of the poms, the sources
# (and contract/proto/ for java-grpc), this script and the JDK's version.
#   usage: build.sh NAME TARGET        (the manifests pass {target})
set -euo pipefail

name=${1:?usage: build.sh NAME TARGET}
target=${2:?usage: build.sh NAME TARGET}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
server="$root/servers/$name"
out="$target/servers/$name"

case "$name" in
    java-spring | java-grpc) ;;
    *) echo "build.sh: unknown server '$name'" >&2; exit 2 ;;
esac

# java-grpc compiles the repository's contract/proto/ folder; java-spring does not read it.
inputs=(servers/_java-shared/pom.xml servers/_java-shared/build.sh servers/_java-shared/workloads/pom.xml
    servers/_java-shared/workloads/src/main "servers/$name/pom.xml" "servers/$name/src")
[[ "$name" == java-grpc ]] && inputs+=(contract/proto)

stamp() {
    {
        java -version 2>&1
        cd "$root"
        find "${inputs[@]}" -type f | LC_ALL=C sort | xargs sha256sum
    } | sha256sum | cut -d' ' -f1
}

mkdir -p "$out"
# One build at a time (both servers share the reactor's workloads module and its target/).
exec 9>"$target/servers/.java-build.lock"
flock 9

want=$(stamp)
built() {
    [[ -f "$out/build.stamp" && "$(cat "$out/build.stamp")" == "$want" && -f "$out/$name.jar" ]] &&
        [[ "$name" != java-grpc || -d "$out/lib" ]]
}
if built; then
    exit 0
fi

echo "building $name with Maven (first build downloads dependencies)..." >&2
# Maven (Debian 3.8) writes stray colour codes on stdout even in batch mode: keep stdout clean.
mvn -q -B -f "$here/pom.xml" -pl ":$name" -am -DskipTests package >&2

rm -rf "$out/lib" "$out/$name.jar" "$out/build.stamp"
cp "$server/target/$name.jar" "$out/$name.jar"
if [[ -d "$server/target/lib" ]]; then
    cp -r "$server/target/lib" "$out/lib"
fi
echo "$want" >"$out/build.stamp"
