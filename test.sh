#!/usr/bin/env sh
# Runs every test of every module in the repository (the root module and
# the nested ones, each with its own go.mod), under the race detector.
# Extra arguments go to each go test (for example -count=1, or -short).
set -eu
cd "$(dirname "$0")"
for mod in $(find . -name go.mod -not -path '*/testdata/*' | sort); do
	dir=$(dirname "$mod")
	echo "== $dir"
	(cd "$dir" && go test -race "$@" ./...)
done
