//! strace's symbolic arguments of the memory calls, as numbers and typed
//! operations.

use super::strace::{file_name, parse_num, Call};
use maple_mm::{
    MapFlags, OpenMode, Prot, RemapFlags, MPOL_BIND, MPOL_DEFAULT, MPOL_F_NUMA_BALANCING,
    MPOL_F_RELATIVE_NODES, MPOL_F_STATIC_NODES, MPOL_INTERLEAVE, MPOL_LOCAL, MPOL_MF_MOVE,
    MPOL_MF_MOVE_ALL, MPOL_MF_STRICT, MPOL_PREFERRED, MPOL_PREFERRED_MANY,
    MPOL_WEIGHTED_INTERLEAVE,
};

/// A memory system call, decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `mmap(addr, len, prot, flags, fd, off)`; `file` is the path `-y`
    /// printed, `fd` the descriptor's number.
    Mmap {
        addr: u64,
        len: u64,
        prot: Prot,
        flags: MapFlags,
        file: Option<String>,
        fd: Option<u64>,
        off: u64,
    },
    /// `munmap(addr, len)`.
    Munmap { addr: u64, len: u64 },
    /// `mprotect(addr, len, prot)` / `pkey_mprotect(addr, len, prot, pkey)`
    /// (`pkey` -1 for `mprotect`).
    Mprotect {
        addr: u64,
        len: u64,
        prot: Prot,
        pkey: i32,
    },
    /// `pkey_alloc(flags, access_rights)`.
    PkeyAlloc { flags: u32, rights: u32 },
    /// `pkey_free(pkey)`.
    PkeyFree { pkey: i32 },
    /// `mremap(old, old_len, new_len, flags, new_addr)`.
    Mremap {
        old: u64,
        old_len: u64,
        new_len: u64,
        flags: RemapFlags,
        new_addr: u64,
    },
    /// `brk(addr)`.
    Brk { addr: u64 },
    /// `madvise(addr, len, advice)` with the raw advice.
    Madvise { addr: u64, len: u64, advice: i32 },
    /// `shmget(key, size, flags)`: what it says about the segment whose id
    /// it returns (traced by `maple capture --state-calls` only).
    Shmget { key: i32, size: u64 },
    /// `shmat(shmid, addr, flags)`.
    Shmat { shmid: i64, addr: u64, flags: u32 },
    /// `shmdt(addr)`.
    Shmdt { addr: u64 },
    /// `mlock(addr, len)` (flags 0) / `mlock2(addr, len, flags)`.
    Mlock { addr: u64, len: u64, flags: u32 },
    /// `munlock(addr, len)`.
    Munlock { addr: u64, len: u64 },
    /// `mlockall(flags)`.
    Mlockall { flags: u32 },
    /// `munlockall()`.
    Munlockall,
    /// `remap_file_pages(addr, size, prot, pgoff, flags)`.
    RemapFilePages {
        addr: u64,
        size: u64,
        prot: u64,
        pgoff: u64,
        flags: u64,
    },
    /// `mseal(addr, len, flags)` (strace 6.1, which predates it, prints
    /// `syscall_0x1ce(addr, len, flags, ...)`).
    Mseal { addr: u64, len: u64, flags: u64 },
    /// `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, addr, len, name)`.
    SetAnonName { addr: u64, len: u64, name: NameArg },
    /// `mbind(addr, len, mode, nodemask, maxnode, flags)`, the node mask's
    /// first word limited to its `maxnode - 1` bits.
    Mbind {
        addr: u64,
        len: u64,
        mode: u32,
        nodes: u64,
        flags: u32,
    },
}

/// The name argument of `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)` as strace
/// printed it.
#[derive(Debug, Clone, PartialEq)]
pub enum NameArg {
    /// `NULL`: clear the name.
    Null,
    /// A quoted string, unescaped (the bytes the kernel read).
    Name(Vec<u8>),
    /// A string strace cut at its `-s` limit (`"..."...`): longer than that
    /// limit, so longer than any name the kernel accepts.
    Truncated,
    /// An address strace could not read a string at.
    Unreadable,
}

/// The bytes of a string strace printed in double quotes (`"a\tb\33"`),
/// its escapes undone (`\n`, `\t`, `\v`, `\f`, `\r`, `\\`, `\"`, octal
/// `\NNN`, hex `\xHH`); `None` if `s` is not such a string.
pub fn unquote(s: &str) -> Option<Vec<u8>> {
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    let b = inner.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let e = *b.get(i + 1)?;
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'r' => out.push(b'\r'),
            b'x' => {
                let h = inner.get(i..i + 2)?;
                out.push(u8::from_str_radix(h, 16).ok()?);
                i += 2;
            }
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                let mut n = 1;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + u32::from(b[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push(u8::try_from(v).ok()?);
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// Whether `c` is `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, ...)` (other
/// `prctl`s are no memory calls).
pub fn is_set_anon_name(c: &Call) -> bool {
    c.name == "prctl"
        && c.args.first().map(|a| a.trim()) == Some("PR_SET_VMA")
        && c.args.get(1).map(|a| a.trim()) == Some("PR_SET_VMA_ANON_NAME")
}

fn name_arg(s: &str) -> NameArg {
    let s = s.trim();
    if s == "NULL" {
        NameArg::Null
    } else if let Some(q) = s.strip_suffix("...") {
        match unquote(q) {
            Some(_) => NameArg::Truncated,
            None => NameArg::Unreadable,
        }
    } else {
        unquote(s).map_or(NameArg::Unreadable, NameArg::Name)
    }
}

/// A flag argument: names joined by `|`, and numbers.
fn bits(s: &str, table: &[(&str, u64)], what: &str) -> Result<u64, String> {
    let mut v = 0u64;
    for w in s.split('|') {
        // strace names the bits it knows and prints the others as a number
        // followed by a comment, `0x8 /* MAP_??? */|MAP_ANONYMOUS`: the
        // number is what counts.
        let w = w.split("/*").next().unwrap_or(w).trim();
        if let Some(n) = parse_num(w) {
            v |= n;
            continue;
        }
        // strace prints a huge page size it has no name for as its log2
        // shifted into place: `21<<MAP_HUGE_SHIFT` (also for memfd_create's
        // and shmget's flags; all three shifts are 26).
        if let Some((n, field)) = w.split_once("<<") {
            let shift = match field.trim() {
                "MAP_HUGE_SHIFT" | "MFD_HUGE_SHIFT" | "SHM_HUGE_SHIFT" => 26,
                other => parse_num(other).ok_or_else(|| format!("unknown {what} {w:?}"))?,
            };
            let n = parse_num(n).ok_or_else(|| format!("unknown {what} {w:?}"))?;
            v |= n
                .checked_shl(shift as u32)
                .ok_or_else(|| format!("bad {what} {w:?}"))?;
            continue;
        }
        if let Some(shift) = w.strip_prefix("MAP_HUGE_") {
            // MAP_HUGE_2MB and friends: the page size's log2 in bits 26..32.
            let log = match shift {
                "64KB" => 16,
                "512KB" => 19,
                "1MB" => 20,
                "2MB" => 21,
                "8MB" => 23,
                "16MB" => 24,
                "32MB" => 25,
                "256MB" => 28,
                "512MB" => 29,
                "1GB" => 30,
                "2GB" => 31,
                "16GB" => 34,
                _ => return Err(format!("unknown {what} {w:?}")),
            };
            v |= log << 26;
            continue;
        }
        let b = table
            .iter()
            .find(|(n, _)| *n == w)
            .ok_or_else(|| format!("unknown {what} {w:?}"))?
            .1;
        v |= b;
    }
    Ok(v)
}

const PROTS: [(&str, u64); 7] = [
    ("PROT_NONE", 0),
    ("PROT_READ", 1),
    ("PROT_WRITE", 2),
    ("PROT_EXEC", 4),
    ("PROT_SEM", 8),
    ("PROT_GROWSDOWN", 0x0100_0000),
    ("PROT_GROWSUP", 0x0200_0000),
];

/// `MAP_*` names and values (x86-64). `MAP_ABOVE4G` (Linux 6.4, for shadow
/// stacks) only keeps the search for a free range above 4 GiB; the model's
/// searches (top-down below `mmap_base`, or the legacy layout's from a third
/// of the address space up; `MAP_32BIT` aside) stay there anyway, so it
/// passes the bit on and maple-mm ignores it, as Linux ignores unknown bits.
const MAPS: [(&str, u64); 21] = [
    ("MAP_FILE", 0),
    ("MAP_SHARED", 0x1),
    ("MAP_PRIVATE", 0x2),
    ("MAP_SHARED_VALIDATE", 0x3),
    ("MAP_DROPPABLE", 0x8),
    ("MAP_FIXED", 0x10),
    ("MAP_ANONYMOUS", 0x20),
    ("MAP_32BIT", 0x40),
    ("MAP_ABOVE4G", 0x80),
    ("MAP_GROWSDOWN", 0x100),
    ("MAP_DENYWRITE", 0x800),
    ("MAP_EXECUTABLE", 0x1000),
    ("MAP_LOCKED", 0x2000),
    ("MAP_NORESERVE", 0x4000),
    ("MAP_POPULATE", 0x8000),
    ("MAP_NONBLOCK", 0x1_0000),
    ("MAP_STACK", 0x2_0000),
    ("MAP_HUGETLB", 0x4_0000),
    ("MAP_SYNC", 0x8_0000),
    ("MAP_FIXED_NOREPLACE", 0x10_0000),
    ("MAP_UNINITIALIZED", 0x400_0000),
];

/// `PKEY_DISABLE_*` (EXECUTE is powerpc's; x86 rejects it with `EINVAL`).
const PKEY_RIGHTS: [(&str, u64); 3] = [
    ("PKEY_DISABLE_ACCESS", 1),
    ("PKEY_DISABLE_WRITE", 2),
    ("PKEY_DISABLE_EXECUTE", 4),
];

const REMAPS: [(&str, u64); 3] = [
    ("MREMAP_MAYMOVE", 1),
    ("MREMAP_FIXED", 2),
    ("MREMAP_DONTUNMAP", 4),
];

/// `SHM_*` flags of `shmat` (`SHM_RDONLY`, `SHM_RND`, `SHM_REMAP`, `SHM_EXEC`).
const SHMATS: [(&str, u64); 4] = [
    ("SHM_RDONLY", maple_mm::SHM_RDONLY as u64),
    ("SHM_RND", maple_mm::SHM_RND as u64),
    ("SHM_REMAP", maple_mm::SHM_REMAP as u64),
    ("SHM_EXEC", maple_mm::SHM_EXEC as u64),
];

/// `MLOCK_ONFAULT`, the flag of `mlock2`.
const MLOCKS: [(&str, u64); 1] = [("MLOCK_ONFAULT", maple_mm::MLOCK_ONFAULT as u64)];

/// `MCL_*` flags of `mlockall`.
const MCLS: [(&str, u64); 3] = [
    ("MCL_CURRENT", maple_mm::MCL_CURRENT as u64),
    ("MCL_FUTURE", maple_mm::MCL_FUTURE as u64),
    ("MCL_ONFAULT", maple_mm::MCL_ONFAULT as u64),
];

/// `MADV_*` names and values (x86-64).
pub const MADVS: [(&str, u64); 27] = [
    ("MADV_NORMAL", 0),
    ("MADV_RANDOM", 1),
    ("MADV_SEQUENTIAL", 2),
    ("MADV_WILLNEED", 3),
    ("MADV_DONTNEED", 4),
    ("MADV_FREE", 8),
    ("MADV_REMOVE", 9),
    ("MADV_DONTFORK", 10),
    ("MADV_DOFORK", 11),
    ("MADV_MERGEABLE", 12),
    ("MADV_UNMERGEABLE", 13),
    ("MADV_HUGEPAGE", 14),
    ("MADV_NOHUGEPAGE", 15),
    ("MADV_DONTDUMP", 16),
    ("MADV_DODUMP", 17),
    ("MADV_WIPEONFORK", 18),
    ("MADV_KEEPONFORK", 19),
    ("MADV_COLD", 20),
    ("MADV_PAGEOUT", 21),
    ("MADV_POPULATE_READ", 22),
    ("MADV_POPULATE_WRITE", 23),
    ("MADV_DONTNEED_LOCKED", 24),
    ("MADV_COLLAPSE", 25),
    ("MADV_HWPOISON", 100),
    ("MADV_SOFT_OFFLINE", 101),
    ("MADV_GUARD_INSTALL", 102),
    ("MADV_GUARD_REMOVE", 103),
];

fn num(s: &str, what: &str) -> Result<u64, String> {
    // `0x3e8 /* MADV_??? */`: the number before the comment.
    let s = s.split("/*").next().unwrap_or(s).trim();
    parse_num(s).ok_or_else(|| format!("bad {what} {s:?}"))
}

fn arg(c: &Call, i: usize) -> Result<&str, String> {
    c.args.get(i).map(String::as_str).ok_or_else(|| {
        format!(
            "{} has {} arguments, wanted at least {}",
            c.name,
            c.args.len(),
            i + 1
        )
    })
}

/// The path `-y` printed for a descriptor (`3</usr/lib/libc.so.6>`), or
/// None when it printed none (and for `-1`).
///
/// strace prints a path for every open descriptor (`socket:[…]`,
/// `pipe:[…]` and `anon_inode:…` too), so a descriptor without one was not
/// open: a file mapping of it fails with `EBADF`, as the model's mapping
/// without a file does.
fn fd_path(s: &str) -> Option<String> {
    let s = s.trim();
    // strace marks a descriptor whose file was unlinked (a memfd, a
    // deleted temporary) after the brackets: `3</memfd:blob>(deleted)`.
    let (s, unlinked) = match s.strip_suffix("(deleted)") {
        Some(s) => (s, true),
        None => (s, false),
    };
    match s.find('<') {
        Some(i) if s.ends_with('>') => Some(file_name(&s[i + 1..s.len() - 1], unlinked)),
        _ => None,
    }
}

/// The number of a descriptor argument (`3</usr/lib/libc.so.6>` → 3);
/// `None` for `-1` or anything that is not one.
pub fn fd_number(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.split('<').next().unwrap_or(s);
    digits.parse().ok()
}

/// Decodes a memory call; `Ok(None)` for calls that are not memory calls
/// the replay applies.
pub fn decode(c: &Call) -> Result<Option<Op>, String> {
    let op = match c.name.as_str() {
        "mmap" => {
            let flags = bits(arg(c, 3)?, &MAPS, "mmap flag")?;
            Op::Mmap {
                addr: num(arg(c, 0)?, "address")?,
                len: num(arg(c, 1)?, "length")?,
                prot: Prot::from_bits_retain(bits(arg(c, 2)?, &PROTS, "protection")? as u32),
                flags: MapFlags::from_bits_retain(flags as u32),
                file: fd_path(arg(c, 4)?),
                fd: fd_number(arg(c, 4)?),
                off: num(arg(c, 5)?, "offset")?,
            }
        }
        "munmap" => Op::Munmap {
            addr: num(arg(c, 0)?, "address")?,
            len: num(arg(c, 1)?, "length")?,
        },
        "mprotect" | "pkey_mprotect" => Op::Mprotect {
            addr: num(arg(c, 0)?, "address")?,
            len: num(arg(c, 1)?, "length")?,
            prot: Prot::from_bits_retain(bits(arg(c, 2)?, &PROTS, "protection")? as u32),
            pkey: if c.name == "pkey_mprotect" {
                num(arg(c, 3)?, "protection key")? as i32
            } else {
                -1
            },
        },
        "pkey_alloc" => Op::PkeyAlloc {
            flags: num(arg(c, 0)?, "flags")? as u32,
            rights: bits(arg(c, 1)?, &PKEY_RIGHTS, "access right")? as u32,
        },
        "pkey_free" => Op::PkeyFree {
            pkey: num(arg(c, 0)?, "protection key")? as i32,
        },
        "mremap" => {
            let flags = bits(arg(c, 3)?, &REMAPS, "mremap flag")?;
            let new_addr = match c.args.get(4) {
                Some(s) => num(s, "new address")?,
                None => 0,
            };
            Op::Mremap {
                old: num(arg(c, 0)?, "address")?,
                old_len: num(arg(c, 1)?, "old length")?,
                new_len: num(arg(c, 2)?, "new length")?,
                flags: RemapFlags::from_bits_retain(flags as u32),
                new_addr,
            }
        }
        "brk" => Op::Brk {
            addr: num(arg(c, 0)?, "address")?,
        },
        "madvise" => {
            let a = arg(c, 2)?;
            let advice = match MADVS.iter().find(|(n, _)| *n == a.trim()) {
                Some(&(_, v)) => v,
                None => num(a, "advice")?,
            };
            Op::Madvise {
                addr: num(arg(c, 0)?, "address")?,
                len: num(arg(c, 1)?, "length")?,
                advice: advice as i32,
            }
        }
        "shmget" => {
            let k = arg(c, 0)?.trim();
            let key = if k == "IPC_PRIVATE" {
                0
            } else {
                num(k, "key")? as i32
            };
            Op::Shmget {
                key,
                size: num(arg(c, 1)?, "size")?,
            }
        }
        "shmat" => Op::Shmat {
            shmid: num(arg(c, 0)?, "shmid")? as i64,
            addr: num(arg(c, 1)?, "address")?,
            flags: bits(arg(c, 2)?, &SHMATS, "shmat flag")? as u32,
        },
        "shmdt" => Op::Shmdt {
            addr: num(arg(c, 0)?, "address")?,
        },
        "mlock" | "mlock2" => Op::Mlock {
            addr: num(arg(c, 0)?, "address")?,
            len: num(arg(c, 1)?, "length")?,
            flags: if c.name == "mlock2" {
                bits(arg(c, 2)?, &MLOCKS, "mlock2 flag")? as u32
            } else {
                0
            },
        },
        "munlock" => Op::Munlock {
            addr: num(arg(c, 0)?, "address")?,
            len: num(arg(c, 1)?, "length")?,
        },
        "mlockall" => Op::Mlockall {
            flags: bits(arg(c, 0)?, &MCLS, "mlockall flag")? as u32,
        },
        "munlockall" => Op::Munlockall,
        "remap_file_pages" => Op::RemapFilePages {
            addr: num(arg(c, 0)?, "address")?,
            size: num(arg(c, 1)?, "size")?,
            prot: bits(arg(c, 2)?, &PROTS, "protection")?,
            pgoff: num(arg(c, 3)?, "page offset")?,
            flags: bits(arg(c, 4)?, &MAPS, "mmap flag")?,
        },
        // 462 in the one syscall table every architecture shares since 5.1.
        "mseal" | "syscall_0x1ce" => Op::Mseal {
            addr: num(arg(c, 0)?, "address")?,
            len: num(arg(c, 1)?, "length")?,
            flags: num(arg(c, 2)?, "flags")?,
        },
        "mbind" => Op::Mbind {
            addr: num(arg(c, 0)?, "address")?,
            len: num(arg(c, 1)?, "length")?,
            mode: bits(arg(c, 2)?, &MPOL_MODES, "mbind mode")? as u32,
            nodes: node_mask(arg(c, 3)?, num(arg(c, 4)?, "maxnode")?)?,
            flags: bits(arg(c, 5)?, &MPOL_MF, "mbind flag")? as u32,
        },
        "prctl" if is_set_anon_name(c) => Op::SetAnonName {
            addr: num(arg(c, 2)?, "address")?,
            len: num(arg(c, 3)?, "length")?,
            name: name_arg(arg(c, 4)?),
        },
        _ => return Ok(None),
    };
    Ok(Some(op))
}

/// `mbind`'s modes and mode flags, by the names strace prints.
const MPOL_MODES: [(&str, u64); 10] = [
    ("MPOL_DEFAULT", MPOL_DEFAULT as u64),
    ("MPOL_PREFERRED", MPOL_PREFERRED as u64),
    ("MPOL_BIND", MPOL_BIND as u64),
    ("MPOL_INTERLEAVE", MPOL_INTERLEAVE as u64),
    ("MPOL_LOCAL", MPOL_LOCAL as u64),
    ("MPOL_PREFERRED_MANY", MPOL_PREFERRED_MANY as u64),
    ("MPOL_WEIGHTED_INTERLEAVE", MPOL_WEIGHTED_INTERLEAVE as u64),
    ("MPOL_F_NUMA_BALANCING", MPOL_F_NUMA_BALANCING as u64),
    ("MPOL_F_RELATIVE_NODES", MPOL_F_RELATIVE_NODES as u64),
    ("MPOL_F_STATIC_NODES", MPOL_F_STATIC_NODES as u64),
];

/// `mbind`'s flags.
const MPOL_MF: [(&str, u64); 3] = [
    ("MPOL_MF_STRICT", MPOL_MF_STRICT as u64),
    ("MPOL_MF_MOVE", MPOL_MF_MOVE as u64),
    ("MPOL_MF_MOVE_ALL", MPOL_MF_MOVE_ALL as u64),
];

/// The node mask strace printed (`NULL`, or its words, `[0x00000000000001]`),
/// as the kernel reads it (`get_nodes`): `maxnode - 1` bits, here of the
/// first word (nodes 0 to 63).
fn node_mask(s: &str, maxnode: u64) -> Result<u64, String> {
    let s = s.trim();
    if s == "NULL" || maxnode <= 1 {
        return Ok(0);
    }
    let first = s
        .strip_prefix('[')
        .and_then(|w| w.split([',', ']']).next())
        .and_then(parse_num)
        .ok_or_else(|| format!("bad node mask {s:?}"))?;
    let bits = maxnode - 1;
    Ok(if bits >= 64 {
        first
    } else {
        first & ((1 << bits) - 1)
    })
}

/// Memory calls the replay knows but the model does not apply (counted and
/// reported, not silently dropped).
pub const NOT_MODELLED: [&str; 3] = ["process_madvise", "map_shadow_stack", "memfd_secret"];

/// Memory calls that never change a layout (`msync`, `mincore`, ...).
pub const NO_LAYOUT_EFFECT: [&str; 5] = [
    "msync",
    "mincore",
    "get_mempolicy",
    "set_mempolicy",
    "set_mempolicy_home_node",
];

/// What a call that returns a new descriptor says about it: the open mode
/// (`O_RDONLY` / `O_WRONLY` / `O_RDWR` of `open`, `openat`, `openat2`;
/// `creat` is write-only) and whether it is closed at `execve`
/// (`O_CLOEXEC`); `memfd_create` opens read-write. `None` for other calls. A trace has these calls only
/// when the capture traced them (`maple capture --state-calls`).
pub fn open_mode(c: &Call) -> Option<(OpenMode, bool)> {
    let flags = match c.name.as_str() {
        "open" => c.args.get(1)?.as_str(),
        "openat" => c.args.get(2)?.as_str(),
        // openat2(dirfd, path, {flags=O_RDONLY|O_CLOEXEC, resolve=...}, size)
        "openat2" => {
            let how = c.args.get(2)?;
            let f = how.split("flags=").nth(1)?;
            f.split([',', '}']).next()?
        }
        "creat" => return Some((OpenMode::WriteOnly, false)),
        // memfd_create("name", MFD_CLOEXEC|...): always read-write.
        "memfd_create" => {
            let f = c.args.get(1)?;
            return Some((OpenMode::ReadWrite, f.contains("MFD_CLOEXEC")));
        }
        _ => return None,
    };
    let words: Vec<&str> = flags.split('|').map(str::trim).collect();
    let mode = if words.contains(&"O_RDWR") {
        OpenMode::ReadWrite
    } else if words.contains(&"O_WRONLY") {
        OpenMode::WriteOnly
    } else {
        OpenMode::ReadOnly
    };
    Some((mode, words.contains(&"O_CLOEXEC")))
}

/// The addresses a `clone` / `clone3` call hands the new task and that its
/// creator wrote before the call: the top of the given stack (its last
/// byte; `child_stack=` is the top, `stack=` with `stack_size=` the bottom
/// and size) and the thread block (`tls=`: glibc's `struct pthread`, at
/// the top of the stacks it allocates). Empty when the call gives none.
pub fn clone_written(c: &Call) -> Vec<u64> {
    let all = c.args.join(",");
    let field = |name: &str| {
        all.split([',', '{', '}'])
            .filter_map(|f| f.trim().strip_prefix(name)?.strip_prefix('='))
            .find_map(parse_num)
            .filter(|&v| v != 0)
    };
    let mut at = Vec::new();
    if let Some(top) = field("child_stack") {
        at.push(top - 1);
    }
    if let (Some(bottom), Some(size)) = (field("stack"), field("stack_size")) {
        at.push(bottom.saturating_add(size) - 1);
    }
    at.extend(field("tls"));
    at
}

/// The clone flags of a `clone` / `clone3` / `fork` / `vfork` call:
/// `(shares the address space, is a thread)`.
pub fn clone_kind(c: &Call) -> (bool, bool) {
    match c.name.as_str() {
        "fork" => (false, false),
        "vfork" => (true, false),
        _ => {
            let all = c.args.join(",");
            let has = |f: &str| {
                all.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .any(|w| w == f)
            };
            (has("CLONE_VM"), has("CLONE_THREAD"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::strace::parse_trace;
    use super::*;

    fn one(line: &str) -> Op {
        let c = parse_trace("t", 1, &format!("1.0 {line}\n")).unwrap();
        decode(&c[0]).unwrap().unwrap()
    }

    #[test]
    fn mbind_modes_node_masks_and_flags() {
        let c = parse_trace(
            "t",
            1,
            "1.0 mbind(0x7fffe9c00000, 134217728, MPOL_PREFERRED, NULL, 0, 0) = 0\n\
             1.1 mbind(0x7ffff7d0b000, 65536, MPOL_BIND|MPOL_F_STATIC_NODES, [0x00000000000003], 2, MPOL_MF_STRICT|MPOL_MF_MOVE) = 0\n",
        )
        .unwrap();
        assert_eq!(
            decode(&c[0]).unwrap(),
            Some(Op::Mbind {
                addr: 0x7fff_e9c0_0000,
                len: 134_217_728,
                mode: 1,
                nodes: 0,
                flags: 0,
            })
        );
        // maxnode 2: one bit of the mask counts.
        assert_eq!(
            decode(&c[1]).unwrap(),
            Some(Op::Mbind {
                addr: 0x7fff_f7d0_b000,
                len: 65536,
                mode: 2 | 1 << 15,
                nodes: 1,
                flags: 3,
            })
        );
    }

    #[test]
    fn a_huge_page_size_strace_has_no_name_for_is_its_shifted_log() {
        let c = parse_trace(
            "t",
            1,
            "1.0 mmap(NULL, 2097152, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_HUGETLB|21<<MAP_HUGE_SHIFT, -1, 0) = -1 ENOMEM (Cannot allocate memory)\n",
        )
        .unwrap();
        let Ok(Some(Op::Mmap { flags, .. })) = decode(&c[0]) else {
            panic!("not an mmap");
        };
        assert_eq!(flags.bits(), 0x22 | 0x4_0000 | 21 << 26);
    }

    #[test]
    fn decodes_the_calls() {
        assert_eq!(
            one("mmap(0x7ffff7f9a000, 94208, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3</usr/lib/libgcc_s.so.1>, 0x3000) = 0x7ffff7f9a000"),
            Op::Mmap {
                addr: 0x7fff_f7f9_a000,
                len: 94208,
                prot: Prot::READ | Prot::EXEC,
                flags: MapFlags::PRIVATE | MapFlags::FIXED | MapFlags::DENYWRITE,
                file: Some("/usr/lib/libgcc_s.so.1".into()),
                fd: Some(3),
                off: 0x3000
            }
        );
        // strace 6.1 has no name for MAP_DROPPABLE (Go 1.24's getrandom
        // state): a number and a comment, then the named bits.
        assert_eq!(
            one("mmap(NULL, 4096, PROT_READ|PROT_WRITE, 0x8 /* MAP_??? */|MAP_ANONYMOUS, -1, 0) = 0x7ffff7e65000"),
            Op::Mmap {
                addr: 0,
                len: 4096,
                prot: Prot::RW,
                flags: MapFlags::DROPPABLE | MapFlags::ANONYMOUS,
                file: None,
                fd: None,
                off: 0
            }
        );
        // A newer strace names it.
        assert_eq!(
            one("mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS|MAP_ABOVE4G, -1, 0) = 0x7ffff7e65000"),
            Op::Mmap {
                addr: 0,
                len: 4096,
                prot: Prot::READ,
                flags: MapFlags::PRIVATE_ANON | MapFlags::from_bits_retain(0x80),
                file: None,
                fd: None,
                off: 0
            }
        );
        assert_eq!(
            one("madvise(0x7ffff0000000, 4096, 0x3e8 /* MADV_??? */) = -1 EINVAL (Invalid argument)"),
            Op::Madvise { addr: 0x7fff_f000_0000, len: 4096, advice: 1000 }
        );
        assert_eq!(
            one("mremap(0x7ffff7000000, 8192, 16384, MREMAP_MAYMOVE) = 0x7ffff6000000"),
            Op::Mremap {
                old: 0x7fff_f700_0000,
                old_len: 8192,
                new_len: 16384,
                flags: RemapFlags::MAYMOVE,
                new_addr: 0
            }
        );
        assert_eq!(one("brk(NULL) = 0x555555559000"), Op::Brk { addr: 0 });
        assert_eq!(
            one("pkey_mprotect(0x7ffff7000000, 4096, PROT_READ|PROT_WRITE, 1) = 0"),
            Op::Mprotect {
                addr: 0x7fff_f700_0000,
                len: 4096,
                prot: Prot::RW,
                pkey: 1
            }
        );
        assert_eq!(
            one("pkey_alloc(0, PKEY_DISABLE_ACCESS|PKEY_DISABLE_WRITE) = 2"),
            Op::PkeyAlloc {
                flags: 0,
                rights: 3
            }
        );
        assert_eq!(one("pkey_free(2) = 0"), Op::PkeyFree { pkey: 2 });
    }

    #[test]
    fn decodes_anon_vma_names() {
        assert_eq!(
            one(
                r#"prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, 0x7ffff7fb7000, 262144, " Go: immortal metadata") = -1 EINVAL (Invalid argument)"#
            ),
            Op::SetAnonName {
                addr: 0x7ffff7fb7000,
                len: 262144,
                name: NameArg::Name(b" Go: immortal metadata".to_vec()),
            }
        );
        assert_eq!(
            one("prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, 0x1000, 4096, NULL) = 0"),
            Op::SetAnonName {
                addr: 0x1000,
                len: 4096,
                name: NameArg::Null,
            }
        );
        let name = |line: &str| match one(line) {
            Op::SetAnonName { name, .. } => name,
            op => panic!("{op:?}"),
        };
        assert_eq!(
            name(
                r#"prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, 0x1000, 1, "a\"b\\c\tz\33\x7f") = -1 EINVAL"#
            ),
            NameArg::Name(b"a\"b\\c\tz\x1b\x7f".to_vec())
        );
        assert_eq!(
            name(r#"prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, 0x1000, 1, "aaaa"...) = -1 EINVAL"#),
            NameArg::Truncated
        );
        assert_eq!(
            name("prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, 0x1000, 1, 0xdead) = -1 EFAULT"),
            NameArg::Unreadable
        );
        let other = parse_trace("t", 1, "1.0 prctl(PR_SET_NAME, \"x\") = 0\n").unwrap();
        assert_eq!(decode(&other[0]).unwrap(), None);
    }

    #[test]
    fn decodes_shm_and_lock_calls() {
        assert_eq!(
            one("shmget(IPC_PRIVATE, 40960, IPC_CREAT|0600) = 1"),
            Op::Shmget {
                key: 0,
                size: 40960
            }
        );
        assert_eq!(
            one("shmget(0x1234, 41060, IPC_CREAT|0600) = 4"),
            Op::Shmget {
                key: 0x1234,
                size: 41060
            }
        );
        assert_eq!(
            one("shmat(3, 0x7ffff7d9f005, SHM_RND|SHM_REMAP) = 0x7ffff7d9f000"),
            Op::Shmat {
                shmid: 3,
                addr: 0x7fff_f7d9_f005,
                flags: maple_mm::SHM_RND | maple_mm::SHM_REMAP
            }
        );
        assert_eq!(
            one("shmat(-1, NULL, 0) = -1 EINVAL (Invalid argument)"),
            Op::Shmat {
                shmid: -1,
                addr: 0,
                flags: 0
            }
        );
        assert_eq!(
            one("shmdt(0x7ffff7d7e000) = 0"),
            Op::Shmdt {
                addr: 0x7fff_f7d7_e000
            }
        );
        assert_eq!(
            one("mlock2(0x7ffff7fb8000, 4096, 0x2 /* MLOCK_??? */) = -1 EINVAL (Invalid argument)"),
            Op::Mlock {
                addr: 0x7fff_f7fb_8000,
                len: 4096,
                flags: 2
            }
        );
        assert_eq!(
            one("mlock2(0x7ffff7fbc000, 4096, MLOCK_ONFAULT) = 0"),
            Op::Mlock {
                addr: 0x7fff_f7fb_c000,
                len: 4096,
                flags: 1
            }
        );
        assert_eq!(
            one("munlock(0x7ffff7d96000, 8192) = 0"),
            Op::Munlock {
                addr: 0x7fff_f7d9_6000,
                len: 8192
            }
        );
        assert_eq!(
            one("mlockall(MCL_FUTURE|MCL_ONFAULT) = 0"),
            Op::Mlockall { flags: 6 }
        );
        assert_eq!(
            one("mlockall(0) = -1 EINVAL (Invalid argument)"),
            Op::Mlockall { flags: 0 }
        );
        assert_eq!(one("munlockall() = 0"), Op::Munlockall);
        assert_eq!(
            one("remap_file_pages(0x7ffff7d9d000, 8192, PROT_NONE, 4, MAP_FILE) = 0"),
            Op::RemapFilePages {
                addr: 0x7fff_f7d9_d000,
                size: 8192,
                prot: 0,
                pgoff: 4,
                flags: 0,
            }
        );
        let seal = Op::Mseal {
            addr: 0x7fff_f7da_6000,
            len: 8192,
            flags: 0,
        };
        assert_eq!(one("mseal(0x7ffff7da6000, 8192, 0) = 0"), seal);
        assert_eq!(
            one("syscall_0x1ce(0x7ffff7da6000, 0x2000, 0, 0, 0x64, 0) = 0"),
            seal
        );
    }

    #[test]
    fn a_clone_hands_its_stack_top_and_thread_block() {
        let clone3 = parse_trace(
            "t",
            1,
            "1.0 clone3({flags=CLONE_VM|CLONE_THREAD|CLONE_SETTLS, child_tid=0x7fffeffff990, stack=0x7fffefeff000, stack_size=0xfff80, tls=0x7fffeffff6c0} => {parent_tid=[4671]}, 88) = 4671\n",
        )
        .unwrap();
        assert_eq!(
            clone_written(&clone3[0]),
            vec![0x7fff_efff_ef7f, 0x7fff_efff_f6c0]
        );
        let clone = parse_trace(
            "t",
            1,
            "1.0 clone(child_stack=0x1f7d5a7c000, flags=CLONE_VM|CLONE_THREAD|CLONE_SETTLS, tls=0x1f7d5a90090) = 10040\n",
        )
        .unwrap();
        assert_eq!(clone_written(&clone[0]), vec![0x1f7d5a7bfff, 0x1f7d5a90090]);
        let fork = parse_trace(
            "t",
            1,
            "1.0 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7ffff7dd2a10) = 9\n",
        )
        .unwrap();
        assert!(clone_written(&fork[0]).is_empty());
    }

    #[test]
    fn a_deleted_files_descriptor_names_the_file() {
        assert_eq!(
            fd_path("3</memfd:blob>(deleted)").as_deref(),
            Some("/memfd:blob (deleted)")
        );
        assert_eq!(
            fd_path("3</usr/lib/libc.so.6>").as_deref(),
            Some("/usr/lib/libc.so.6")
        );
        assert_eq!(fd_path("-1"), None);
        assert_eq!(fd_path("99"), None, "not open: no path");
    }

    #[test]
    fn unknown_flag_is_an_error() {
        let c = parse_trace(
            "t",
            1,
            "1.0 mmap(NULL, 1, PROT_READ, MAP_BOGUS, -1, 0) = 0x1000\n",
        )
        .unwrap();
        assert!(decode(&c[0]).unwrap_err().contains("MAP_BOGUS"));
    }

    #[test]
    fn state_calls() {
        let c = parse_trace(
            "t",
            1,
            "1.0 openat(AT_FDCWD</w>, \"/a\", O_RDONLY|O_CLOEXEC) = 3</a>\n\
             1.1 open(\"/b\", O_RDWR|O_CREAT, 0644) = 4</b>\n\
             1.2 openat2(AT_FDCWD</w>, \"/c\", {flags=O_WRONLY, resolve=0}, 24) = 5</c>\n\
             1.3 creat(\"/d\", 0644) = 6</d>\n\
             1.4 mmap(NULL, 1, PROT_READ, MAP_SHARED, 3</a>, 0) = 0x1000\n",
        )
        .unwrap();
        assert_eq!(open_mode(&c[0]), Some((OpenMode::ReadOnly, true)));
        assert_eq!(open_mode(&c[1]), Some((OpenMode::ReadWrite, false)));
        assert_eq!(open_mode(&c[2]), Some((OpenMode::WriteOnly, false)));
        assert_eq!(open_mode(&c[3]), Some((OpenMode::WriteOnly, false)));
        assert_eq!(open_mode(&c[4]), None);
    }

    #[test]
    fn clone_flags() {
        let c = parse_trace(
            "t",
            1,
            "1.0 clone3({flags=CLONE_VM|CLONE_FS|CLONE_THREAD|CLONE_SYSVSEM, child_tid=0x1, stack=0x2, stack_size=0x3}, 88) = 5\n\
             1.1 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7) = 6\n\
             1.2 vfork() = 7\n",
        )
        .unwrap();
        assert_eq!(clone_kind(&c[0]), (true, true));
        assert_eq!(clone_kind(&c[1]), (false, false));
        assert_eq!(clone_kind(&c[2]), (true, false));
    }
}
