//! What the layout the kernel built at `execve` tells about the process's
//! configuration: its stack rlimit, through `mmap_base`, and whether it
//! runs in the legacy bottom-up layout.
//!
//! Linux sets `mmap_base` at `execve` from the stack rlimit
//! ([`Config::with_stack_rlimit`]) and then places the ELF interpreter (or,
//! without one, a position-independent program) and then the vDSO top-down
//! from it, so that run of mappings ends there. A capture does not record
//! the rlimit, but a limit over 127 MiB (`ulimit -s unlimited`, say) shows
//! in that end, and every later placement depends on it.

use maple_mm::procmaps::MapsLine;
use maple_mm::{Config, PMD_SIZE};

/// How far randomization moves `mmap_legacy_base` up on x86-64: 28 bits
/// of pages (`mmap_rnd_bits`).
const LEGACY_RANDOM: u64 = 1 << 40;

/// The configuration of a process whose `execve` built `lines`: the legacy
/// layout when the interpreter and the vDSO start at `mmap_legacy_base`
/// (taken from there, which randomization may have moved);
/// else the default, or the one of the stack rlimit that puts `mmap_base`
/// exactly at the end of the run of mappings from the vDSO up. An end no
/// rlimit gives keeps the default, and so does one less than 2 MiB below
/// the default `mmap_base`: a program mapped top-down with
/// transparent-huge-page alignment ends that far below it, which is far
/// likelier than a stack limit between 127 and 129 MiB.
pub fn exec_config(lines: &[MapsLine]) -> Config {
    let default = Config::default();
    if let Some(start) = bottom_up_start(lines) {
        // The legacy layout (`setarch -L`): placed bottom-up from there,
        // the base moved up by up to 1 TiB when randomized (`setarch -L`
        // without `-R` drops `ADDR_NO_RANDOMIZE`).
        let base = default.mmap_legacy_base;
        if (base..=base + LEGACY_RANDOM).contains(&start) {
            return Config {
                legacy_layout: true,
                mmap_legacy_base: start,
                ..default
            };
        }
    }
    let Some(top) = top_down_end(lines) else {
        return default;
    };
    if top + PMD_SIZE > default.mmap_base {
        return default;
    }
    let unlimited = Config::with_stack_rlimit(None);
    if unlimited.mmap_base == top {
        return unlimited;
    }
    let gap = default.task_size - top;
    match gap.checked_sub(default.stack_guard_gap) {
        Some(rlimit) => {
            let c = Config::with_stack_rlimit(Some(rlimit));
            if c.mmap_base == top {
                c
            } else {
                default
            }
        }
        None => default,
    }
}

/// The end of what `execve` placed top-down: the vDSO's pages (`[vvar]`,
/// `[vvar_vclock]`, `[vdso]`, mapped last) and the mappings right above
/// them without a hole, the ELF interpreter's (or the program's, when it
/// has none and is position independent). The program of an interpreter
/// sits elsewhere (at `ELF_ET_DYN_BASE`, or where it was linked), and may
/// be higher: with an unlimited stack `mmap_base` is about a sixth of the
/// address space up.
fn top_down_end(lines: &[MapsLine]) -> Option<u64> {
    let first = vdso_index(lines)?;
    let mut end = lines[first].end;
    for l in &lines[first + 1..] {
        if l.start != end || l.name == "[stack]" {
            break;
        }
        end = l.end;
    }
    Some(end)
}

/// The start of what `execve` placed bottom-up in the legacy layout: the
/// ELF interpreter's mappings right below the vDSO's pages without a hole
/// (in that layout the interpreter is placed first, at `mmap_legacy_base`,
/// and the vDSO right above it).
fn bottom_up_start(lines: &[MapsLine]) -> Option<u64> {
    let first = vdso_index(lines)?;
    let mut start = lines[first].start;
    for l in lines[..first].iter().rev() {
        if l.end != start {
            break;
        }
        start = l.start;
    }
    Some(start)
}

/// The first (lowest) of the vDSO's mappings.
fn vdso_index(lines: &[MapsLine]) -> Option<usize> {
    let special = ["[vvar]", "[vvar_vclock]", "[vdso]"];
    lines
        .iter()
        .position(|l| special.contains(&l.name.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use maple_mm::procmaps::parse_maps;

    /// The `execve` layout of a dynamically linked program whose ELF
    /// interpreter ends at `top`.
    fn layout(top: u64) -> Vec<MapsLine> {
        let ld = top - 0x35000;
        let mut lines = [
            "555555554000-555555558000 r--p 00000000 fe:00 1 /usr/bin/ls".to_string(),
            format!("{:x}-{ld:x} r-xp 00000000 00:00 0 [vdso]", ld - 0x2000),
            format!("{ld:x}-{top:x} r--p 00000000 fe:00 2 /usr/lib/ld-linux-x86-64.so.2"),
            "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]".to_string(),
            "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]".to_string(),
        ];
        // In address order (an unlimited stack puts the interpreter below
        // the program).
        lines.sort_by_key(|l| u64::from_str_radix(&l[..l.find('-').unwrap()], 16).unwrap());
        parse_maps(&(lines.join("\n") + "\n")).unwrap()
    }

    #[test]
    fn the_default_stack_limit_gives_the_default() {
        assert_eq!(exec_config(&layout(0x7fff_f7ff_f000)), Config::default());
    }

    #[test]
    fn larger_stack_limits_move_mmap_base() {
        // As captured with `ulimit -s` 256 MiB, 512 MiB, 4 GiB, unlimited.
        for (top, rlimit) in [
            (0x7fff_efef_f000, Some(256 << 20)),
            (0x7fff_dfef_f000, Some(512 << 20)),
            (0x7ffe_ffef_f000, Some(4 << 30)),
            (0x1555_5555_6000, None),
        ] {
            let c = exec_config(&layout(top));
            assert_eq!(c.mmap_base, top);
            assert_eq!(c, Config::with_stack_rlimit(rlimit));
        }
    }

    #[test]
    fn the_legacy_layout_shows_in_the_interpreter_at_its_base() {
        // As under `setarch -L -R`: the interpreter at TASK_SIZE / 3, the
        // vDSO right above it.
        let text =
            "2aaaaaaab000-2aaaaaae0000 r-xp 00000000 fe:00 2 /usr/lib/ld-linux-x86-64.so.2\n\
                    2aaaaaae0000-2aaaaaae4000 r--p 00000000 00:00 0 [vvar]\n\
                    2aaaaaae6000-2aaaaaae8000 r-xp 00000000 00:00 0 [vdso]\n\
                    555555554000-555555556000 r--p 00000000 fe:00 1 /usr/bin/x\n\
                    7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n";
        let c = exec_config(&parse_maps(text).unwrap());
        assert!(c.legacy_layout);
        assert_eq!(c.mmap_legacy_base, 0x2aaa_aaaa_b000);
        assert_eq!(c.mmap_base, Config::default().mmap_base);
        // Randomized: the base is where the interpreter is.
        let moved = text.replace("2aaaaaa", "2afac69");
        let c = exec_config(&parse_maps(&moved).unwrap());
        assert!(c.legacy_layout);
        assert_eq!(c.mmap_legacy_base, 0x2afa_c69a_b000);
        assert!(!exec_config(&layout(0x7fff_f7ff_f000)).legacy_layout);
    }

    #[test]
    fn other_ends_keep_the_default() {
        // Less than 2 MiB below the default base (a program aligned lower).
        assert_eq!(exec_config(&layout(0x7fff_f7e0_0000)), Config::default());
        // Above the base where no finite limit puts it, below the unlimited one.
        assert_eq!(exec_config(&layout(0x1000_0000_0000)), Config::default());
        assert_eq!(exec_config(&[]), Config::default());
    }
}
