#!/bin/sh
# Builds target/processing-java.jar with Maven, unless pom.xml, the sources and this script are
# unchanged since the last build (a stamp in target/): callbench runs this before every run.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
jar="$dir/target/processing-java.jar"
stamp_file="$dir/target/.build-stamp"
stamp=$( (cd "$dir" && find pom.xml build.sh src -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1)
if [ -f "$jar" ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
mvn -q -B -f "$dir/pom.xml" package
echo "$stamp" > "$stamp_file"
