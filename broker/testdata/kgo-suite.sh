#!/usr/bin/env bash
# kgo-suite.sh runs franz-go's own client tests (pkg/kgo, at the version
# broker/go.mod requires) against the broker: it builds
# examples/listener, starts it on a temporary directory with -auto-create
# on a free loopback port, and runs each test of the suite on its own
# (KGO_SEEDS at the listener, KGO_TEST_RF=1), with a time limit per test,
# printing one line per test:
#
#	PASS|FAIL|SKIP|TIMEOUT  TestName  seconds
#
# (under a failed test, its failed and skipped subtests) and the counts at
# the end. A test's output is kept in $KGO_SUITE_LOGS (default: a new
# temporary directory, printed). If a test leaves the listener dead, the
# line says so and the next test gets a new one on a new directory.
#
# A second listener, with a SASL user, serves the suite's SCRAM tests
# (KGO_TEST_SCRAM_SEEDS, KGO_TEST_SCRAM with SCRAM-SHA-512). With
# KGO_SUITE_TLS=1 the first listener speaks TLS, with a certificate made
# here by openssl for 127.0.0.1 (KGO_TEST_TLS gives the suite its CA).
# With KGO_SUITE_RACE=1 the listener is built with the race detector, and
# the end says how many data races the listeners reported.
#
#	broker/testdata/kgo-suite.sh                 # every test of pkg/kgo
#	broker/testdata/kgo-suite.sh 'TestGroup|Txn' # those matching a regexp
#	KGO_SUITE_TLS=1 broker/testdata/kgo-suite.sh # every test, over TLS
#
# Environment: KGO_TEST_RECORDS (default 10000, as tansu runs it; the
# suite's own default is 500000), KGO_SUITE_TIMEOUT (per test, default
# 180s), KGO_SUITE_LOGS, KGO_SUITE_TLS, KGO_SUITE_RACE, and franz-go's
# other KGO_TEST_* knobs, passed through. The suite is not part of CI: the
# whole of it takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

filter=${1:-.}
per_test=${KGO_SUITE_TIMEOUT:-180s}
export KGO_TEST_RF=1 KGO_TEST_RECORDS=${KGO_TEST_RECORDS:-10000} KGO_LOG_LEVEL=${KGO_LOG_LEVEL:-none}
logs=${KGO_SUITE_LOGS:-$(mktemp -d -t kgo-suite-logs.XXXXXX)}
mkdir -p "$logs"
work=$(mktemp -d -t kgo-suite.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	chmod -R u+w "$work" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# franz-go's source from the module cache (read-only there), copied so
# that go test may build in it.
version=$(go list -m -f '{{.Version}}' github.com/twmb/franz-go)
src=$(go mod download -json "github.com/twmb/franz-go@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -r "$src" "$work/franz-go"
chmod -R u+w "$work/franz-go"
# The suite learns the broker's features (KIP-848, static membership,
# share groups) from its first admin request (adm); TestGroupSimple/848
# checks them before it makes one, which in a whole run some other test
# has made. A TestMain that makes it first gives a test run alone what a
# whole run sees.
cat >"$work/franz-go/pkg/kgo/strata_suite_main_test.go" <<'GO'
package kgo

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	adm()
	os.Exit(m.Run())
}
GO
echo "franz-go $version (pkg/kgo), logs in $logs"
(cd "$work/franz-go/pkg/kgo" && go test -c -o "$work/kgo.test" .)
race=()
[ "${KGO_SUITE_RACE:-}" = 1 ] && race=(-race)
go build "${race[@]}" -o "$work/listener" ./examples/listener

tls=()
if [ "${KGO_SUITE_TLS:-}" = 1 ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
		-subj /CN=strata-kgo-suite -addext subjectAltName=IP:127.0.0.1 \
		-keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
	tls=(-tls-cert "$work/cert.pem" -tls-key "$work/key.pem")
	export KGO_TEST_TLS="ca:$work/cert.pem"
fi

# launch runs a listener on a new directory with the arguments given and
# sets pid and addr to its process and address.
n=0
launch() {
	n=$((n + 1))
	mkdir -p "$work/dir$n"
	: >"$logs/listener$n.out"
	"$work/listener" -dir "$work/dir$n" -addr 127.0.0.1:0 "$@" >"$logs/listener$n.out" 2>&1 &
	pid=$!
	pids+=("$pid")
	addr=
	for _ in $(seq 100); do
		addr=$(sed -n 's/^serving Kafka clients on //p' "$logs/listener$n.out")
		[ -n "$addr" ] && break
		kill -0 "$pid" 2>/dev/null || { cat "$logs/listener$n.out" >&2; exit 1; }
		sleep 0.1
	done
	[ -n "$addr" ] || { echo "listener did not start" >&2; exit 1; }
}
launch -sasl kgo:kgo-secret
export KGO_TEST_SCRAM_SEEDS=$addr KGO_TEST_SCRAM=kgo:kgo-secret:512
start() {
	launch -auto-create "${tls[@]}"
	main=$pid main_log=$logs/listener$n.out
	export KGO_SEEDS=$addr
}
start

declare -A count=()
cd "$work/franz-go/pkg/kgo"
for t in $("$work/kgo.test" -test.list "$filter" | grep '^Test'); do
	began=$SECONDS
	set +e
	"$work/kgo.test" -test.run "^${t}\$" -test.v -test.count 1 -test.timeout "$per_test" >"$logs/$t.log" 2>&1
	rc=$?
	set -e
	if grep -q "^--- FAIL: $t " "$logs/$t.log"; then
		result=FAIL
	elif grep -q "^--- SKIP: $t " "$logs/$t.log"; then
		result=SKIP
	elif grep -q "^--- PASS: $t " "$logs/$t.log" && [ $rc = 0 ]; then
		result=PASS
	elif grep -q '^panic: test timed out' "$logs/$t.log"; then
		result=TIMEOUT
	else
		result=FAIL
	fi
	count[$result]=$((${count[$result]:-0} + 1))
	note=
	if ! kill -0 "$main" 2>/dev/null; then
		note="  (the listener died: $main_log)"
		start
	fi
	printf '%-7s  %-60s %4ds%s\n' "$result" "$t" $((SECONDS - began)) "$note"
	if [ "$result" = FAIL ]; then
		# The failed subtests, and the skipped ones (a feature the broker
		# does not advertise), under their test.
		grep -E '^ +--- (FAIL|SKIP): ' "$logs/$t.log" | sed -E 's/^ +--- ([A-Z]+): ([^ ]+).*/           \1 \2/' || true
	fi
done
echo
for r in PASS FAIL SKIP TIMEOUT; do
	printf '%s %d  ' "$r" "${count[$r]:-0}"
done
echo
if [ ${#race[@]} -gt 0 ]; then
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	pids=()
	races=$(cat "$logs"/listener*.out | grep -c '^WARNING: DATA RACE' || true)
	echo "data races in the listeners: $races (their output: $logs/listener*.out)"
fi
