#!/usr/bin/env bash
# Runs the maple-tree unit and integration test executables under valgrind
# memcheck. Exits non-zero on any memory error, leak or test failure.
#
#   scripts/valgrind.sh            # from the repository root (or anywhere)
#   PROPTEST_CASES=4 scripts/valgrind.sh  -- fewer property-test cases
#   scripts/valgrind.sh --ignored   -- extra arguments go to every test binary
#   VALGRIND_FLAGS=--track-origins=yes scripts/valgrind.sh  -- more valgrind options
#
# Property tests run with PROPTEST_CASES=8 unless set; heavy tests stay ignored.
# Leaks count as errors when definitely or indirectly lost ("possibly lost"
# blocks come from the test harness's own threads).
set -euo pipefail

cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind is not installed (apt-get install valgrind)" >&2
    exit 2
fi

export PROPTEST_CASES="${PROPTEST_CASES:-8}"
# Failures found under valgrind are not worth persisting as regressions.
export PROPTEST_DISABLE_FAILURE_PERSISTENCE=1

# Build the test executables and list them (unit tests of the lib + tests/*.rs):
# the compiler artifacts of maple-tree built with the test profile.
mapfile -t exes < <(
    cargo test -p maple-tree --no-run --message-format=json 2>/dev/null |
        grep '"reason":"compiler-artifact"' |
        grep '"package_id":"[^"]*maple-tree' |
        grep '"profile":{[^}]*"test":true' |
        grep -o '"executable":"[^"]*"' |
        cut -d'"' -f4
)
if [ "${#exes[@]}" -eq 0 ]; then
    echo "no test executables found (did the build fail?)" >&2
    cargo test -p maple-tree --no-run >&2
    exit 1
fi

failed=()
for exe in "${exes[@]}"; do
    name="$(basename "$exe")"
    echo "=== valgrind: $name"
    # Run from the crate directory, as cargo test would.
    if ! (cd crates/maple-tree && valgrind \
            --quiet \
            --error-exitcode=1 \
            --leak-check=full \
            --show-leak-kinds=definite,indirect \
            --errors-for-leak-kinds=definite,indirect \
            ${VALGRIND_FLAGS:-} \
            "$exe" --test-threads=2 "$@"); then
        failed+=("$name")
    fi
done

if [ "${#failed[@]}" -ne 0 ]; then
    echo "valgrind: FAILED in ${failed[*]}" >&2
    exit 1
fi
echo "valgrind: all ${#exes[@]} test executables clean"
