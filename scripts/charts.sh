#!/usr/bin/env bash
# Regenerates the charts of docs/charts/ (README.md's pictures) with
# `maple bench --plot` and `maple fork-table --plot`, pinned to CPU 1.
# About 13 minutes on 2 cores; the instruction panels need valgrind.
# Run it on a quiet machine: the ns panels are only as good as the machine.
#
# Usage: scripts/charts.sh [DIR]   (default: docs/charts)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-docs/charts}
cargo build --release -p maple-cli
maple=target/release/maple

# dup vs rebuild vs memcpy against N, and the fork-rate curves.
taskset -c 1 "$maple" fork-table --plot "$dir" --format lines
# Every peer against N: dup, rebuild; the address-space model's fork by VMA count.
taskset -c 1 "$maple" bench -w dup,rebuild,fork_vmas --plot "$dir" --format lines
# Time and instructions per operation (callgrind) at the --quick sizes.
taskset -c 1 "$maple" bench -w load,iter,rand_store,gap_rev --quick --count instructions \
    --plot "$dir" --format lines
