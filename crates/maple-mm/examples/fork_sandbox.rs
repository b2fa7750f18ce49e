//! A sandbox that forks an address space, lets the child change it, and
//! compares the two layouts as `/proc/PID/maps` prints them.
//!
//! A fuzzer's snapshot engine or a sandbox runs untrusted code in a copy of
//! a prepared process: fork is cheap (the VMA tree is duplicated node by
//! node, the pages shared copy-on-write), and whatever the child does stays
//! in the child.
//!
//! Run with `cargo run -p maple-mm --example fork_sandbox`.

use maple_mm::{AddressSpace, FileId, MapFlags, Memory, Prot, PAGE_SIZE};

/// Lines of `before` missing from `after` ("-") and new in `after` ("+").
fn diff_maps(before: &str, after: &str) -> Vec<String> {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let mut out = Vec::new();
    out.extend(
        old.iter()
            .filter(|l| !new.contains(l))
            .map(|l| format!("- {l}")),
    );
    out.extend(
        new.iter()
            .filter(|l| !old.contains(l))
            .map(|l| format!("+ {l}")),
    );
    out
}

fn main() {
    // The program's file, in the page cache shared by every space.
    let mem = Memory::new();
    let exe = FileId(1);
    mem.write_file(exe, 0, b"\x7fELF...text");
    mem.write_file(exe, 2 * PAGE_SIZE, b"initial data");

    // The prepared process: text and data from the file, a heap, and an
    // anonymous buffer the untrusted code will work in.
    let mut parent = AddressSpace::with_memory(&mem, Default::default());
    let fixed = MapFlags::PRIVATE | MapFlags::FIXED;
    let text = parent
        .mmap(
            0x40_0000,
            2 * PAGE_SIZE,
            Prot::READ | Prot::EXEC,
            fixed,
            Some(exe),
            0,
        )
        .unwrap();
    let data = parent
        .mmap(
            0x40_2000,
            PAGE_SIZE,
            Prot::RW,
            fixed,
            Some(exe),
            2 * PAGE_SIZE,
        )
        .unwrap();
    let heap = parent.brk(0);
    parent.brk(heap + 4 * PAGE_SIZE);
    let buf = parent
        .mmap(0, 16 * PAGE_SIZE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    for i in 0..16 {
        parent.write(buf + i * PAGE_SIZE, b"parent's page").unwrap();
    }
    let parent_maps = parent.maps();
    println!("parent:\n{parent_maps}");

    // Fork: the child starts with the same layout and shares every page.
    let frames_before = mem.frames_in_use();
    let mut child = parent.fork().unwrap();
    assert_eq!(child.maps(), parent_maps);
    assert_eq!(mem.frames_in_use(), frames_before); // nothing copied yet

    // The untrusted code runs in the child.
    child.write(data, b"scribbled").unwrap(); // copy-on-write of the data page
    child.write(buf, b"child's page!").unwrap(); // and of one buffer page
    child
        .mprotect(buf + 8 * PAGE_SIZE, 8 * PAGE_SIZE, Prot::READ)
        .unwrap();
    child.munmap(text + PAGE_SIZE, PAGE_SIZE).unwrap();
    let anon_fixed = MapFlags::PRIVATE_ANON | MapFlags::FIXED;
    let extra = child
        .mmap(0x50_0000, PAGE_SIZE, Prot::RW, anon_fixed, None, 0)
        .unwrap();
    child.write(extra, b"new").unwrap();
    println!("child:\n{}", child.maps());

    let diff = diff_maps(&parent_maps, &child.maps());
    println!("what the child changed:");
    for line in &diff {
        println!("  {line}");
    }
    // The text lost a page, the buffer was split in two, and one VMA is new.
    assert_eq!(diff.iter().filter(|l| l.starts_with('-')).count(), 2);
    assert_eq!(diff.iter().filter(|l| l.starts_with('+')).count(), 4);
    let new_vma = child.vma_at(extra).unwrap();
    assert_eq!((new_vma.start(), new_vma.end()), (extra, extra + PAGE_SIZE));

    // The parent saw none of it.
    assert_eq!(parent.maps(), parent_maps);
    let mut page = [0; 13];
    parent.read(buf, &mut page).unwrap();
    assert_eq!(&page, b"parent's page");
    let mut init = [0; 12];
    parent.read(data, &mut init).unwrap();
    assert_eq!(&init, b"initial data");
    child.read(buf + PAGE_SIZE, &mut page).unwrap();
    assert_eq!(&page, b"parent's page"); // still shared with the parent

    // Three pages were copied (data, one buffer page) or new (extra).
    println!(
        "frames: {} before the child ran, {} after",
        frames_before,
        mem.frames_in_use()
    );
    assert_eq!(mem.frames_in_use(), frames_before + 3);

    // Dropping the child gives its pages back.
    drop(child);
    assert_eq!(mem.frames_in_use(), frames_before);
    mem.validate().expect("consistent physical memory");
    parent.validate().expect("a consistent address space");
}
