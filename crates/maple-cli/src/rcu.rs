//! The benchmark of the concurrent tree, `RcuMapleTree<u64>`, in the same
//! harness and line format as BENCHMARKS.md's workloads (5 repetitions in one
//! process, the median):
//!
//! * `rcu_read`: one reader thread runs `load`'s lookups (Q times
//!   `x = next() % 16N` from the reset stream, the sum of the values found) on a
//!   regular tree filled by `seq_store(N)`, untimed. The tree is filled as a plain
//!   `MapleTree` and moved into RCU mode (O(1)), so its nodes are laid out as
//!   `load impl=maple`'s are and the difference is the cost of reading in RCU mode.
//!   Checksum: `load`'s at the same (N, Q).
//! * `rcu_read_under_write`: the same reader on a fresh `seq_store(N)` tree, in
//!   2 × [`SEGMENTS`] segments that alternate between a writer thread paused and
//!   one storing without pause: `overwrite`'s stores (`a = next() % 16N`,
//!   `len = 1 + next() % 64`, value `q + 1`) from its own stream, which it resets
//!   after N stores (one `overwrite` pass with Q = N) and starts again. Each half
//!   makes Q lookups, continuing one `load` stream; the timed part is the half
//!   under the writer, and the paused half gives the reader's solo time *in the
//!   same repetition, on the same tree*: the machine's drift (large on shared
//!   VMs) cancels in their ratio, and so does the tree's change of shape under
//!   the writer. The sum depends on timing, so there is no checksum
//!   (`checksum=-`); instead every value the reader gets must be one that
//!   `seq_store` or a store of the writer could have put there, `1 ..= N` (both
//!   number their values from 1 and stop at N), or the run fails.
//! * `rcu_write`: `overwrite` (checksum verified) through the RCU writer, no
//!   reader; its plain-tree side is `impl=maple` (`bodies.rs`).
//!
//! `impl=maple-rcu` takes one guard per operation (a `read()` per lookup, a
//! `write()` per store: what a caller that does one thing at a time pays);
//! `impl=maple-rcu-b64` one guard per 64 lookups (or stores). The writer of
//! `rcu_read_under_write` takes one `write()` per store in both. Both keep
//! each value in a box of its own (`Boxed`, the default storage);
//! `impl=maple-rcu-inline` is `maple-rcu` with the values inside the nodes
//! (`Inline`, for values free of interior mutability, as `u64` is).
//!
//! Threads: at most two run, the reader pinned to the second CPU the process
//! may run on and the writer to the first (best effort, `sched_setaffinity`;
//! never outside the process's own affinity, so `taskset` is obeyed); the
//! main thread only waits for them. `rcu_read_under_write` fails at once,
//! saying why, where the process may use only one CPU.
//!
//! The RCU tables are in `report/rcu.rs`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use maple_tree::{Boxed, Inline, MapleTree, RcuMapleTree, Storage};

use crate::rep::{Rep, Session, SharedRead};
use crate::rng::SplitMix64;
use crate::workloads::{Case, Workload};

/// Operations per guard of `impl=maple-rcu-b64`.
pub const BATCH: usize = 64;

/// The CPU the reader thread is pinned to (its index among the CPUs the
/// process may run on).
pub const READER_CPU: usize = 1;
/// The CPU the writer thread is pinned to (likewise).
pub const WRITER_CPU: usize = 0;

/// The domain of `maple-rcu`, `maple-rcu-b64` and `maple-rcu-inline`.
pub fn domain(w: Workload) -> bool {
    matches!(
        w,
        Workload::RcuRead | Workload::RcuReadUnderWrite | Workload::RcuWrite
    )
}

/// The CPUs the calling thread may run on (its affinity mask, which a
/// thread inherits from the one that spawned it: `taskset` narrows it for
/// the whole process), in order.
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `set` is a plain bit mask that sched_getaffinity(0, ..)
        // fills with the calling thread's affinity; CPU_ISSET only reads it,
        // below CPU_SETSIZE.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
                return (0..libc::CPU_SETSIZE as usize)
                    .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
                    .collect();
            }
        }
    }
    (0..thread::available_parallelism().map_or(1, |n| n.get())).collect()
}

/// Pins the calling thread to the `cpu`-th of the CPUs it may run on
/// (modulo their number), never to one outside them; whether it worked.
pub fn pin_current_thread(cpu: usize) -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let allowed = allowed_cpus();
        let Some(&target) = allowed.get(cpu % allowed.len().max(1)) else {
            return false;
        };
        // SAFETY: `set` is a plain bit mask initialised by CPU_ZERO / CPU_SET, and
        // sched_setaffinity(0, ..) only changes the calling thread's affinity.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_ZERO(&mut set);
            libc::CPU_SET(target, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = cpu;
        false
    }
}

/// How the benchmarked tree holds its `u64`s: a storage of `RcuMapleTree`,
/// with the constructor that enters RCU mode with it.
pub trait ValueStorage: Storage<u64> + Sized + 'static {
    fn rcu_tree(tree: MapleTree<u64>) -> RcuMapleTree<u64, Self>;
}

impl ValueStorage for Boxed {
    fn rcu_tree(tree: MapleTree<u64>) -> RcuMapleTree<u64> {
        RcuMapleTree::from(tree)
    }
}

impl ValueStorage for Inline {
    fn rcu_tree(tree: MapleTree<u64>) -> RcuMapleTree<u64, Inline> {
        RcuMapleTree::from_inline(tree)
    }
}

/// `seq_store(n)` into a regular `MapleTree`, moved into RCU mode.
fn seq_tree<S: ValueStorage>(n: u64) -> RcuMapleTree<u64, S> {
    let mut t = MapleTree::new();
    for i in 0..n {
        t.insert(16 * i..=16 * i + 9, i + 1);
    }
    S::rcu_tree(t)
}

/// What the reader did.
struct Read {
    elapsed: Duration,
    sum: u64,
    /// Values outside `1..=max_value`, and the last one seen (index, value).
    bad: u64,
    last_bad: (u64, u64),
}

/// Adds what another run of the reader did.
impl std::ops::AddAssign for Read {
    fn add_assign(&mut self, r: Read) {
        self.elapsed += r.elapsed;
        self.sum = self.sum.wrapping_add(r.sum);
        self.bad += r.bad;
        if r.bad > 0 {
            self.last_bad = r.last_bad;
        }
    }
}

/// `q` of `load`'s lookups (continuing `rng`) through `read()` guards, `B`
/// lookups per guard.
fn reader<const B: usize, S: ValueStorage>(
    tree: &RcuMapleTree<u64, S>,
    rng: &mut SplitMix64,
    n: u64,
    q: u64,
    max_value: u64,
) -> Read {
    let span = 16 * n;
    let (mut sum, mut bad, mut last_bad) = (0u64, 0u64, (0, 0));
    let start = Instant::now();
    let mut left = q;
    while left > 0 {
        let k = left.min(B as u64);
        let guard = tree.read();
        for _ in 0..k {
            let x = rng.next_u64() % span;
            if let Some(&v) = guard.get(x) {
                sum = sum.wrapping_add(v);
                if v.wrapping_sub(1) >= max_value {
                    bad += 1;
                    last_bad = (x, v);
                }
            }
        }
        drop(guard);
        left -= k;
    }
    Read {
        elapsed: start.elapsed(),
        sum,
        bad,
        last_bad,
    }
}

/// Segments per half of an `rcu_read_under_write` repetition.
pub const SEGMENTS: u64 = 10;

/// How the reader of `rcu_read_under_write` steers the writer.
struct Steering {
    /// The segment the reader is about to run: the writer stores in odd ones and
    /// pauses in even ones; [`Steering::STOP`] ends it.
    phase: AtomicU64,
    /// The last phase the writer has acted on: in an odd one it has stored at
    /// least once, in an even one it has finished its last store.
    acked: AtomicU64,
    /// The writer's stores so far.
    stores: AtomicU64,
}

impl Steering {
    const STOP: u64 = u64::MAX;
    const NOT_STARTED: u64 = u64::MAX - 1;
    /// `acked` once the writer has returned or panicked.
    const GONE: u64 = u64::MAX - 2;

    fn new() -> Steering {
        Steering {
            phase: AtomicU64::new(0),
            acked: AtomicU64::new(Self::NOT_STARTED),
            stores: AtomicU64::new(0),
        }
    }

    /// Moves the writer (thread `writer`) to `phase` and waits until it is there.
    fn enter(&self, phase: u64, writer: &Thread) {
        self.phase.store(phase, Ordering::Release);
        writer.unpark();
        loop {
            match self.acked.load(Ordering::Acquire) {
                a if a == phase => return,
                // Without this, a panic in the writer would hang the reader here.
                Self::GONE => panic!("rcu_read_under_write: the writer thread stopped"),
                _ => std::hint::spin_loop(),
            }
        }
    }
}

/// Tells the reader, however the writer's function ends, that it has.
struct WriterGone<'a>(&'a Steering);

impl Drop for WriterGone<'_> {
    fn drop(&mut self) {
        self.0.acked.store(Steering::GONE, Ordering::Release);
    }
}

/// `overwrite`'s stores, one `write()` per store, in passes of `n` stores (the
/// stream reset at each), in the phases `steer` says, until it says stop.
/// Returns the number of stores.
fn writer<S: ValueStorage>(tree: &RcuMapleTree<u64, S>, n: u64, steer: &Steering) -> u64 {
    let _gone = WriterGone(steer);
    let span = 16 * n;
    let mut rng = SplitMix64::new();
    let (mut k, mut count) = (0u64, 0u64);
    loop {
        let phase = steer.phase.load(Ordering::Acquire);
        if phase == Steering::STOP {
            return count;
        }
        if phase % 2 == 0 {
            // Paused: asleep, not spinning, so that the reader runs as if alone
            // (a spinning thread may share the host core with the reader's vCPU).
            if steer.acked.load(Ordering::Relaxed) != phase {
                steer.acked.store(phase, Ordering::Release);
            }
            thread::park();
            continue;
        }
        let a = rng.next_u64() % span;
        let len = 1 + rng.next_u64() % 64;
        tree.write().insert(a..=a + len - 1, k + 1);
        k += 1;
        count += 1;
        steer.stores.store(count, Ordering::Relaxed);
        steer.acked.store(phase, Ordering::Release);
        if k == n {
            k = 0;
            rng = SplitMix64::new();
        }
    }
}

fn fail_on_bad(what: &str, r: &Read, max_value: u64) {
    if r.bad > 0 {
        panic!(
            "{what}: the reader got {} value(s) outside 1..={max_value}, e.g. {} at index {}",
            r.bad, r.last_bad.1, r.last_bad.0
        );
    }
}

fn join<T>(h: thread::ScopedJoinHandle<'_, T>, who: &str) -> T {
    match h.join() {
        Ok(t) => t,
        Err(e) => {
            let msg = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            panic!("the {who} thread panicked: {msg}")
        }
    }
}

/// One `rcu_read` repetition on `tree`: the reader alone on its thread.
fn read_solo<const B: usize, S: ValueStorage>(tree: &RcuMapleTree<u64, S>, n: u64, q: u64) -> Rep {
    let r = thread::scope(|s| {
        let h = s.spawn(|| {
            pin_current_thread(READER_CPU);
            // Through `timed_part` for `--count instructions` (the reader
            // times itself).
            crate::timer::timed_part(|| reader::<B, S>(tree, &mut SplitMix64::new(), n, q, n)).1
        });
        join(h, "reader")
    });
    fail_on_bad("rcu_read", &r, n);
    Rep::timed(r.elapsed, r.sum)
}

/// The reader's side of `rcu_read_under_write`: the segments, alternately with
/// the writer paused and storing. Returns (paused, storing, stores while storing).
fn steered_reader<const B: usize, S: ValueStorage>(
    tree: &RcuMapleTree<u64, S>,
    steer: &Steering,
    writer: &Thread,
    n: u64,
    q: u64,
) -> (Read, Read, u64) {
    let mut rng = SplitMix64::new(); // reset; one stream across the segments
    let empty = || Read {
        elapsed: Duration::ZERO,
        sum: 0,
        bad: 0,
        last_bad: (0, 0),
    };
    let (mut paused, mut storing, mut stores) = (empty(), empty(), 0);
    for i in 0..SEGMENTS {
        // Each half makes q lookups in all: segment i takes its share of them.
        let share = q * (i + 1) / SEGMENTS - q * i / SEGMENTS;
        steer.enter(2 * i, writer);
        let s0 = steer.stores.load(Ordering::Relaxed);
        paused += reader::<B, S>(tree, &mut rng, n, share, n);
        let s1 = steer.stores.load(Ordering::Relaxed);
        assert_eq!(
            s0, s1,
            "rcu_read_under_write: the writer stored while paused"
        );
        steer.enter(2 * i + 1, writer);
        let s0 = steer.stores.load(Ordering::Relaxed);
        storing += reader::<B, S>(tree, &mut rng, n, share, n);
        stores += steer.stores.load(Ordering::Relaxed) - s0;
    }
    (paused, storing, stores)
}

/// One `rcu_read_under_write` repetition: a fresh tree, the writer thread, and
/// the reader steering it through the segments.
fn read_under_write<const B: usize, S: ValueStorage>(n: u64, q: u64) -> Rep {
    let cpus = allowed_cpus().len();
    assert!(
        cpus >= 2,
        "rcu_read_under_write needs two CPUs, one for the reader and one for the writer; \
         this process may run on {cpus} (started under `taskset -c` with one CPU?)"
    );
    let tree = seq_tree::<S>(n);
    let steer = Steering::new();
    let (paused, storing, during) = thread::scope(|s| {
        let w = s.spawn(|| {
            pin_current_thread(WRITER_CPU);
            writer(&tree, n, &steer)
        });
        let writer_thread = w.thread().clone();
        let (tree, steer_ref, wt) = (&tree, &steer, writer_thread.clone());
        let r = s.spawn(move || {
            pin_current_thread(READER_CPU);
            steered_reader::<B, S>(tree, steer_ref, &wt, n, q)
        });
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| join(r, "reader")));
        steer.phase.store(Steering::STOP, Ordering::Release);
        writer_thread.unpark();
        let written = join(w, "writer");
        match r {
            Ok(r) => {
                assert!(written >= r.2);
                r
            }
            Err(e) => std::panic::resume_unwind(e),
        }
    });
    fail_on_bad("rcu_read_under_write (writer paused)", &paused, n);
    fail_on_bad("rcu_read_under_write", &storing, n);
    if during == 0 {
        panic!("rcu_read_under_write: the writer stored nothing while the reader ran");
    }
    Rep {
        shared: Some(SharedRead {
            solo_ns: paused.elapsed.as_nanos() as f64 / q as f64,
            writer_ns: storing.elapsed.as_nanos() as f64 / during as f64,
        }),
        ..Rep::timed(storing.elapsed, storing.sum)
    }
}

/// One `rcu_write` repetition: `seq_store(N)` untimed, then `overwrite`'s Q stores
/// through `write()` guards, `B` stores per guard; checksum: `checksum(tree)`.
fn write<const B: usize, S: ValueStorage>(n: u64, q: u64) -> Rep {
    let tree = seq_tree::<S>(n);
    let mut rng = SplitMix64::new(); // reset
    let span = 16 * n;
    let (elapsed, ()) = crate::timer::timed_part(|| {
        let mut k = 0u64;
        while k < q {
            let end = q.min(k + B as u64);
            let mut w = tree.write();
            while k < end {
                let a = rng.next_u64() % span;
                let len = 1 + rng.next_u64() % 64;
                w.insert(a..=a + len - 1, k + 1);
                k += 1;
            }
        }
    });
    let plain = tree.into_inner();
    let sum = plain
        .iter()
        .fold(0u64, |s, (r, &v)| s.wrapping_add(r.start() ^ r.end() ^ v));
    Rep::timed(elapsed, sum)
}

/// The repetitions of `case` for `impl=maple-rcu` (`B` = 1, `S` = `Boxed`),
/// `maple-rcu-b64` (`B` = 64) or `maple-rcu-inline` (`S` = `Inline`).
///
/// # Panics
/// If `case` is not an RCU workload.
pub fn session<const B: usize, S: ValueStorage>(case: &Case) -> Session {
    let (n, q) = (case.n, case.q.unwrap_or(0));
    match case.workload {
        Workload::RcuRead => {
            let tree = seq_tree::<S>(n);
            Box::new(move || read_solo::<B, S>(&tree, n, q))
        }
        Workload::RcuReadUnderWrite => Box::new(move || read_under_write::<B, S>(n, q)),
        Workload::RcuWrite => Box::new(move || write::<B, S>(n, q)),
        w => panic!("{w} is not an RCU workload"),
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::expected_checksum;

    fn case(workload: Workload, n: u64, q: u64) -> Case {
        Case {
            workload,
            n,
            q: Some(q),
        }
    }

    #[test]
    fn rcu_read_and_rcu_write_reproduce_load_and_overwrite() {
        for (n, q) in [(1, 100), (21, 3000), (700, 3000)] {
            for w in [Workload::RcuRead, Workload::RcuWrite] {
                let c = case(w, n, q);
                let want = expected_checksum(&c);
                let mut one = session::<1, Boxed>(&c);
                let mut batched = session::<BATCH, Boxed>(&c);
                let mut inline = session::<1, Inline>(&c);
                assert_eq!(one().checksum, want, "{c:?}");
                assert_eq!(one().checksum, want, "{c:?}, second repetition");
                assert_eq!(batched().checksum, want, "{c:?}, batched");
                assert_eq!(inline().checksum, want, "{c:?}, inline");
            }
        }
    }

    #[test]
    fn rcu_read_under_write_sees_only_plausible_values() {
        let c = case(Workload::RcuReadUnderWrite, 500, 100_000);
        for mut s in [
            session::<1, Boxed>(&c),
            session::<BATCH, Boxed>(&c),
            session::<1, Inline>(&c),
        ] {
            let r = s();
            let sh = r
                .shared
                .expect("the writer's and the paused reader's numbers");
            assert!(sh.writer_ns > 0.0 && sh.solo_ns > 0.0);
        }
    }

    #[test]
    #[should_panic(expected = "the writer thread stopped")]
    fn a_writer_that_dies_fails_the_reader_instead_of_hanging() {
        let steer = Steering::new();
        thread::scope(|s| {
            let w = s.spawn(|| {
                let _gone = WriterGone(&steer);
                panic!("the writer died");
            });
            let writer_thread = w.thread().clone();
            steer.enter(1, &writer_thread);
        });
    }

    #[test]
    #[should_panic(expected = "outside 1..=")]
    fn an_implausible_value_fails_the_run() {
        let tree = seq_tree::<Boxed>(10);
        tree.write().insert(0..=9, 11); // 11 > N: no store of the workload makes it
        read_solo::<1, Boxed>(&tree, 10, 1000);
    }
}
