#!/usr/bin/env bash
# Runs maple-tree's tests that exercise its unsafe code under Miri (undefined
# behaviour, strict provenance), installing the nightly toolchain and Miri if
# they are missing. Called by .ci/run; about 10 minutes on 2 cores.
#
# What runs, and why those:
# - the unit tests: node encoding (header, inline/boxed/zero-sized values,
#   child words, copy_from), the pool and its chunk cache, the write paths;
#   the write tests that build 1,000-10,000-entry trees are skipped (far
#   too long interpreted; the same paths run at smaller sizes below);
# - boundaries (but its long random run), no_alloc (every read path, every
#   cursor walk), and a selection of dup (duplication, equality, iterators,
#   FromIterator/Extend) and drops (fallible duplication, panicking split
#   and dup_with callbacks, owning iteration, values handed back): sized
#   down with `cfg!(miri)`;
# - a selection of the crash tests (panicking Clone, Drop and callbacks),
#   on 24-entry trees;
# - iter_edges (iterators and cursor steps at every edge: both ends
#   meeting, ranges, owning iteration; a 1,000-entry allocation tree four
#   levels high, so that iterators' ends also walk back down from the
#   root), sized down, but its 20,000-entry tall-tree test;
# - rcu_single: the concurrent tree on one thread, under Tree Borrows,
#   because crossbeam-epoch 0.9 is not clean under Stacked Borrows (nor
#   under strict provenance); with the same flags, the crash test of its
#   writes with values kept inside the nodes, every drop panicking in turn,
#   and that of boxed values reclaimed between writes (their boxes kept for
#   later values) with one drop panicking;
# - send_sync: iterators, cursors and entries moved to and shared between
#   threads (Miri checks the threads for data races), sized down; its RCU
#   tests (`an_rcu_read*`: a read iterated on another thread while the
#   writer stores, a lookup while the writer appends to its leaf, a reader
#   storing through an atomic while the writer rebuilds its leaf, a reader
#   holding a value kept inside the nodes while the writer copies it into
#   a rebuilt leaf) under the flags of rcu_single;
# - debug_views: what the mutable and owning iterators print (they lend
#   the entries they have left while they print);
# - gaps' fallbacks_at_every_depth: gap searches that fail at the near edge
#   and turn to the levels they noted on the way down, sized down;
# - kept_values: stores that keep a cut entry's value on the part that
#   survives (moved, not cloned), in a plain tree and (with the flags of
#   rcu_single) under a reader that holds the value.
# The proptest suite (model.rs) needs file access and is far too slow
# interpreted; the fuzz targets and valgrind cover that ground.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
rustup component add --toolchain nightly miri rust-src
cargo +nightly miri setup

# Miri interprets each test binary on one thread: two groups side by side
# use both cores. Each group's output is printed when it ends.
strict="-Zmiri-strict-provenance"
skip=(
    --skip write::tests::bulk_build_packs_full_nodes_without_splits
    --skip write::tests::removals_rebalance_and_collapse_the_root
    --skip write::tests::spanning_store_replaces_many_leaves
    --skip write::tests::sequential_stores_take_the_append_path
    --skip write::tests::without_the_append_path_the_same_stores_rewrite_nodes
)
# crossbeam-epoch 0.9 casts integers to pointers (its tagged pointers), so
# the RCU test cannot use strict provenance; the tree's own code is checked
# with it in every other test. The global epoch collector keeps deferred
# functions it never runs at process exit (crossbeam documents that garbage
# may never be collected), which Miri would report as leaks: the test
# checks itself, with weak references, that every value it made was dropped.
rcu="-Zmiri-tree-borrows -Zmiri-permissive-provenance -Zmiri-ignore-leaks"
# Under Miri each test is sized down with `cfg!(miri)`; of the suites that
# run one generic test per value type, the boxed-value variant (`_big`) runs.
drops=(split_panics_big dup_map_panics_big try_dup_fails_big handed_back_big
    into_iter_partial_big insert_with_not_clone)
dup=(equality_is_by_contents into_iterator_forms debug_prints clone_of_a_tall_tree
    from_iter_and_extend)
# Panicking Clone, Drop and callbacks at every call (tests/crash.rs, on
# 24-entry trees under Miri): spanning stores, clear, drop, owning iteration.
crash=(inline_values::insert_spanning boxed_values::remove_range_spanning
    boxed_values::insert_with_split inline_values::clear boxed_values::drop_tree
    boxed_values::into_iter_part_way)
logs=$(mktemp -d)
(
    MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --lib -- "${skip[@]}" &&
        MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --test no_alloc &&
        MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --test drops -- "${drops[@]}" &&
        MIRIFLAGS="$rcu" cargo +nightly miri test -p maple-tree --test rcu_single &&
        MIRIFLAGS="$rcu" cargo +nightly miri test -p maple-tree --test crash -- \
            inline_values::rcu_inline_writes_and_reclaim rcu_reclaim_during_writes_with_a_drop_panicking &&
        MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --test send_sync -- \
            --skip an_rcu_read &&
        MIRIFLAGS="$rcu" cargo +nightly miri test -p maple-tree --test send_sync -- an_rcu_read &&
        MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --test debug_views -- \
            --skip the_concurrent_tree &&
        MIRIFLAGS="$rcu" cargo +nightly miri test -p maple-tree --test kept_values -- \
            a_reader_keeps_reading
) > "$logs/a" 2>&1 &
a=$!
(
    MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --test dup -- "${dup[@]}" &&
        MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --test boundaries -- \
            --skip all_forms_against_the_model &&
        MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --test crash -- "${crash[@]}" &&
        MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --test iter_edges -- \
            --skip tall_trees_iterate_both_ways_across_every_level &&
        MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --test gaps -- \
            fallbacks_at_every_depth &&
        MIRIFLAGS="$strict" cargo +nightly miri test -p maple-tree --test kept_values -- \
            --skip a_reader_keeps_reading
) > "$logs/b" 2>&1 &
b=$!
status=0
wait $a || status=1
cat "$logs/a"
wait $b || status=1
cat "$logs/b"
rm -r "$logs"
exit $status
