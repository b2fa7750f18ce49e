//! What one repetition of a measurement returns ([`Rep`]), and the repetitions of
//! one measurement that share a setup ([`Session`]): the interface between the
//! workload code (`bodies.rs`, `mm.rs`, `rcu.rs`) and the measuring code.

use std::time::Duration;

/// The repetitions of one measurement on one setup: each call runs one (see
/// `Impl::session` in `registry.rs`).
pub type Session = Box<dyn FnMut() -> Rep>;

/// One repetition of one case.
#[derive(Debug, Clone, Copy)]
pub struct Rep {
    /// Time of the timed part.
    pub elapsed: Duration,
    /// The workload's checksum.
    pub checksum: u64,
    /// Node bytes of the structure the workload built (see `bodies::bytes_snapshot`),
    /// where the implementation can tell.
    pub node_bytes: Option<usize>,
    /// Number of entries the node bytes are divided by.
    pub entries: usize,
    /// `rcu_read_under_write`: what the reader did alone and what the writer did.
    pub shared: Option<SharedRead>,
}

/// One `rcu_read_under_write` repetition beyond its timed part (the reader under
/// the writer).
#[derive(Debug, Clone, Copy)]
pub struct SharedRead {
    /// The reader's ns per lookup in the segments of the repetition in which the
    /// writer was paused (interleaved with the timed ones, on the same tree).
    pub solo_ns: f64,
    /// The writer's ns per store while the reader's timed lookups ran.
    pub writer_ns: f64,
}

impl Rep {
    /// A repetition that measured time and a checksum only.
    pub fn timed(elapsed: Duration, checksum: u64) -> Rep {
        Rep {
            elapsed,
            checksum,
            node_bytes: None,
            entries: 0,
            shared: None,
        }
    }

    /// A repetition that also measured the node bytes of what it built
    /// (`bodies::bytes_snapshot`'s pair).
    pub fn with_nodes(
        elapsed: Duration,
        checksum: u64,
        (node_bytes, entries): (Option<usize>, usize),
    ) -> Rep {
        Rep {
            elapsed,
            checksum,
            node_bytes,
            entries,
            shared: None,
        }
    }
}
