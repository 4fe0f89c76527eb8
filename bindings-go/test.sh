#!/usr/bin/env bash
# `make test-go`: libshardroute (capi/build.sh: release library, header, pkg-config file;
# cargo rebuilds only what changed), then `go vet` and `go test` of the Go package:
# its unit tests, README's example, and the conformance runner over every vector (its
# count file target/conformance/go.json). Standard library only: nothing is downloaded
# (GOPROXY=off), and Go's cache lives under target/go, not in $HOME.
set -euo pipefail
cd "$(dirname "$0")/.."
flock /tmp/shardroute-build.lock capi/build.sh
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=readonly CGO_ENABLED=1
export GOCACHE="$PWD/target/go/cache" GOPATH="$PWD/target/go/path" GOMODCACHE="$PWD/target/go/path/pkg/mod"
mkdir -p target/conformance "$GOCACHE" "$GOPATH"
cd bindings-go
go vet ./...
go test -count=1 "$@" ./...
cat ../target/conformance/go.json
