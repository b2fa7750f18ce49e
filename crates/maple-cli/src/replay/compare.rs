//! Comparing the model's layout with the kernel's at a snapshot: pages
//! (permissions, backing, offset), VMA boundaries, and `VmFlags`.

use std::collections::HashSet;

use maple_mm::procmaps::{vmflags_words, MapsKind, MapsLine, VmFlagsLine};

/// How one snapshot compares.
#[derive(Debug, Clone, Default)]
pub struct Diff {
    /// Pages mapped in either layout.
    pub pages: u64,
    /// Pages mapped in one only, or with other permissions, backing or offset.
    pub pages_differ: u64,
    /// VMA ranges in one layout and not in the other.
    pub boundary_diffs: usize,
    /// VMAs with the same range in both whose `VmFlags` differ.
    pub flag_diffs: usize,
    /// The first differing lines, side by side: (kernel, model).
    pub examples: Vec<(String, String)>,
    /// The first flag differences: `range: kernel words | model words`.
    pub flag_examples: Vec<String>,
}

/// The identity of what backs a page, with the page's offset in it.
///
/// A file unlinked after it was mapped prints as `PATH (deleted)`; it is
/// still the same file. Unlinking is not a memory call (the trace does not
/// show it), so the suffix is not part of the identity.
fn backing(l: &MapsLine, addr: u64) -> (String, u64) {
    match l.kind() {
        MapsKind::Anon => ("anon".into(), 0),
        MapsKind::SharedAnon => ("shmem".into(), l.offset.wrapping_add(addr - l.start)),
        MapsKind::File | MapsKind::Special => {
            let name = l.name.strip_suffix(" (deleted)").unwrap_or(&l.name);
            (name.to_string(), l.offset.wrapping_add(addr - l.start))
        }
    }
}

/// The line covering `addr` in sorted, non-overlapping `lines`, moving `i` along.
fn covering<'a>(lines: &'a [MapsLine], i: &mut usize, addr: u64) -> Option<&'a MapsLine> {
    while *i < lines.len() && lines[*i].end <= addr {
        *i += 1;
    }
    lines.get(*i).filter(|l| l.start <= addr)
}

/// How many examples a diff keeps.
const EXAMPLES: usize = 4;

/// Every address where a line of `kernel` or `model` starts or ends, sorted,
/// once each: the segments between two cuts are covered alike on each side.
pub fn cuts(kernel: &[MapsLine], model: &[MapsLine]) -> Vec<u64> {
    let mut cuts: Vec<u64> = kernel
        .iter()
        .chain(model)
        .flat_map(|l| [l.start, l.end])
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// Compares the kernel's lines (and flags, if captured) with the model's.
pub fn compare(
    kernel: &[MapsLine],
    kflags: Option<&[VmFlagsLine]>,
    model: &[MapsLine],
    mflags: &[VmFlagsLine],
) -> Diff {
    let mut d = Diff::default();
    let cuts = cuts(kernel, model);
    let (mut ki, mut mi) = (0, 0);
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let k = covering(kernel, &mut ki, a);
        let m = covering(model, &mut mi, a);
        let pages = (b - a) >> 12;
        let same = match (k, m) {
            (None, None) => continue,
            (Some(k), Some(m)) => k.perms() == m.perms() && backing(k, a) == backing(m, a),
            _ => false,
        };
        d.pages += pages;
        if !same {
            d.pages_differ += pages;
        }
    }
    let kr: HashSet<(u64, u64)> = kernel.iter().map(|l| (l.start, l.end)).collect();
    let mr: HashSet<(u64, u64)> = model.iter().map(|l| (l.start, l.end)).collect();
    d.boundary_diffs = kr.symmetric_difference(&mr).count();

    // Examples: walk both lists by address; a pair is shown when the lines differ.
    let (mut i, mut j) = (0, 0);
    let text = |l: &MapsLine| -> String {
        // Device and inode aside (the model does not know every file's).
        format!(
            "{:x}-{:x} {} {:08x} {}",
            l.start,
            l.end,
            l.perms(),
            l.offset,
            l.name
        )
    };
    while (i < kernel.len() || j < model.len()) && d.examples.len() < EXAMPLES {
        match (kernel.get(i), model.get(j)) {
            (Some(k), Some(m)) => {
                if text(k) != text(m) {
                    d.examples.push((text(k), text(m)));
                }
                // Advance the one that ends first (both if equal).
                if k.end <= m.end {
                    i += 1;
                }
                if m.end <= k.end {
                    j += 1;
                }
            }
            (Some(k), None) => {
                d.examples.push((text(k), "-".into()));
                i += 1;
            }
            (None, Some(m)) => {
                d.examples.push(("-".into(), text(m)));
                j += 1;
            }
            (None, None) => break,
        }
    }

    if let Some(kf) = kflags {
        let mut j = 0;
        for k in kf {
            while j < mflags.len() && mflags[j].start < k.start {
                j += 1;
            }
            let Some(m) = mflags
                .get(j)
                .filter(|m| (m.start, m.end) == (k.start, k.end))
            else {
                continue;
            };
            // smaps prints the protection key apart (`ProtectionKey:`),
            // which captures do not record.
            if m.flags.without(maple_mm::VmFlags::PKEY_MASK) != k.flags {
                d.flag_diffs += 1;
                if d.flag_examples.len() < EXAMPLES {
                    d.flag_examples.push(format!(
                        "{:x}-{:x}: kernel {} | model {}",
                        k.start,
                        k.end,
                        vmflags_words(k.flags),
                        vmflags_words(m.flags)
                    ));
                }
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use maple_mm::procmaps::parse_maps;

    #[test]
    fn counts_pages_and_boundaries() {
        let k = parse_maps(
            "10000-12000 rw-p 00000000 00:00 0 \n12000-13000 rw-p 00000000 00:00 0 \n20000-21000 r--p 00001000 08:01 5                                  /lib/a\n",
        )
        .unwrap();
        let m = parse_maps(
            "10000-13000 rw-p 00000000 00:00 0 \n20000-21000 r--p 00002000 00:00 0                                  /lib/a\n",
        )
        .unwrap();
        let d = compare(&k, None, &m, &[]);
        assert_eq!(d.pages, 4);
        assert_eq!(d.pages_differ, 1, "the file page's offset differs");
        assert_eq!(d.boundary_diffs, 3);
        assert!(!d.examples.is_empty());
        let same = compare(&k, None, &k, &[]);
        assert_eq!((same.pages_differ, same.boundary_diffs), (0, 0));
        assert!(same.examples.is_empty());
    }

    #[test]
    fn a_file_deleted_after_it_was_mapped_is_the_same_file() {
        let k = parse_maps(
            "20000-22000 rw-s 00000000 08:01 5                                  /tmp/perf/1 (deleted)\n",
        )
        .unwrap();
        let m = parse_maps(
            "20000-22000 rw-s 00000000 00:00 0                                  /tmp/perf/1\n",
        )
        .unwrap();
        assert_eq!(compare(&k, None, &m, &[]).pages_differ, 0);
        let other = parse_maps(
            "20000-22000 rw-s 00000000 00:00 0                                  /tmp/perf/2\n",
        )
        .unwrap();
        assert_eq!(compare(&k, None, &other, &[]).pages_differ, 2);
    }
}
