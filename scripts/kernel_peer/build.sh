#!/usr/bin/env bash
# Build the kernel peer: the Linux kernel's own maple tree (lib/maple_tree.c of
# Debian's linux-source-6.12), compiled in user space with the kernel's
# code-generation flags, driven by our driver.c.
#
# The kernel source is fetched by Debian's package client and extracted OUTSIDE
# this repository (default /work/kpeer; override with KPEER_WORK=DIR or
# --work DIR). Nothing of it is copied into the repository.
#
# Idempotent: the package is installed and the source extracted only when
# missing; the binary is rebuilt only when an input changed (--force: always).
#
# Output: $KPEER_WORK/bin/kernel_peer (the kernel's flags; kernel_peer.flags
# lists them) and $KPEER_WORK/bin/kernel_peer-core (only the flags that change
# what C means; see below). Prints the path of kernel_peer on stdout.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="${KPEER_WORK:-/work/kpeer}"
FORCE=0
KVER=6.12
CC="${CC:-gcc}"

while [ $# -gt 0 ]; do
    case "$1" in
        --work) WORK="$2"; shift 2 ;;
        --force) FORCE=1; shift ;;
        -h|--help)
            sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
            echo "usage: $0 [--work DIR] [--force]"
            exit 0 ;;
        *) echo "build.sh: unknown argument $1" >&2; exit 1 ;;
    esac
done

die() { echo "build.sh: error: $*" >&2; exit 1; }
say() { echo "build.sh: $*" >&2; }

command -v "$CC" >/dev/null || die "no C compiler '$CC' (apt-get install -y gcc)"
command -v tar >/dev/null || die "tar is missing"
command -v xz >/dev/null || die "xz is missing (apt-get install -y xz-utils)"

TARBALL="/usr/src/linux-source-$KVER.tar.xz"
PKG="linux-source-$KVER"

# 1. The kernel source, through Debian's package client only.
if [ ! -f "$TARBALL" ]; then
    command -v apt-get >/dev/null || die "$TARBALL is missing and there is no apt-get to install $PKG"
    [ "$(id -u)" = 0 ] || die "$TARBALL is missing; install it as root: apt-get update && apt-get install -y $PKG"
    say "installing $PKG with apt-get"
    mkdir -p "$WORK"
    if [ ! -f "$WORK/.apt-updated" ]; then
        nice apt-get update -q >&2 || die "apt-get update failed"
        touch "$WORK/.apt-updated"
    fi
    DEBIAN_FRONTEND=noninteractive nice apt-get install -y -q "$PKG" >&2 \
        || die "apt-get install $PKG failed (is Debian's package archive reachable?)"
    [ -f "$TARBALL" ] || die "$PKG is installed but $TARBALL is not there"
fi
PKGVER="$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null || echo unknown)"

# 2. Extract only what the build uses: the tree, the kernel headers it
#    includes, and the user-space test harness's headers (tools/).
SRC="$WORK/linux-source-$KVER"
STAMP="$WORK/.extracted-$PKGVER"
if [ ! -f "$STAMP" ] || [ ! -f "$SRC/lib/maple_tree.c" ]; then
    say "extracting lib/maple_tree.c, include/, tools/{include,lib,arch/x86/include,testing/shared,testing/radix-tree} from $TARBALL ($PKGVER) into $WORK"
    mkdir -p "$WORK"
    rm -rf "$SRC" "$WORK"/.extracted-*
    nice tar -xJf "$TARBALL" -C "$WORK" --wildcards \
        "linux-source-$KVER/lib/maple_tree.c" \
        "linux-source-$KVER/include/*" \
        "linux-source-$KVER/tools/include/*" \
        "linux-source-$KVER/tools/lib/*" \
        "linux-source-$KVER/tools/arch/x86/include/*" \
        "linux-source-$KVER/tools/testing/shared/*" \
        "linux-source-$KVER/tools/testing/radix-tree/*" \
        || die "extracting from $TARBALL failed"
    [ -f "$SRC/lib/maple_tree.c" ] || die "lib/maple_tree.c not found in $TARBALL"
    touch "$STAMP"
fi
grep -q '^int mas_expected_entries' "$SRC/lib/maple_tree.c" \
    || die "this lib/maple_tree.c has no mas_expected_entries (driver.c's rebuild uses it)"
grep -q '^int __mt_dup' "$SRC/lib/maple_tree.c" \
    || die "this lib/maple_tree.c has no __mt_dup"

# 3. The generated headers the harness expects (tools/testing/shared/shared.mk
#    makes the same three with SHIFT and LONG_BIT; values for x86-64).
OUT="$WORK/build"
mkdir -p "$OUT/generated" "$WORK/bin"
echo '#define CONFIG_64BIT 1' > "$OUT/generated/bit-length.h.new"
echo '#define XA_CHUNK_SHIFT 6' > "$OUT/generated/map-shift.h.new"
cp "$SRC/tools/testing/shared/autoconf.h" "$OUT/generated/autoconf.h.new"
for f in bit-length.h map-shift.h autoconf.h; do
    if cmp -s "$OUT/generated/$f.new" "$OUT/generated/$f"; then
        rm "$OUT/generated/$f.new"
    else
        mv "$OUT/generated/$f.new" "$OUT/generated/$f"
    fi
done

# Our shim directory comes first: it replaces the harness's RCU (liburcu) and
# lock (pthread mutex) headers with no-ops. Then the harness, then the kernel.
INCLUDES=(
    -I"$HERE/shim"
    -I"$SRC/tools/testing/shared"
    -I"$OUT"
    -I"$SRC/tools/testing/radix-tree"
    -I"$SRC/tools/include"
    -I"$SRC"
)

cc_has() { echo 'int x;' | "$CC" -Werror "$@" -x c -c -o /dev/null - 2>/dev/null; }

# The kernel's code-generation flags (top-level Makefile and arch/x86/Makefile
# of 6.12, with Debian's amd64 config: STACKPROTECTOR_STRONG, INIT_STACK_ALL_ZERO,
# X86_KERNEL_IBT, MITIGATION_SLS, UNWINDER_ORC, FUNCTION_ALIGNMENT=16) that can
# be used in user space. Left out: -mcmodel=kernel (user space needs the small
# model), -mindirect-branch=thunk-extern / -mfunction-return=thunk-extern
# (retpolines and return thunks are patched by the running kernel per CPU),
# -mfentry / -fpatchable-function-entry (ftrace and call padding: nops),
# -ffreestanding / -nostdinc (32-bit only / kernel headers).
KFLAGS=(
    -std=gnu11 -O2
    -fno-strict-aliasing -fno-delete-null-pointer-checks -fno-strict-overflow
    -fno-common -fno-PIE -funsigned-char -fshort-wchar
    -fno-stack-check -fconserve-stack -fno-stack-clash-protection
    -fstack-protector-strong -ftrivial-auto-var-init=zero
    -mno-sse -mno-mmx -mno-sse2 -mno-3dnow -mno-avx -mno-80387 -mno-fp-ret-in-387
    -mno-red-zone -mskip-rax-setup -mpreferred-stack-boundary=3 -mtune=generic
    -falign-jumps=1 -falign-loops=1 -falign-functions=16
    -fno-asynchronous-unwind-tables -fomit-frame-pointer
    -fcf-protection=branch -fno-jump-tables -mharden-sls=all
)
for opt in -fno-allow-store-data-races -fstrict-flex-arrays=3 -fmin-function-alignment=16; do
    if cc_has "$opt"; then KFLAGS+=("$opt"); fi
done
KFLAGS+=(-Wall -Wno-sign-compare -Wno-unused-function -Wno-unused-variable
         -Wno-unused-but-set-variable -Wno-missing-braces)

# The driver: plain -O2 user-space code (it needs floating point for its
# timing) with the aliasing/null-check semantics the kernel's inline helpers
# are written for. Not PIE, like the kernel objects.
DFLAGS=(-std=gnu11 -O2 -fno-strict-aliasing -fno-delete-null-pointer-checks
        -fno-strict-overflow -fno-PIE -Wall -Wno-sign-compare
        -Wno-unused-function -Wno-missing-braces)

# A second binary, kernel_peer-core, drops the hardening and x86-kernel-only
# flags and keeps only the flags that change what C means
# (-fno-strict-aliasing -fno-delete-null-pointer-checks -fno-strict-overflow
# -fno-common): it tells how much of the kernel's cost is its hardening
# (stack protector, zeroed stack variables, endbr64, no SSE) rather than the
# tree itself.
CFLAGS_CORE=(-std=gnu11 -O2 -fno-strict-aliasing -fno-delete-null-pointer-checks
             -fno-strict-overflow -fno-common -fno-PIE
             -Wall -Wno-sign-compare -Wno-unused-function -Wno-unused-variable
             -Wno-unused-but-set-variable -Wno-missing-braces)

INPUTS=("$HERE/driver.c" "$HERE/kernel_tu.c" "$HERE/kcache.c" "$HERE"/shim/linux/*.h
        "$SRC/lib/maple_tree.c" "$SRC/include/linux/maple_tree.h" "$0")

# build_variant NAME KERNEL-FLAGS...
build_variant() {
    local name="$1"; shift
    local kflags=("$@")
    local bin="$WORK/bin/$name" flagfile="$WORK/bin/$name.flags" obj="$OUT/$name"
    mkdir -p "$obj"
    {
        echo "kernel: $PKG $PKGVER ($SRC/lib/maple_tree.c)"
        echo "compiler: $("$CC" --version | head -1)"
        echo "kernel flags (kernel_tu.c, kcache.c): ${kflags[*]}"
        echo "driver flags (driver.c): ${DFLAGS[*]}"
        echo "link: -no-pie"
    } > "$flagfile.new"
    local stale=$FORCE f
    [ -x "$bin" ] || stale=1
    cmp -s "$flagfile.new" "$flagfile" || stale=1
    if [ "$stale" = 0 ]; then
        for f in "${INPUTS[@]}"; do
            if [ "$f" -nt "$bin" ]; then stale=1; break; fi
        done
    fi
    if [ "$stale" = 0 ]; then
        rm -f "$flagfile.new"
        say "up to date: $bin"
        return 0
    fi
    say "compiling $name (nice) into $obj"
    nice "$CC" -c "${kflags[@]}" "${INCLUDES[@]}" "$HERE/kernel_tu.c" -o "$obj/kernel_tu.o" \
        || die "compiling lib/maple_tree.c (kernel_tu.c) failed"
    nice "$CC" -c "${kflags[@]}" "${INCLUDES[@]}" "$HERE/kcache.c" -o "$obj/kcache.o" \
        || die "compiling kcache.c failed"
    nice "$CC" -c "${DFLAGS[@]}" "${INCLUDES[@]}" "$HERE/driver.c" -o "$obj/driver.o" \
        || die "compiling driver.c failed"
    nice "$CC" -no-pie -o "$bin.tmp" "$obj/driver.o" "$obj/kernel_tu.o" "$obj/kcache.o" \
        || die "linking failed"
    mv "$bin.tmp" "$bin"
    mv "$flagfile.new" "$flagfile"
    say "built $bin"
    sed 's/^/build.sh:   /' "$flagfile" >&2
}

build_variant kernel_peer "${KFLAGS[@]}"
build_variant kernel_peer-core "${CFLAGS_CORE[@]}"
echo "$WORK/bin/kernel_peer"
