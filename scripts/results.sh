#!/usr/bin/env bash
# Regenerates README.md's tables of the tree workloads against the Rust
# peers, in place: the time table (BENCHMARKS.md's sizes, each
# (workload, implementation) pair in a fresh process, medians of 5
# repetitions) and the instruction table (callgrind, the --quick sizes, one
# repetition). Each table sits between `<!-- results:NAME -->` and
# `<!-- /results:NAME -->` in README.md; nothing else is touched.
#
# About 15 minutes on 2 cores. Run it on a quiet machine, pinned to CPU 1:
# the time table is only as good as the machine, the instruction table is
# exact anywhere.
#
# Usage: scripts/results.sh [times|instructions]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."

tables=("$@")
[ ${#tables[@]} -eq 0 ] && tables=(times instructions)

cargo build --release -p maple-cli
maple=${CARGO_TARGET_DIR:-target}/release/maple
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for table in "${tables[@]}"; do
    case $table in
    times)
        taskset -c 1 "$maple" bench --workload tree --format markdown >"$out/$table.md"
        ;;
    instructions)
        taskset -c 1 "$maple" bench --workload tree --quick --reps 1 --count instructions \
            --format markdown >"$out/$table.md"
        ;;
    *)
        echo "results.sh: unknown table '$table' (times, instructions)" >&2
        exit 2
        ;;
    esac
    # Replace the lines between the table's markers with the new table,
    # stamped with the commit it was measured at.
    python3 - "$table" "$out/$table.md" "$(git rev-parse --short HEAD)" <<'EOF'
import sys
name, path, commit = sys.argv[1:4]
begin, end = f"<!-- results:{name} -->", f"<!-- /results:{name} -->"
readme = open("README.md").read()
if begin not in readme or end not in readme:
    sys.exit(f"results.sh: README.md has no {begin} ... {end} markers")
table = open(path).read().strip()
head, rest = readme.split(begin, 1)
_, tail = rest.split(end, 1)
body = f"{begin}\n<!-- measured at {commit} by scripts/results.sh -->\n\n{table}\n\n{end}"
open("README.md", "w").write(head + body + tail)
EOF
    echo "results.sh: README.md's '$table' table regenerated"
done
