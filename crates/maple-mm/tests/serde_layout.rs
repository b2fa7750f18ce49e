//! The `serde` feature: an address space's layout survives a round trip
//! through JSON (VMAs, flags, offsets, backings, program break, config), the
//! copy is a working space, and bad layouts are errors.
#![cfg(feature = "serde")]

use maple_mm::{AddressSpace, Advice, Backing, FileId, MapFlags, Prot, Vma};

const PAGE: u64 = 4096;

/// A space with every kind of VMA: private and shared anonymous, file,
/// split by mprotect, with anon_vma identities from faults, a heap.
fn busy_space() -> AddressSpace {
    let mut mm = AddressSpace::new();
    let anon = mm
        .mmap(0, 16 * PAGE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    mm.write(anon, b"touch").unwrap();
    mm.write(anon + 9 * PAGE, b"touch").unwrap();
    mm.mprotect(anon + 4 * PAGE, 2 * PAGE, Prot::READ).unwrap();
    let shm = mm
        .mmap(0, 8 * PAGE, Prot::RW, MapFlags::SHARED_ANON, None, 0)
        .unwrap();
    mm.mprotect(shm + 2 * PAGE, PAGE, Prot::READ).unwrap();
    mm.mmap(
        0,
        5 * PAGE,
        Prot::READ | Prot::EXEC,
        MapFlags::PRIVATE,
        Some(FileId(7)),
        3 * PAGE,
    )
    .unwrap();
    mm.mmap(0, 2 * PAGE, Prot::RW, MapFlags::SHARED, Some(FileId(8)), 0)
        .unwrap();
    let dc = mm
        .mmap(0, 4 * PAGE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    mm.madvise(dc, 4 * PAGE, Advice::DontFork).unwrap();
    let start = mm.current_brk();
    mm.brk(start + 3 * PAGE);
    mm.validate().unwrap();
    mm
}

/// What must survive: everything but the memory-local identities, which are
/// compared by the grouping they induce.
fn shape(mm: &AddressSpace) -> Vec<(u64, u64, u64, u64, String, Option<usize>)> {
    let mut anon_groups = Vec::new();
    let mut shm_groups = Vec::new();
    let group = |groups: &mut Vec<String>, key: String| match groups.iter().position(|g| *g == key)
    {
        Some(i) => i,
        None => {
            groups.push(key);
            groups.len() - 1
        }
    };
    mm.vmas()
        .map(|v: &Vma| {
            let backing = match v.backing() {
                Backing::Anon => "anon".to_string(),
                Backing::File(f) => format!("file {}", f.0),
                Backing::Shm(id) => format!("shm #{}", group(&mut shm_groups, format!("{id:?}"))),
                Backing::Special(s) => format!("special {s:?}"),
            };
            let anon = v
                .anon_vma()
                .map(|a| group(&mut anon_groups, format!("{a:?}")));
            (
                v.start(),
                v.end(),
                v.flags().bits(),
                v.pgoff(),
                backing,
                anon,
            )
        })
        .collect()
}

#[test]
fn round_trip_keeps_the_layout() {
    let mm = busy_space();
    let json = serde_json::to_string_pretty(&mm).unwrap();
    let copy: AddressSpace = serde_json::from_str(&json).unwrap();
    copy.validate().unwrap();
    assert_eq!(copy.maps(), mm.maps());
    assert_eq!(shape(&copy), shape(&mm));
    assert_eq!(copy.current_brk(), mm.current_brk());
    assert_eq!(copy.config(), mm.config());
    assert_eq!(copy.stats().total_vm_pages, mm.stats().total_vm_pages);
    assert_eq!(
        copy.stats().rss_pages,
        0,
        "contents are not part of the layout"
    );
    assert_eq!(copy.memory().shm_objects(), 1);
    // Serializing the copy gives the same text up to the renamed identities.
    let again: AddressSpace = serde_json::from_str(&serde_json::to_string(&copy).unwrap()).unwrap();
    assert_eq!(shape(&again), shape(&mm));
}

#[test]
fn the_copy_is_a_working_space() {
    let mm = busy_space();
    let mut copy: AddressSpace =
        serde_json::from_str(&serde_json::to_string(&mm).unwrap()).unwrap();
    let first = copy.vmas().next().unwrap().start();
    copy.write(first, b"x").unwrap();
    let child = copy.fork().unwrap();
    child.validate().unwrap();
    let (s, e) = {
        let v = copy
            .vmas()
            .find(|v| matches!(v.backing(), Backing::Shm(_)))
            .unwrap();
        (v.start(), v.end())
    };
    copy.munmap(s, e - s).unwrap();
    copy.validate().unwrap();
    drop(child);
    drop(copy);
}

fn layout_json(vmas: &str) -> String {
    let mm = AddressSpace::new();
    let json = serde_json::to_string(&mm).unwrap();
    json.replace("\"vmas\":[]", &format!("\"vmas\":[{vmas}]"))
}

fn vma(start: u64, end: u64, flags: u64, backing: &str) -> String {
    format!(
        r#"{{"start":{start},"end":{end},"flags":{flags},"pgoff":0,"backing":{backing},"anon":null}}"#
    )
}

#[test]
fn bad_layouts_are_errors() {
    let rw = 0x73; // READ | WRITE | MAYREAD | MAYWRITE | MAYEXEC
    let ok = layout_json(&vma(0x10000, 0x12000, rw, r#""Anon""#));
    if let Err(e) = serde_json::from_str::<AddressSpace>(&ok) {
        panic!("{ok}: {e}");
    }
    for (vmas, why) in [
        (vma(0x10000, 0x10000, rw, r#""Anon""#), "empty"),
        (vma(0x12000, 0x10000, rw, r#""Anon""#), "reversed"),
        (vma(0x10001, 0x12000, rw, r#""Anon""#), "aligned"),
        (
            format!(
                "{},{}",
                vma(0x10000, 0x13000, rw, r#""Anon""#),
                vma(0x12000, 0x14000, rw, r#""Anon""#)
            ),
            "overlaps",
        ),
        (
            vma(0x10000, 0x12000, rw, r#"{"Shm":1}"#),
            "private VMA on a shared object",
        ),
        (vma(0x10000, 0x12000, rw | 0x8, r#""Anon""#), "vma flags"),
        (
            vma(0x7fff_ffff_f000, 0x8000_0000_1000, rw, r#""Anon""#),
            "inside task",
        ),
    ] {
        let json = layout_json(&vmas);
        let err = serde_json::from_str::<AddressSpace>(&json).err();
        let msg = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains(why), "{vmas}: {msg:?}");
    }
    let mut broken: serde_json::Value = serde_json::from_str(&ok).unwrap();
    broken["brk"] = 1.into();
    let err = serde_json::from_value::<AddressSpace>(broken)
        .err()
        .unwrap();
    assert!(err.to_string().contains("program break"), "{err}");
    let mut broken: serde_json::Value = serde_json::from_str(&ok).unwrap();
    broken["config"]["max_map_count"] = 0.into();
    let err = serde_json::from_value::<AddressSpace>(broken)
        .err()
        .unwrap();
    assert!(err.to_string().contains("max_map_count"), "{err}");
    let mut broken: serde_json::Value = serde_json::from_str(&ok).unwrap();
    broken["config"]["task_size"] = 0x1001.into();
    let err = serde_json::from_value::<AddressSpace>(broken)
        .err()
        .unwrap();
    assert!(err.to_string().contains("not page aligned"), "{err}");
}

/// System V attachments survive the round trip: printed the same, their
/// segment's size known, and each can be detached whole.
#[test]
fn system_v_attachments_round_trip() {
    let mut mm = AddressSpace::new();
    let seg = maple_mm::SysvShm {
        shmid: 3,
        key: 0x5eed,
        size: 3 * PAGE,
    };
    let a = mm.shmat(seg, 0, 0).unwrap();
    let b = mm.shmat(seg, 0, maple_mm::SHM_RDONLY).unwrap();
    mm.mprotect(a + PAGE, PAGE, Prot::READ).unwrap();
    let mut copy: AddressSpace =
        serde_json::from_str(&serde_json::to_string(&mm).unwrap()).unwrap();
    copy.validate().unwrap();
    assert_eq!(copy.maps(), mm.maps());
    assert_eq!(copy.sysv_segment(3), Some(seg));
    copy.shmdt(a).unwrap();
    assert_eq!(copy.map_count(), 1);
    assert_eq!(copy.vma_at(b).unwrap().sysv_shmid(), Some(3));
    copy.validate().unwrap();
}
