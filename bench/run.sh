#!/bin/sh
# run.sh regenerates bench/RESULTS.md: the overhead, scrub and classify
# benchmarks with -count=5, benchstat's summary, and the storm simulation
# (which also rewrites storm.svg). The raw outputs are kept in results/.
#
# It exits with the storm's status: 1 when toolmw misses a storm target.
# Run it on a machine as quiet as you can get; the load is recorded.
set -eu
cd "$(dirname "$0")"
out=results
mkdir -p "$out"

bench="go test -run='^\$' -bench=. -benchmem -count=5 -timeout=60m ."
stat="go run golang.org/x/perf/cmd/benchstat@latest $out/bench.txt"
storm="go run ./cmd/storm -check -svg storm.svg"
cat > "$out/commands.txt" <<CMDS
cd bench
$bench > $out/bench.txt
$stat > $out/benchstat.txt
$storm > $out/storm.md
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

eval "$bench" | tee "$out/bench.txt"
echo "load after:  $(uptime)" >> "$out/machine.txt"

if ! $stat > "$out/benchstat.txt" 2>&1; then
	echo "(benchstat could not run; the tables above give the medians)" > "$out/benchstat.txt"
fi

status=0
$storm > "$out/storm.md" || status=$?
go run ./cmd/report -dir "$out" > RESULTS.md
echo "wrote RESULTS.md (storm status $status)"
exit $status
