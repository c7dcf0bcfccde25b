#!/usr/bin/env bash
# run.sh regenerates bench/RESULTS.md: the overhead, scrub and classify
# benchmarks, five samples each, benchstat's summary, and the storm
# simulation (which also rewrites storm.svg). The raw outputs are kept in
# results/.
#
# The five samples are five interleaved rounds of the whole suite (the
# same samples as -count=5, which would run each benchmark five times in a
# row): on a shared machine the load drifts, and interleaving keeps the
# systems compared under the same load in each round.
#
# It exits with the storm's status: 1 when toolmw misses a storm target.
# Run it on a machine as quiet as you can get; the load is recorded.
set -euo pipefail
cd "$(dirname "$0")"
out=results
mkdir -p "$out"

build="go test -c -o $out/bench.test ."
hotsys='direct|toolmw_wrap|toolmw_default|toolmw_default_nolimit|failsafe_retry_cb_timeout|toolmw_timeout|toolmw_breaker'
bench="for round in 1 2 3 4 5; do $out/bench.test -test.run='^\$' -test.bench=. -test.benchmem -test.count=1 -test.timeout=60m; done"
hot="for round in 1 2 3 4 5; do $out/bench.test -test.run='^\$' -test.bench='^BenchmarkOverhead\$/^($hotsys)\$' -test.cpu=1 -test.benchmem -test.count=1; $out/bench.test -test.run='^\$' -test.bench='^BenchmarkOverheadParallel\$/^($hotsys)\$' -test.cpu=2 -test.benchmem -test.count=1; done"
stat="go run golang.org/x/perf/cmd/benchstat@latest $out/bench.txt"
storm="go run ./cmd/storm -check -svg storm.svg"
scrubvs="go run ./cmd/scrubreport -o $out/scrub-vs-gitleaks.md"
cat > "$out/commands.txt" <<CMDS
cd bench
$build
$bench > $out/bench.txt
$hot > $out/hotpath.txt
$stat > $out/benchstat.txt
$storm > $out/storm.md
$scrubvs
go run ./cmd/report -dir $out > RESULTS.md
CMDS

{
	echo "date:        $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit:      $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "nproc:       $(nproc)"
	echo "cpu:         $(lscpu | grep 'Model name' | sed 's/Model name: *//')"
	echo "go:          $(go version)"
	echo "load before: $(uptime)"
} > "$out/machine.txt"

$build
eval "$bench" | tee "$out/bench.txt"
eval "$hot" | tee "$out/hotpath.txt"
echo "load after:  $(uptime)" >> "$out/machine.txt"

if ! $stat > "$out/benchstat.txt" 2>&1; then
	echo "(benchstat could not run; the tables above give the medians)" > "$out/benchstat.txt"
fi

status=0
$storm > "$out/storm.md" || status=$?
$scrubvs
go run ./cmd/report -dir "$out" > RESULTS.md
echo "wrote RESULTS.md (storm status $status)"
exit $status
