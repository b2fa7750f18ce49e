//! Threads of one process racing for `mmap_lock`.
//!
//! strace's `-ttt` is the time a call entered, and a thread can be
//! preempted between its entry and taking `mmap_lock`, so two threads'
//! calls that entered close together may have been served in either order.
//! The replay applies calls in entry order and looks for a race only where
//! the model placed an `mmap` elsewhere than the kernel; the kernel's
//! results then show which order it served:
//!
//! - another thread's later non-fixed `mmap` got the place the model chose,
//!   or its later `munmap` (or `mremap` moving or shrinking a mapping) freed
//!   the place the kernel chose: that call went
//!   first ([`raced_with`]), with what its thread did before it and what
//!   a third thread freed for it ([`served_before`]);
//! - another thread's earlier `munmap` freed the place the model chose: the
//!   kernel may have served the `mmap` before it ([`unmap_served_later`]),
//!   and the replay places the `mmap` again with the unmapped VMAs stood in
//!   for ([`place_before_unmap`]), keeping that placement only if it is the
//!   kernel's.

use std::collections::{HashMap, HashSet};

use maple_mm::{AddressSpace, Errno, MapFlags, Prot};

use super::decode::{decode, Op};
use super::input::Capture;
use super::strace::{Micros, Ret};

/// How long after one thread's call entered another thread's call may still
/// have been served first.
pub(super) const RACE_WINDOW: Micros = 20_000;

/// The call of another thread of the same process that the kernel served
/// before `mmap` call `i`, if the trace shows such a race: a call that
/// entered after call `i` (within [`RACE_WINDOW`]) and either is a
/// non-fixed `mmap` the kernel put where the model placed call `i`
/// (`model..model + len`), entered before call `i`'s thread made its next
/// call (so call `i` may not have been done yet), or a `munmap` or
/// `mremap` that freed part of where the kernel put call `i` (`kernel..
/// kernel + len`) that is still mapped in the model (`taken(start, end)`
/// tells whether the model has memory in `start..end`, without call
/// `i`'s). The latter is evidence even after call `i`'s thread went on:
/// the kernel puts a non-fixed `mmap` only where nothing is, and strace
/// stamps a call's entry when it gets to it, on a busy machine up to a
/// millisecond or more after another thread's later call.
///
/// Calls in `done` were applied already (served before an earlier call)
/// and are passed over. When several threads' later `mmap`s took parts of
/// the place the model chose, the one served first is the one that took
/// its top page: a placement goes top-down, so the first call served got
/// the top of the free range, as call `i` would have.
pub(super) fn raced_with(
    cap: &Capture,
    task_tgid: &HashMap<u32, u32>,
    done: &HashSet<usize>,
    i: usize,
    (model, kernel): (u64, u64),
    len: u64,
    taken: &dyn Fn(u64, u64) -> bool,
) -> Option<usize> {
    let a = &cap.calls[i];
    let tgid_of = |t: u32| task_tgid.get(&t).copied().unwrap_or(t);
    let tgid = tgid_of(a.tid);
    let top = (model.saturating_add(len) - 1, 1);
    // Whether call `i`'s thread has made its next call.
    let mut went_on = false;
    // A later `mmap` that took part of the model's place, not its top page.
    let mut took_part = None;
    for (j, b) in cap.calls.iter().enumerate().skip(i + 1) {
        if b.time > a.time + RACE_WINDOW {
            break;
        }
        if b.tid == a.tid {
            went_on = true;
            continue;
        }
        let Ret::Val(at) = b.ret else { continue };
        if tgid_of(b.tid) != tgid || done.contains(&j) {
            continue;
        }
        match decode(b) {
            Ok(Some(Op::Mmap {
                flags, len: blen, ..
            })) => {
                let fixed = flags.intersects(MapFlags::FIXED | MapFlags::FIXED_NOREPLACE);
                if went_on || fixed || !overlap((at, blen), (model, len)) {
                    continue;
                }
                if overlap((at, blen), top) {
                    return Some(j);
                }
                took_part = took_part.or(Some(j));
            }
            Ok(Some(op)) if took_part.is_none() => {
                let freed = freed_by(&op, at).is_some_and(|(addr, flen)| {
                    let start = addr.max(kernel);
                    let end = addr.saturating_add(flen).min(kernel.saturating_add(len));
                    start < end && taken(start, end)
                });
                if freed {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    took_part
}

/// The range (start and length) a successful call that returned `ret`
/// freed: a `munmap`'s, the source of an `mremap` that moved, the tail an
/// `mremap` shrank off.
fn freed_by(op: &Op, ret: u64) -> Option<(u64, u64)> {
    match *op {
        Op::Munmap { addr, len } => Some((addr, len)),
        Op::Mremap { old, old_len, .. } if ret != old => Some((old, old_len)),
        Op::Mremap {
            old,
            old_len,
            new_len,
            ..
        } if new_len < old_len => Some((old.saturating_add(new_len), old_len - new_len)),
        _ => None,
    }
}

/// Whether two ranges, each a start and a length, share an index.
fn overlap((a, alen): (u64, u64), (b, blen): (u64, u64)) -> bool {
    a < b.saturating_add(blen) && b < a.saturating_add(alen)
}

/// The VMAs (start and end) that an earlier `munmap` of another thread freed
/// where the model placed `mmap` call `i` (`model..model + len`), when the
/// kernel may have served call `i` first: the `munmap` entered within
/// [`RACE_WINDOW`] before call `i`, and its thread made no call since (which
/// would show it done). `unmapped` holds, by call, the VMAs each `munmap`
/// removed from the model.
pub(super) fn unmap_served_later<'u>(
    cap: &Capture,
    task_tgid: &HashMap<u32, u32>,
    unmapped: &'u HashMap<usize, Vec<(u64, u64)>>,
    i: usize,
    model: u64,
    len: u64,
) -> Option<&'u [(u64, u64)]> {
    let a = &cap.calls[i];
    let tgid_of = |t: u32| task_tgid.get(&t).copied().unwrap_or(t);
    let tgid = tgid_of(a.tid);
    // Threads seen on the way back: their earlier calls were done.
    let mut seen = HashSet::new();
    for j in (0..i).rev() {
        let b = &cap.calls[j];
        if a.time > b.time + RACE_WINDOW {
            return None;
        }
        if b.tid == a.tid || tgid_of(b.tid) != tgid || !seen.insert(b.tid) {
            continue;
        }
        if let Some(freed) = unmapped.get(&j) {
            if freed
                .iter()
                .any(|&(s, e)| overlap((s, e - s), (model, len)))
            {
                return Some(freed);
            }
        }
    }
    None
}

/// Places an `mmap` (`map`) as if the VMAs `freed` were still there, for a
/// call the kernel may have served before the `munmap` that removed them
/// ([`unmap_served_later`]). The VMAs are stood in for by shared anonymous
/// `PROT_NONE` mappings (which merge with nothing), removed again
/// afterwards. Returns where `map` put the mapping, which stays there;
/// `None` (nothing mapped) when a stand-in could not be made (part of the
/// range was mapped again) or `map` failed.
pub(super) fn place_before_unmap(
    sp: &mut AddressSpace,
    freed: &[(u64, u64)],
    map: impl FnOnce(&mut AddressSpace) -> Result<u64, Errno>,
) -> Option<u64> {
    let stand_in =
        MapFlags::SHARED | MapFlags::ANONYMOUS | MapFlags::FIXED_NOREPLACE | MapFlags::NORESERVE;
    let mut made = Vec::new();
    for &(s, e) in freed {
        if sp.mmap(s, e - s, Prot::NONE, stand_in, None, 0).is_err() {
            break;
        }
        made.push((s, e));
    }
    let again = if made.len() == freed.len() {
        map(sp).ok()
    } else {
        None
    };
    for (s, e) in made {
        let _ = sp.munmap(s, e - s);
    }
    again
}

/// The most races one call is replayed through: calls of other threads
/// that the kernel served, one after another, before a call that entered
/// earlier (a thread preempted between its entry and `mmap_lock` while
/// another thread made eight `mmap`s, in one capture). Each race needs the
/// evidence [`raced_with`] asks for; the bound only ends the search.
pub(super) const MAX_RACES: usize = 64;

/// The calls to apply before call `i`, now that call `j` of another thread
/// is known to have been served first ([`raced_with`]): `j`, and before it
/// the memory calls its thread made after call `i` entered (a thread's
/// calls are served in its order, so those were served first too), with
/// each call of a third thread between call `i` and `j` that freed memory
/// the kernel gave one of those `mmap`s (it was served before that one).
/// In entry order. When one of `j`'s thread's calls is not a memory call
/// (a descriptor, `clone` or `execve`), only `j` goes first.
pub(super) fn served_before(
    cap: &Capture,
    task_tgid: &HashMap<u32, u32>,
    i: usize,
    j: usize,
    done: &HashSet<usize>,
) -> Vec<usize> {
    let tgid_of = |t: u32| task_tgid.get(&t).copied().unwrap_or(t);
    let (waiting, tid) = (cap.calls[i].tid, cap.calls[j].tid);
    let is_memory = |k: usize| matches!(decode(&cap.calls[k]), Ok(Some(_)));
    let mine: Vec<usize> = (i + 1..=j)
        .filter(|&k| cap.calls[k].tid == tid && !done.contains(&k))
        .collect();
    if !mine.iter().all(|&k| is_memory(k)) {
        return if done.contains(&j) {
            Vec::new()
        } else {
            vec![j]
        };
    }
    // Where the kernel put the non-fixed `mmap`s of `j`'s thread.
    let placed: Vec<(u64, u64)> = mine
        .iter()
        .filter_map(|&k| match (decode(&cap.calls[k]), &cap.calls[k].ret) {
            (Ok(Some(Op::Mmap { len, flags, .. })), Ret::Val(at))
                if !flags.intersects(MapFlags::FIXED | MapFlags::FIXED_NOREPLACE) =>
            {
                Some((*at, len))
            }
            _ => None,
        })
        .collect();
    let others = (i + 1..j).filter(|&k| {
        let c = &cap.calls[k];
        let freed = match (decode(c), &c.ret) {
            (Ok(Some(op)), Ret::Val(ret)) => freed_by(&op, *ret),
            _ => None,
        };
        c.tid != tid
            && c.tid != waiting
            && tgid_of(c.tid) == tgid_of(waiting)
            && !done.contains(&k)
            && freed.is_some_and(|f| placed.iter().any(|&p| overlap(f, p)))
    });
    let mut all: Vec<usize> = mine.into_iter().chain(others).collect();
    all.sort_unstable();
    all
}
