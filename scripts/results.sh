#!/usr/bin/env bash
# Regenerates README.md's tables of the tree workloads against the Rust
# peers, in place, or checks that a rerun reproduces them:
#
#   times         BENCHMARKS.md's sizes, each (workload, implementation)
#                 pair in a fresh process, medians of 5 repetitions, in 5
#                 rounds, each a sweep over every case in which the
#                 implementations of a case take turns; the median over the
#                 rounds is reported, and each peer's ratio to maple is the
#                 median over the rounds of the ratio within a round
#   instructions  instructions per operation of the timed part (callgrind),
#                 the --quick sizes, one repetition
#   check         runs the time table again and compares its peer ratios
#                 with README.md's (scripts/results_table.py compare); exits
#                 1 if one moved by more than 15%
#   check-instructions
#                 the same for the instruction table, comparing each peer's
#                 instructions per operation divided by maple's (exact on
#                 any machine: it moves only when the code does)
#
# Each table sits between `<!-- results:NAME -->` and `<!-- /results:NAME -->`
# in README.md; nothing else is touched.
#
# The time table takes 20 to 70 minutes on 2 cores, depending on the
# machine and its neighbours; run it on a quiet machine, pinned to CPU 1. The
# instruction table is exact anywhere (RESULTS_CPU=0 runs it on CPU 0,
# beside a time table on CPU 1).
#
# Usage: scripts/results.sh [times|instructions|check|check-instructions]...   (default: times instructions)
set -euo pipefail
cd "$(dirname "$0")/.."

tables=("$@")
[ ${#tables[@]} -eq 0 ] && tables=(times instructions)

cargo build --release -p maple-cli
maple=${CARGO_TARGET_DIR:-target}/release/maple
# The commit the binary was built from: the label of every table, even if
# HEAD moves while the tables run.
built=$(git rev-parse --short HEAD)
if ! git diff --quiet HEAD -- crates; then
    built="$built+changes"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

times_table() {
    taskset -c 1 "$maple" bench --workload tree --rounds 5 --format markdown >"$1"
}

instructions_table() {
    taskset -c "${RESULTS_CPU:-1}" "$maple" bench --workload tree --quick --reps 1 --count instructions \
        --format markdown >"$1"
}

for table in "${tables[@]}"; do
    case $table in
    times)
        times_table "$out/$table.md"
        ;;
    instructions)
        instructions_table "$out/$table.md"
        ;;
    check)
        times_table "$out/$table.md"
        python3 scripts/results_table.py compare times "$out/$table.md"
        continue
        ;;
    check-instructions)
        instructions_table "$out/$table.md"
        python3 scripts/results_table.py compare instructions "$out/$table.md"
        continue
        ;;
    *)
        echo "results.sh: unknown table '$table' (times, instructions, check, check-instructions)" >&2
        exit 2
        ;;
    esac
    python3 scripts/results_table.py replace "$table" "$out/$table.md" "$built"
    echo "results.sh: README.md's '$table' table regenerated"
done
