//! An address allocator for a virtual machine monitor: hands out guest
//! physical ranges for RAM and MMIO windows of emulated devices, each with
//! the alignment the device needs, and takes them back when a device is
//! unplugged.
//!
//! The allocation tree records the largest free range below every internal
//! node, so a gap search answers in O(log n); `find_gap_aligned` gives the
//! lowest aligned fit, a tight one included (a free range of exactly the
//! size that happens to be aligned).
//!
//! Run with `cargo run -p maple-tree --example vmm_allocator`.

use std::fmt;
use std::ops::RangeInclusive;

use maple_tree::MapleTree;

/// Who owns an allocated range.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Region {
    owner: String,
}

#[derive(Debug, PartialEq, Eq)]
enum AllocError {
    /// No free, aligned range of that size inside the allocator's window.
    NoSpace { size: u64, align: u64 },
    /// A fixed request overlaps an allocated range.
    Overlaps {
        owner: String,
        range: RangeInclusive<u64>,
    },
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocError::NoSpace { size, align } => {
                write!(f, "no free range of {size:#x} bytes aligned to {align:#x}")
            }
            AllocError::Overlaps { owner, range } => {
                write!(f, "overlaps {owner} at {range:#x?}")
            }
        }
    }
}

/// Guest physical addresses inside one window, as an allocation tree.
struct AddressAllocator {
    window: RangeInclusive<u64>,
    regions: MapleTree<Region>,
}

impl AddressAllocator {
    fn new(window: RangeInclusive<u64>) -> Self {
        AddressAllocator {
            window,
            regions: MapleTree::new_alloc(),
        }
    }

    /// Allocates `size` bytes at the lowest address that is a multiple of
    /// `align` (a power of two).
    fn allocate(&mut self, size: u64, align: u64, owner: &str) -> Result<u64, AllocError> {
        assert!(size > 0 && align.is_power_of_two());
        let start = self
            .find_aligned(size, align)
            .ok_or(AllocError::NoSpace { size, align })?;
        let region = Region {
            owner: owner.to_string(),
        };
        self.regions
            .try_insert(start..=start + (size - 1), region)
            .expect("the range was free");
        Ok(start)
    }

    /// Claims a fixed range, as a device with a hard-wired address needs.
    fn allocate_at(&mut self, start: u64, size: u64, owner: &str) -> Result<(), AllocError> {
        let region = Region {
            owner: owner.to_string(),
        };
        self.regions
            .try_insert(start..=start + (size - 1), region)
            .map_err(|e| AllocError::Overlaps {
                owner: self.regions.get(*e.occupied.start()).unwrap().owner.clone(),
                range: e.occupied,
            })
    }

    /// Frees the range that contains `addr`, returning it and its owner.
    fn free(&mut self, addr: u64) -> Option<(RangeInclusive<u64>, Region)> {
        self.regions.remove(addr)
    }

    /// The lowest multiple of `align` that starts `size` free bytes inside
    /// the window.
    fn find_aligned(&self, size: u64, align: u64) -> Option<u64> {
        self.regions
            .find_gap_aligned(size, align, self.window.clone())
    }

    fn print(&self) {
        for (range, region) in self.regions.iter() {
            let size = range.end() - range.start() + 1;
            println!(
                "  {:#011x}..={:#011x}  {:>8} KiB  {}",
                range.start(),
                range.end(),
                size >> 10,
                region.owner
            );
        }
    }
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

fn main() {
    // A 32-bit MMIO hole below 4 GiB (up to the IOAPIC), as x86 VMMs
    // reserve for devices.
    let mut mmio = AddressAllocator::new(0x8000_0000..=0xfebf_ffff);

    // Devices with hard-wired addresses come first.
    mmio.allocate_at(0xfebf_f000, 4 * KIB, "firmware page")
        .unwrap();
    mmio.allocate_at(0x8000_0000, 4 * KIB, "pvpanic").unwrap();

    // PCI BARs must be aligned to their size.
    let net = mmio
        .allocate(16 * KIB, 16 * KIB, "virtio-net BAR0")
        .unwrap();
    let blk = mmio
        .allocate(16 * KIB, 16 * KIB, "virtio-blk BAR0")
        .unwrap();
    let rng = mmio.allocate(4 * KIB, 4 * KIB, "virtio-rng BAR0").unwrap();
    let gpu = mmio
        .allocate(256 * MIB, 256 * MIB, "virtio-gpu BAR0")
        .unwrap();
    assert_eq!(net, 0x8000_4000); // after pvpanic's page, aligned to 16 KiB
    assert_eq!(blk, net + 16 * KIB);
    assert_eq!(rng, 0x8000_1000); // the 4 KiB hole right after pvpanic
    assert_eq!(gpu, 0x9000_0000); // the first 256 MiB boundary with room
    println!("after boot:");
    mmio.print();

    // A second fixed claim on a taken range is refused with its owner.
    let err = mmio.allocate_at(net, 4 * KIB, "rogue").unwrap_err();
    println!("claiming {net:#x} again: {err}");
    assert!(matches!(err, AllocError::Overlaps { ref owner, .. } if owner == "virtio-net BAR0"));

    // Hot-unplug the network card, plug in a bigger one: the freed 16 KiB
    // slot is reused for the next 16 KiB BAR.
    let (freed, region) = mmio.free(net + 100).unwrap();
    assert_eq!(freed, net..=net + 16 * KIB - 1);
    println!("unplugged {} at {freed:#x?}", region.owner);
    let net2 = mmio
        .allocate(16 * KIB, 16 * KIB, "virtio-net BAR0 (new)")
        .unwrap();
    assert_eq!(net2, net);

    // Fill the hole with 256 MiB BARs until it is full: the last requests
    // fail cleanly.
    let mut placed = 0;
    while mmio.allocate(256 * MIB, 256 * MIB, "ivshmem BAR2").is_ok() {
        placed += 1;
    }
    let err = mmio
        .allocate(256 * MIB, 256 * MIB, "one too many")
        .unwrap_err();
    println!("{placed} more 256 MiB BARs fit; then: {err}");
    assert_eq!(placed, 5); // at 0xa000_0000 ..= 0xe000_0000

    // A tight fit: exactly one aligned 256 MiB slot free between two taken
    // ones. A search for 256 MiB + 256 MiB - 1 bytes would find nothing.
    let (slot, _) = mmio.free(gpu).unwrap();
    assert_eq!(
        mmio.regions.find_gap(512 * MIB - 1, mmio.window.clone()),
        None
    );
    let again = mmio.allocate(256 * MIB, 256 * MIB, "virtio-gpu BAR0 (again)");
    assert_eq!(again, Ok(*slot.start()));

    println!("at the end:");
    mmio.print();
    mmio.regions.validate().expect("a consistent tree");
}
