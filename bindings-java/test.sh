#!/usr/bin/env bash
# The Java package (bindings-java/README.md): libshardroute (capi/build.sh, unless
# SHARDROUTE_JAVA_SKIP_CAPI=1 and it is built), the package and its jar, the API tests, the
# README's example (its output as documented), and the conformance runner over every vector
# (its count file target/conformance/java.json). Outputs go to target/java.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${SHARDROUTE_JAVA_SKIP_CAPI:-0}" != 1 ] || [ ! -f target/capi/lib/libshardroute.so ]; then
  flock /tmp/shardroute-build.lock capi/build.sh
fi
JNA=/usr/share/java/jna.jar
# One version source: the package's Shardroute.VERSION is the workspace's (Cargo.toml).
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
grep -q "VERSION = \"$version\";" bindings-java/src/dev/shardroute/Shardroute.java ||
  { echo "bindings-java: Shardroute.VERSION is not the workspace version $version" >&2; exit 1; }
out=target/java
rm -rf "$out/classes" "$out/test-classes" "$out/example"
mkdir -p "$out/classes" "$out/test-classes" "$out/example" target/conformance
JAVAC=(javac --release 17 -Xlint:all -Werror)
"${JAVAC[@]}" -d "$out/classes" -cp "$JNA" bindings-java/src/dev/shardroute/*.java
printf 'Implementation-Title: shardroute\nImplementation-Version: %s\n' "$version" > "$out/MANIFEST.MF"
jar --create --file "$out/shardroute.jar" --manifest "$out/MANIFEST.MF" -C "$out/classes" .
"${JAVAC[@]}" -d "$out/test-classes" -cp "$out/shardroute.jar:$JNA" \
  bindings-java/test/dev/shardroute/*.java bindings-java/conformance/dev/shardroute/conformance/*.java
JAVA=(java -Djna.library.path="$PWD/target/capi/lib")
"${JAVA[@]}" -cp "$out/test-classes:$out/shardroute.jar:$JNA" dev.shardroute.ApiTest
# The README's example, as a user builds it: the jar and JNA on the class path.
sed -n '/^```java example/,/^```$/p' bindings-java/README.md | sed '1d;$d' > "$out/example/Example.java"
"${JAVAC[@]}" -d "$out/example" -cp "$out/shardroute.jar:$JNA" "$out/example/Example.java"
"${JAVA[@]}" -cp "$out/example:$out/shardroute.jar:$JNA" Example | tee "$out/example/example.out"
diff <(sed -n '/^```text example-output/,/^```$/p' bindings-java/README.md | sed '1d;$d') "$out/example/example.out"
echo "bindings-java/README.md example: output as documented"
"${JAVA[@]}" -cp "$out/test-classes:$out/shardroute.jar:$JNA" dev.shardroute.conformance.Runner \
  conformance/vectors target/conformance/java.json
