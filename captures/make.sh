#!/usr/bin/env bash
# Rebuilds the test programs and captures every program of captures/README.md
# with `maple capture` (needs strace and gcc; run as root on Linux x86-64).
# Usage: captures/make.sh [MAPLE]   (default: target/release/maple)
set -euo pipefail
cd "$(dirname "$0")"
MAPLE=${1:-../target/release/maple}
BIN=$(mktemp -d)
for p in errors pkeys_guard threads forker mremap_heavy madvise_heavy churn12k mapcount; do
    gcc -O1 -o "$BIN/$p" "src/$p.c" -lpthread
done
gcc -O1 -static -o "$BIN/static_hello" src/static_hello.c

cap() { # name [--state-calls] command...
    local name=$1; shift
    local opts=()
    if [ "$1" = --state-calls ]; then opts=(--state-calls); shift; fi
    rm -rf "$name"
    "$MAPLE" capture "${opts[@]}" --out "$name" -- "$@" >/dev/null
}
cap errors --state-calls "$BIN/errors"
cap pkeys_guard --state-calls "$BIN/pkeys_guard"
cap threads       "$BIN/threads"
cap forker        "$BIN/forker"
cap mremap_heavy  "$BIN/mremap_heavy"
cap madvise_heavy "$BIN/madvise_heavy"
cap static_hello  "$BIN/static_hello"
cap python3       python3 -c 'import json, re; print(json.dumps({"n": sum(range(10))}))'
cap sh_pipeline   sh -c 'ls /usr | sort | head -3'
cap ls            ls -la /usr/lib
cap perl          perl -e 'my %h = map { $_ => $_ * 2 } 1..10000; print scalar(keys %h), "\n"'
cap awk           awk 'BEGIN { for (i = 0; i < 20000; i++) a[i] = i; print length(a) }'
cap churn12k     "$BIN/churn12k"
cap find_xargs    sh -c 'find /usr/include/linux -name "*.h" | head -50 | xargs wc -l | tail -1'
cap gcc           gcc -c -o "$BIN/e.o" src/errors.c
cap python3_threads python3 -c 'import threading, subprocess, sqlite3, decimal; t=[threading.Thread(target=lambda: sum(range(100000))) for _ in range(4)]; [x.start() for x in t]; [x.join() for x in t]; subprocess.run(["true"])'
cap rust_maple    "$MAPLE" list
cap mapcount      "$BIN/mapcount"
gzip -9 mapcount/trace.* mapcount/maps.*.exit   # 10 MB raw; the replay reads .gz
rm -rf "$BIN"
du -sh .
