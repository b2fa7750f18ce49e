#!/usr/bin/env bash
# Runs maple-tree's tests that exercise its unsafe code under Miri (undefined
# behaviour, strict provenance), installing the nightly toolchain and Miri if
# they are missing. Called by .ci/run; about 10 minutes on 2 cores.
#
# What runs, and why those:
# - the unit tests: node encoding (header, inline/boxed/zero-sized values,
#   child words, copy_from), the pool and its chunk cache, the write paths;
#   the three write tests that build 5,000-10,000-entry trees are skipped
#   (hours under Miri; the same paths run at smaller sizes elsewhere);
# - boundaries, dup (duplication, fallible duplication, iterators,
#   cursors), no_alloc (every read path), drops (leaks, double drops,
#   panicking Clone/Drop/callbacks): sized down with `cfg!(miri)`;
# - rcu_single: the concurrent tree on one thread, under Tree Borrows,
#   because crossbeam-epoch 0.9 is not clean under Stacked Borrows (nor
#   under strict provenance).
# The proptest suite (model.rs) needs file access and is far too slow
# interpreted; the fuzz targets and valgrind cover that ground.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
rustup component add --toolchain nightly miri rust-src
cargo +nightly miri setup

MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p maple-tree \
    --lib --test boundaries --test dup --test no_alloc --test drops -- \
    --skip write::tests::bulk_build_packs_full_nodes_without_splits \
    --skip write::tests::removals_rebalance_and_collapse_the_root \
    --skip write::tests::spanning_store_replaces_many_leaves

# crossbeam-epoch 0.9 casts integers to pointers (its tagged pointers), so
# this run cannot use strict provenance; the tree's own code is checked with
# it above.
MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-permissive-provenance" \
    cargo +nightly miri test -p maple-tree --test rcu_single
