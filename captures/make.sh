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

# Taken later as programs the replay had not been developed against; their
# commands use fixed paths under /tmp/mmx (the C sources do too).
W=/tmp/mmx; mkdir -p $W/work $W/j $W/repo
gcc -O1 -o $W/work/shm_mremap src/shared_mremap_dlopen.c -ldl
gcc -O1 -o $W/work/misc src/memfd_shm_mlock.c
gcc -O1 -o $W/work/shm_mlock src/shm_mlock.c
seq 1 400000 | shuf --random-source=/dev/zero > $W/big.txt
(cd $W/repo && rm -rf .git ./* && git init -q . && for i in $(seq 1 30); do echo "line $i" > f$i.txt; done)
cat > $W/j/H.java <<'JAVA'
public class H { public static void main(String[] a) throws Exception { Thread[] t=new Thread[3]; for(int i=0;i<3;i++){t[i]=new Thread(()->{long s=0; java.util.List<int[]> l=new java.util.ArrayList<>(); for(int k=0;k<20000;k++){l.add(new int[64]); s+=k;} System.out.println(s);}); t[i].start();} for(Thread x:t)x.join(); } }
JAVA
cap shared_mremap_dlopen $W/work/shm_mremap
cap memfd_shm_mlock $W/work/misc
cap shm_mlock $W/work/shm_mlock
cap git_commit    sh -c 'cd /tmp/mmx/repo && git add -A && git -c user.name=a -c user.email=a@b commit -q -m x && git log --oneline | head -1 && git gc -q'
cap tar_xz        sh -c 'tar -C /usr/include -cf - linux | xz -1 -T2 > /tmp/mmx/l.tar.xz; tar -C /usr/include -czf /tmp/mmx/l.tgz linux; ls -l /tmp/mmx/l.tar.xz'
cap py_multiprocessing python3 -c 'import multiprocessing as mp, mmap, os
def f(x): return x*x
if __name__=="__main__":
    m=mmap.mmap(-1, 1<<20); m[0:5]=b"hello"; m.resize(1<<21) if hasattr(m,"resize") else None
    with mp.get_context("fork").Pool(2) as p: print(sum(p.map(f, range(100))))
    fd=os.open("/tmp/mmx/big.txt", os.O_RDONLY); mm=mmap.mmap(fd,0,prot=mmap.PROT_READ); print(mm[:5]); mm.close()'
cap node_workers  node -e 'const {Worker}=require("worker_threads"); let n=0; for(let i=0;i<2;i++){const w=new Worker("const {parentPort}=require(\"worker_threads\"); let a=[]; for(let i=0;i<2e5;i++)a.push({i}); parentPort.postMessage(a.length)",{eval:true}); w.on("message",m=>{n+=m; if(++i)console.log(m)});}'
cap javac_threads sh -c 'cd /tmp/mmx/j && javac H.java && java -Xmx128m -cp . H'
cap sqlite3       sqlite3 /tmp/mmx/t.db 'create table if not exists t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<20000) insert into t select x, hex(randomblob(20)) from c; select count(*) from t; create index if not exists i on t(b); pragma integrity_check;'
echo 'fn main(){ let v: Vec<u64> = (0..1000).collect(); println!("{}", v.iter().sum::<u64>()); }' > $W/h.rs
cap rustc_hello   sh -c 'cd /tmp/mmx && rustc -O -o /tmp/mmx/hr h.rs && ./hr'
for d in rustc_hello javac_threads node_workers git_commit memfd_shm_mlock shared_mremap_dlopen py_multiprocessing tar_xz sqlite3; do
    find $d -type f -size +16k \( -name 'trace.*' -o -name 'maps.*' -o -name 'vmflags.*' \) -exec gzip -9 {} \;
done
rm -rf "$BIN"
du -sh .

# Taken last, among 11 programs the replay had never seen (the others are
# not committed; README.md gives the figures of all 11).
cap gdb_batch     gdb -batch -ex 'info functions main' /bin/true
cap java_parallel java -XX:+UseParallelGC -Xmx512m -XX:ParallelGCThreads=3 -version
cap node_buffers  node -e 'const a=[];for(let i=0;i<40;i++)a.push(Buffer.alloc(1<<20,i));const t=new Float64Array(4e6);t.fill(1);console.log(a.length, t.length)'

# Taken after a check on programs and settings the replay had never seen:
# MAP_32BIT, and programs exec'd under an unlimited stack rlimit and in
# the legacy layout.
gcc -O1 -o $W/work/map_32bit src/map_32bit.c
cap map_32bit     $W/work/map_32bit
cap ls_unlimited_stack sh -c 'ulimit -s unlimited && exec ls /usr'
cap ls_legacy_layout setarch x86_64 -L -R ls /usr
