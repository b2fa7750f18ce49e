//! The timed part of a repetition, as one function that both the clock and
//! callgrind can see.
//!
//! Every workload body runs its timed part through [`timed_part`]. It is never
//! inlined and keeps its name, so `valgrind --tool=callgrind
//! --collect-atstart=no --toggle-collect='*timed_part*'` counts exactly the
//! instructions of the timed parts (setup and checksums excluded): that is how
//! `maple bench --count instructions` works on machines (such as most VMs)
//! whose kernel offers no hardware counters to `perf_event_open`.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// The pattern callgrind's `--toggle-collect` is given.
pub const TOGGLE_PATTERN: &str = "*timed_part*";

/// Runs `f`, returning its wall-clock time and its result.
#[inline(never)]
pub fn timed_part<R>(f: impl FnOnce() -> R) -> (Duration, R) {
    let start = Instant::now();
    let r = black_box(f());
    (start.elapsed(), r)
}
