#!/usr/bin/env bash
# Runs each cargo-fuzz target (fuzz/) for a bounded time with
# AddressSanitizer, starting from the committed seed corpus, installing
# cargo-fuzz if it is missing. Called by .ci/run.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   default: 60 seconds for each of tree, tree_panics, mm, rcu.
# For a long run of one target (new inputs are kept in target/fuzz-corpus):
#   scripts/fuzz.sh 3600 tree
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(tree tree_panics mm rcu)
fi

if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
command -v cargo-fuzz > /dev/null || cargo install cargo-fuzz --locked

# cargo-fuzz builds with AddressSanitizer by default; -O: optimised, with
# debug assertions.
cargo +nightly fuzz build -O
for t in "${targets[@]}"; do
    mkdir -p "target/fuzz-corpus/$t"
    cargo +nightly fuzz run -O "$t" "target/fuzz-corpus/$t" "fuzz/corpus/$t" -- \
        -max_total_time="$seconds" -seed=1 -print_final_stats=1
done
