//! `serde` support (feature `serde`): an [`AddressSpace`]'s *layout* — its
//! [`Config`], program break and VMAs (ranges, `VM_*` flags, page offsets,
//! backings) — without contents: page tables and the pages they map are not
//! part of it.
//!
//! A deserialized space lives on a new [`Memory`](crate::Memory) of its own:
//! anonymous memory reads as zero until written, file pages come from that
//! memory's (empty) page cache. Identities that only mean something inside
//! one memory are renamed consistently: every shared anonymous object
//! (`ShmId`) becomes a new object there, mapped by the same VMAs as before,
//! and every `anon_vma` identity (`AnonId`) a fresh one, shared by the same
//! VMAs as before (so what could merge still can).
//!
//! Input that does not describe a valid layout (overlapping, unaligned or
//! reversed VMAs, VMAs outside the task, inconsistent flags, a broken
//! config) is an error, never a panic.
//!
//! ```
//! use maple_mm::{AddressSpace, MapFlags, Prot};
//!
//! let mut mm = AddressSpace::new();
//! mm.mmap(0, 3 << 12, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
//! mm.brk(mm.current_brk() + 0x2000);
//! let json = serde_json::to_string(&mm).unwrap();
//! let copy: AddressSpace = serde_json::from_str(&json).unwrap();
//! assert_eq!(copy.maps(), mm.maps());
//! assert_eq!(copy.current_brk(), mm.current_brk());
//! ```

use crate::config::{Config, PAGE_SIZE};
use crate::memory::Memory;
use crate::space::AddressSpace;
use crate::vma::{AnonId, Backing, ShmId, Vma};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;

/// The serialized form, borrowing from the space.
#[derive(Serialize)]
#[serde(rename = "AddressSpace")]
struct LayoutRef<'a> {
    config: &'a Config,
    start_brk: u64,
    brk: u64,
    vmas: Vec<&'a Vma>,
}

/// The deserialized form, checked and turned into a space.
#[derive(Deserialize)]
#[serde(rename = "AddressSpace")]
struct Layout {
    config: Config,
    start_brk: u64,
    brk: u64,
    vmas: Vec<Vma>,
}

impl Serialize for AddressSpace {
    /// The layout as a struct `{ config, start_brk, brk, vmas }`, the VMAs in
    /// address order.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        LayoutRef {
            config: &self.inner.cfg,
            start_brk: self.inner.start_brk,
            brk: self.inner.brk,
            vmas: self.inner.vmas.values().collect(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for AddressSpace {
    /// Rebuilds the layout on a new memory; see the module docs.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let layout = Layout::deserialize(deserializer)?;
        layout.build().map_err(D::Error::custom)
    }
}

fn page_aligned(x: u64) -> bool {
    x % PAGE_SIZE == 0
}

impl Layout {
    fn check_config(&self) -> Result<(), String> {
        let c = &self.config;
        let aligned = [
            ("task_size", c.task_size),
            ("mmap_base", c.mmap_base),
            ("mmap_legacy_base", c.mmap_legacy_base),
            ("stack_guard_gap", c.stack_guard_gap),
        ];
        for (name, x) in aligned {
            if !page_aligned(x) {
                return Err(format!("config: {name} {x:#x} is not page aligned"));
            }
        }
        if c.task_size == 0
            || c.mmap_base > c.task_size
            || c.mmap_legacy_base > c.task_size
            || c.mmap_min_addr > c.task_size
        {
            return Err(format!("config: bases outside the task: {c:?}"));
        }
        if !(c.start_brk <= self.start_brk && self.start_brk <= self.brk && self.brk <= c.task_size)
        {
            return Err(format!(
                "program break {:#x}..{:#x} outside the task or before the configured start {:#x}",
                self.start_brk, self.brk, c.start_brk
            ));
        }
        Ok(())
    }

    fn build(self) -> Result<AddressSpace, String> {
        self.check_config()?;
        let mut mm = AddressSpace::with_memory(&Memory::new(), self.config.clone());
        mm.inner.start_brk = self.start_brk;
        mm.inner.brk = self.brk;
        {
            let mut phys = mm.mem.lock();
            let inner = &mut mm.inner;
            let mut shm: HashMap<ShmId, ShmId> = HashMap::new();
            let mut anon: HashMap<AnonId, AnonId> = HashMap::new();
            let mut attach: HashMap<crate::OpenFile, crate::OpenFile> = HashMap::new();
            for mut v in self.vmas {
                if !(v.start < v.end && page_aligned(v.start) && page_aligned(v.end)) {
                    return Err(format!("VMA {v:?} is empty, reversed or not page aligned"));
                }
                // The size of a System V segment is not in a layout: the
                // farthest offset mapped, unless the memory knows more.
                let extent = v
                    .pgoff
                    .saturating_mul(crate::PAGE_SIZE)
                    .saturating_add(v.end - v.start);
                if v.sysv().is_some() {
                    // Attachments get files of this process (as the
                    // anon_vmas get new ids).
                    v.vm_file = v.vm_file.map(|f| {
                        *attach.entry(f).or_insert_with(|| {
                            crate::shm::attach_file(f.mode == crate::OpenMode::ReadOnly)
                        })
                    });
                }
                if let Backing::Shm(id) = &mut v.backing {
                    *id = match id.sysv() {
                        Some((shmid, key)) => {
                            let size = phys
                                .cache
                                .sysv_info(shmid)
                                .map_or(extent, |s| s.size.max(extent));
                            let seg = crate::SysvShm { shmid, key, size };
                            phys.cache.sysv_segment(seg)
                        }
                        None => *shm.entry(*id).or_insert_with(|| phys.cache.new_shm()),
                    };
                }
                if let Some(id) = &mut v.anon {
                    *id = *anon.entry(*id).or_insert_with(AnonId::fresh);
                }
                let (start, last, pages) = (v.start, v.end - 1, v.pages());
                let backing = v.backing;
                if let Err(e) = inner.vmas.try_insert(start..=last, v) {
                    return Err(format!(
                        "VMA {start:#x}..{:#x} overlaps {:#x}..{:#x}",
                        last + 1,
                        e.occupied.start(),
                        e.occupied.end() + 1
                    ));
                }
                // Counted only once mapped, so that dropping `mm` on an
                // error puts back exactly what was taken.
                if let Backing::Shm(id) = backing {
                    phys.cache.shm_get(id);
                }
                inner.total_vm += pages;
            }
        }
        if mm.map_count() > mm.config().max_map_count {
            return Err(format!(
                "{} VMAs, more than max_map_count {}",
                mm.map_count(),
                mm.config().max_map_count
            ));
        }
        mm.validate().map_err(|e| e.to_string())?;
        Ok(mm)
    }
}
