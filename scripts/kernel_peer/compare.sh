#!/usr/bin/env bash
# Side by side: the kernel's own maple tree (kernel_peer, see build.sh) and
# maple (`maple bench -i maple`), on the workloads of WORKLOADS.md.
#
# For every row (workload, N, Q), in every round, the two run one after the
# other (alternating which goes first), each a whole measurement of REPS
# repetitions in its own process, pinned with `taskset -c CPU`. Printed per
# row: the median over rounds of each side's ns/op, the median over rounds of
# the per-round ratio kernel/maple (> 1: maple is faster), and instructions
# per operation of the timed part for both (one repetition under callgrind
# with --toggle-collect='*timed_part*'; maple's own `--count instructions`).
# The checksums of the two sides must agree (and match WORKLOADS.md where it
# has a reference), or the row is flagged.
#
# usage: compare.sh [--rounds R] [--reps R] [--cpu C] [--rows FILE]
#                   [--only REGEX] [--no-instructions] [--no-build]
#                   [--kernel BIN] [--out DIR]
#   --rows FILE  rows "workload N Q" one per line (Q "-" for none); default:
#                the built-in list below
#   --only RE    keep only rows whose "workload N Q" matches RE (grep -E)
#   --kernel BIN the kernel driver (default: $KPEER_WORK/bin/kernel_peer;
#                kernel_peer-core is the build without hardening flags)
#   --out DIR    where raw results go (default: $KPEER_WORK/compare-<time>)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
WORK="${KPEER_WORK:-/work/kpeer}"
ROUNDS=3
REPS=5
CPU=1
ROWS_FILE=""
ONLY=""
INSTR=1
BUILD=1
KBIN=""
OUT=""

while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift 2 ;;
        --reps) REPS="$2"; shift 2 ;;
        --cpu) CPU="$2"; shift 2 ;;
        --rows) ROWS_FILE="$2"; shift 2 ;;
        --only) ONLY="$2"; shift 2 ;;
        --no-instructions) INSTR=0; shift ;;
        --no-build) BUILD=0; shift ;;
        --kernel) KBIN="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "compare.sh: unknown argument $1" >&2; exit 1 ;;
    esac
done

die() { echo "compare.sh: error: $*" >&2; exit 1; }
say() { echo "compare.sh: $*" >&2; }

command -v taskset >/dev/null || die "taskset is missing (apt-get install -y util-linux)"
command -v python3 >/dev/null || die "python3 is missing"
if [ "$INSTR" = 1 ]; then
    command -v valgrind >/dev/null || die "valgrind is missing (apt-get install -y valgrind), or pass --no-instructions"
fi

DEFAULT_ROWS='
load 1000000 10000000
dup 21 -
dup 821 -
dup 12821 -
dup 51221 -
gap_rev 100000 200000
gap_fwd 100000 200000
gap_win_rev 100000 200000
gap_win_fwd 100000 200000
gap_rev 100000 1000000
gap_fwd 100000 1000000
gap_win_rev 100000 1000000
gap_win_fwd 100000 1000000
seq_store 1000000 -
rand_store 1000000 -
erase 1000000 -
overwrite 1000000 1000000
iter 1000000 -
rebuild 21 -
rebuild 821 -
'
if [ -n "$ROWS_FILE" ]; then
    ROWS="$(grep -v '^\s*#' "$ROWS_FILE" | grep -v '^\s*$')"
else
    ROWS="$(echo "$DEFAULT_ROWS" | grep -v '^\s*$')"
fi
if [ -n "$ONLY" ]; then
    ROWS="$(echo "$ROWS" | grep -E -- "$ONLY" || true)"
fi
[ -n "$ROWS" ] || die "no rows to run"

# Binaries: the kernel driver (built by build.sh) and maple (cargo), and a
# snapshot of maple's binary, so that a rebuild by someone else during the run
# cannot change what is measured.
if [ "$BUILD" = 1 ]; then
    "$HERE/build.sh" >/dev/null
    say "cargo build --release -p maple-cli (nice)"
    (cd "$REPO" && nice cargo build --release -p maple-cli >&2) || die "cargo build failed"
fi
KBIN="${KBIN:-$WORK/bin/kernel_peer}"
[ -x "$KBIN" ] || die "no kernel driver at $KBIN (run build.sh)"
[ -x "$REPO/target/release/maple" ] || die "no $REPO/target/release/maple (cargo build --release -p maple-cli)"
OUT="${OUT:-$WORK/compare-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
MBIN="$OUT/maple"
cp "$REPO/target/release/maple" "$MBIN"
MREV="$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(cd "$REPO" && git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    MREV="$MREV (work tree modified)"
fi

RAW="$OUT/raw.tsv"        # round impl workload n q ns_per_op checksum
INS="$OUT/instr.tsv"      # impl workload n q instructions_per_op checksum
: > "$RAW"
: > "$INS"
{
    echo "date: $(date -Is)"
    echo "host: $(uname -srm); $(nproc) CPUs"
    echo "kernel driver: $KBIN"
    sed 's/^/  /' "${KBIN}.flags" 2>/dev/null || true
    echo "maple: $REPO/target/release/maple at $MREV (run from the snapshot $MBIN)"
    echo "rounds: $ROUNDS, reps per measurement: $REPS, pinned: taskset -c $CPU"
    echo "uptime at start: $(uptime)"
} | tee "$OUT/meta.txt" >&2

# field NAME LINE -> the value of NAME=... in a result line
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }

qargs() { [ "$1" = "-" ] && return 0; echo "--q $1"; }

run_kernel() { # workload n q
    local line
    line="$(taskset -c "$CPU" "$KBIN" -w "$1" --n "$2" $(qargs "$3") --reps "$REPS" 2>>"$OUT/kernel.stderr" | grep '^workload=' | tail -1)" \
        || { say "kernel run failed: $1 n=$2 q=$3 (see $OUT/kernel.stderr)"; return 1; }
    echo "$line" >> "$OUT/kernel.lines"
    echo "$line"
}

run_maple() { # workload n q
    local line
    line="$(taskset -c "$CPU" "$MBIN" bench -w "$1" -i maple --n "$2" $(qargs "$3") --reps "$REPS" -f lines 2>>"$OUT/maple.stderr" | grep '^workload=' | tail -1)" \
        || { say "maple run failed: $1 n=$2 q=$3 (see $OUT/maple.stderr)"; return 1; }
    echo "$line" >> "$OUT/maple.lines"
    echo "$line"
}

record() { # round impl workload n q line
    local ns sum
    ns="$(field ns_per_op "$6")"; sum="$(field checksum "$6")"
    [ -n "$ns" ] || { say "no ns_per_op in: $6"; return 0; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$ns" "$sum" >> "$RAW"
}

nrows=$(echo "$ROWS" | wc -l)
for round in $(seq 1 "$ROUNDS"); do
    i=0
    while read -r w n q; do
        i=$((i + 1))
        q="${q:--}"
        # Alternate which side goes first, by round and by row.
        if [ $(((round + i) % 2)) = 0 ]; then order="kernel maple"; else order="maple kernel"; fi
        for side in $order; do
            if [ "$side" = kernel ]; then
                line="$(run_kernel "$w" "$n" "$q")" || continue
            else
                line="$(run_maple "$w" "$n" "$q")" || continue
            fi
            record "$round" "$side" "$w" "$n" "$q" "$line"
        done
        say "round $round/$ROUNDS row $i/$nrows: $w n=$n q=$q done"
    done <<< "$ROWS"
done
echo "uptime after timing: $(uptime)" | tee -a "$OUT/meta.txt" >&2

if [ "$INSTR" = 1 ]; then
    while read -r w n q; do
        q="${q:--}"
        # Kernel: one repetition under callgrind, only the timed_part_* functions.
        cg="$OUT/callgrind.kernel.$w.$n.$q.out"
        kline="$(valgrind --tool=callgrind --collect-atstart=no \
                    --toggle-collect='*timed_part*' --callgrind-out-file="$cg" \
                    "$KBIN" -w "$w" --n "$n" $(qargs "$q") --reps 1 \
                    2>>"$OUT/kernel.callgrind.stderr" | grep '^workload=' | tail -1)" || kline=""
        total="$(sed -n 's/^summary: *//p; s/^totals: *//p' "$cg" 2>/dev/null | head -1)"
        if [ -n "$kline" ] && [ -n "$total" ]; then
            case "$w" in
                load|overwrite|gap_*) ops="$q" ;;
                iter) ops=$((10 * n)) ;;
                dup|rebuild) ops=$((2000000 / n)); [ "$ops" -ge 1 ] || ops=1 ;;
                *) ops="$n" ;;
            esac
            ipo="$(python3 -c "print(f'{$total / $ops:.1f}')")"
            printf 'kernel\t%s\t%s\t%s\t%s\t%s\n' "$w" "$n" "$q" "$ipo" "$(field checksum "$kline")" >> "$INS"
        else
            say "kernel callgrind run failed: $w n=$n q=$q"
        fi
        rm -f "$cg"
        # maple: its own --count instructions (same callgrind toggle).
        mline="$(taskset -c "$CPU" "$MBIN" bench -w "$w" -i maple --n "$n" $(qargs "$q") \
                    --reps 1 -f lines --count instructions 2>>"$OUT/maple.callgrind.stderr" \
                    | grep '^workload=' | tail -1)" || mline=""
        mipo="$(field instructions_per_op "$mline")"
        if [ -n "$mipo" ]; then
            printf 'maple\t%s\t%s\t%s\t%s\t%s\n' "$w" "$n" "$q" "$mipo" "$(field checksum "$mline")" >> "$INS"
        else
            say "maple --count instructions gave nothing: $w n=$n q=$q"
        fi
        say "instructions: $w n=$n q=$q done"
    done <<< "$ROWS"
    echo "uptime after instruction counts: $(uptime)" | tee -a "$OUT/meta.txt" >&2
fi

python3 - "$RAW" "$INS" "$ROWS" > "$OUT/table.md" <<'PY'
import statistics as st, sys
raw, ins, rows_text = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [tuple((l.split() + ['-'])[:3]) for l in rows_text.strip().splitlines()]
t = {}   # (w,n,q) -> {round: {impl: (ns, sum)}}
for l in open(raw):
    r, impl, w, n, q, ns, s = l.rstrip('\n').split('\t')
    t.setdefault((w, n, q), {}).setdefault(r, {})[impl] = (float(ns), s)
ic = {}
for l in open(ins):
    impl, w, n, q, ipo, s = l.rstrip('\n').split('\t')
    ic[(w, n, q, impl)] = (float(ipo), s)
def num(x):
    return f"{x:,.1f}" if x < 100 else f"{x:,.0f}"
print("| workload | N | Q | kernel ns/op | maple ns/op | kernel/maple (median of rounds) | per-round ratios | kernel instr/op | maple instr/op | instr kernel/maple | checksums |")
print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |")
for key in rows:
    rounds = t.get(key, {})
    ks = [v['kernel'][0] for v in rounds.values() if 'kernel' in v]
    ms = [v['maple'][0] for v in rounds.values() if 'maple' in v]
    ratios = [v['kernel'][0] / v['maple'][0] for v in rounds.values() if 'kernel' in v and 'maple' in v]
    sums = {v[i][1] for v in rounds.values() for i in v}
    ki, mi = ic.get(key + ('kernel',)), ic.get(key + ('maple',))
    if ki: sums.add(ki[1])
    if mi: sums.add(mi[1])
    ok = 'agree' if len(sums) == 1 else ('DIFFER: ' + ' '.join(sorted(sums)) if sums else '-')
    cell = lambda xs: num(st.median(xs)) if xs else '-'
    print(f"| {key[0]} | {int(key[1]):,} | {'-' if key[2] == '-' else format(int(key[2]), ',')} "
          f"| {cell(ks)} | {cell(ms)} | {('%.2f' % st.median(ratios)) if ratios else '-'} "
          f"| {' '.join('%.2f' % x for x in ratios) or '-'} "
          f"| {num(ki[0]) if ki else '-'} | {num(mi[0]) if mi else '-'} "
          f"| {('%.2f' % (ki[0] / mi[0])) if ki and mi and mi[0] else '-'} | {ok} |")
PY
cat "$OUT/table.md"
say "raw results, lines and metadata in $OUT"
