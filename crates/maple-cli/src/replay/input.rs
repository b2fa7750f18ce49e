//! Reading a capture directory: the trace files, `snapshots.tsv`, and the
//! snapshots themselves.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::decode::{decode, is_set_anon_name, Op};
use super::strace::{parse_time, parse_trace, Call, Micros, Ret};
use maple_mm::procmaps::{parse_maps, parse_vmflags, MapsLine, VmFlagsLine};
use maple_mm::{PKEY_DISABLE_ACCESS, PKEY_DISABLE_WRITE};

/// The phase of a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Right after a successful `execve`.
    ExecExit,
    /// At `execve` entry.
    ExecEntry,
    /// At `exit_group` entry.
    Exit,
}

impl Phase {
    fn parse(s: &str) -> Option<Phase> {
        match s {
            "execexit" => Some(Phase::ExecExit),
            "execentry" => Some(Phase::ExecEntry),
            "exit" => Some(Phase::Exit),
            _ => None,
        }
    }

    /// The name in file names.
    pub fn name(self) -> &'static str {
        match self {
            Phase::ExecExit => "execexit",
            Phase::ExecEntry => "execentry",
            Phase::Exit => "exit",
        }
    }
}

/// One row of `snapshots.tsv`.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// When it was taken.
    pub time: Micros,
    /// The process.
    pub tgid: u32,
    /// The stopped thread.
    pub tid: u32,
    /// Counts the snapshots of one tgid from 1.
    pub seq: u32,
    /// Its phase.
    pub phase: Phase,
    /// The executable (column 8), if given.
    pub exe: String,
}

impl Snapshot {
    /// `<tgid>.<seq>.<phase>`.
    pub fn name(&self) -> String {
        format!("{}.{}.{}", self.tgid, self.seq, self.phase.name())
    }
}

/// A capture directory, traces parsed.
pub struct Capture {
    /// The directory.
    pub dir: PathBuf,
    /// Every call of every thread, in the order of their timestamps.
    pub calls: Vec<Call>,
    /// The snapshots, in time order.
    pub snapshots: Vec<Snapshot>,
    /// The thread ids that have a trace file.
    pub tids: Vec<u32>,
    /// The command line.
    pub command: String,
    /// Whether the trace set had the state calls of `maple capture
    /// --state-calls` (`pkey_alloc`, the opens): then a key not seen
    /// allocated was not.
    pub traces_pkey_alloc: bool,
    /// Whether the traced kernel names anonymous VMAs
    /// (`CONFIG_ANON_VMA_NAME`): a `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)`
    /// succeeded, or a snapshot shows an `[anon:…]` / `[anon_shmem:…]`
    /// line. Otherwise (say the trace shows only `EINVAL`s) it does not.
    pub anon_vma_names: bool,
    /// Whether the traced machine has memory protection keys (x86 `pku`,
    /// enabled by the kernel: `ospke`): not when a `pkey_alloc` whose
    /// arguments are valid (no flags, rights within `PKEY_DISABLE_ACCESS |
    /// PKEY_DISABLE_WRITE`) failed with `EINVAL`, as `sys_pkey_alloc` does
    /// on a CPU without them; otherwise it has (the model's default).
    pub pkeys: bool,
}

/// The text of `p`, or of `p.gz` (gzip) when only that exists.
fn read(p: &Path) -> Result<String, String> {
    if p.exists() {
        return fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    }
    let gz = gz_path(p);
    if !gz.exists() {
        return Err(format!("{}: not found (nor {})", p.display(), gz.display()));
    }
    let f = fs::File::open(&gz).map_err(|e| format!("{}: {e}", gz.display()))?;
    let mut s = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut s)
        .map_err(|e| format!("{}: {e}", gz.display()))?;
    Ok(s)
}

fn gz_path(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".gz");
    PathBuf::from(s)
}

fn exists(p: &Path) -> bool {
    p.exists() || gz_path(p).exists()
}

impl Capture {
    /// Reads and parses the traces and `snapshots.tsv` of `dir`.
    pub fn open(dir: &Path) -> Result<Capture, String> {
        let rd = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut files = Vec::new();
        for e in rd {
            let e = e.map_err(|e| format!("{}: {e}", dir.display()))?;
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(t) = name
                .strip_prefix("trace.")
                .map(|t| t.strip_suffix(".gz").unwrap_or(t))
            {
                let tid: u32 = t.parse().map_err(|_| {
                    format!(
                        "{}: a trace file must be named trace.<tid>",
                        e.path().display()
                    )
                })?;
                files.push((tid, format!("trace.{tid}")));
            }
        }
        if files.is_empty() {
            return Err(format!(
                "{}: no trace.<tid> file (not a capture?)",
                dir.display()
            ));
        }
        files.sort();
        files.dedup();
        let mut calls = Vec::new();
        let mut tids = Vec::new();
        for (tid, name) in &files {
            let text = read(&dir.join(name))?;
            let path = dir.join(name).display().to_string();
            calls.extend(parse_trace(&path, *tid, &text)?);
            tids.push(*tid);
        }
        // Stable: equal timestamps keep file order, then line order.
        calls.sort_by_key(|c| c.time);
        let snapshots = read_snapshots(&dir.join("snapshots.tsv"))?;
        let command = fs::read_to_string(dir.join("command"))
            .unwrap_or_default()
            .trim()
            .to_string();
        let traces_pkey_alloc = calls.iter().any(|c| {
            matches!(
                c.name.as_str(),
                "pkey_alloc" | "pkey_free" | "open" | "openat" | "close"
            )
        });
        let mut cap = Capture {
            dir: dir.to_path_buf(),
            calls,
            snapshots,
            tids,
            command,
            traces_pkey_alloc,
            anon_vma_names: false,
            pkeys: true,
        };
        cap.anon_vma_names = cap.shows_anon_vma_names()?;
        cap.pkeys = !cap.shows_no_pkeys();
        Ok(cap)
    }

    /// See [`Capture::anon_vma_names`]. The snapshots are read only when
    /// the trace names VMAs and no call succeeded (the answer matters only
    /// to those calls).
    fn shows_anon_vma_names(&self) -> Result<bool, String> {
        let mut calls = self.calls.iter().filter(|c| is_set_anon_name(c));
        let Some(first) = calls.next() else {
            return Ok(false);
        };
        if std::iter::once(first)
            .chain(calls)
            .any(|c| c.ret == Ret::Val(0))
        {
            return Ok(true);
        }
        for s in &self.snapshots {
            let mp = self.dir.join(format!("maps.{}", s.name()));
            if !exists(&mp) {
                continue;
            }
            let text = read(&mp)?;
            if text.contains("[anon:") || text.contains("[anon_shmem:") {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// See [`Capture::pkeys`].
    fn shows_no_pkeys(&self) -> bool {
        self.calls.iter().any(|c| {
            c.name == "pkey_alloc"
                && c.ret == Ret::Err("EINVAL".into())
                && matches!(decode(c), Ok(Some(Op::PkeyAlloc { flags: 0, rights })) if rights & !(PKEY_DISABLE_ACCESS | PKEY_DISABLE_WRITE) == 0)
        })
    }

    /// The maps and vmflags of a snapshot (vmflags optional: absent file → None).
    pub fn snapshot_layout(
        &self,
        s: &Snapshot,
    ) -> Result<(Vec<MapsLine>, Option<Vec<VmFlagsLine>>), String> {
        let mp = self.dir.join(format!("maps.{}", s.name()));
        let maps = parse_maps(&read(&mp)?).map_err(|e| format!("{}:{}", mp.display(), e))?;
        let vp = self.dir.join(format!("vmflags.{}", s.name()));
        let vm = if exists(&vp) {
            Some(parse_vmflags(&read(&vp)?).map_err(|e| format!("{}:{}", vp.display(), e))?)
        } else {
            None
        };
        Ok((maps, vm))
    }
}

fn read_snapshots(p: &Path) -> Result<Vec<Snapshot>, String> {
    let text = read(p)?;
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", p.display(), i + 1);
        let c: Vec<&str> = l.split('\t').collect();
        if c.len() < 5 {
            return Err(format!(
                "{at}: want at least 5 tab-separated columns (time tgid tid seq phase ...)"
            ));
        }
        let num = |s: &str, what: &str| -> Result<u32, String> {
            s.parse().map_err(|_| format!("{at}: bad {what} {s:?}"))
        };
        out.push(Snapshot {
            time: parse_time(c[0]).ok_or_else(|| format!("{at}: bad time {:?}", c[0]))?,
            tgid: num(c[1], "tgid")?,
            tid: num(c[2], "tid")?,
            seq: num(c[3], "seq")?,
            phase: Phase::parse(c[4]).ok_or_else(|| format!("{at}: bad phase {:?}", c[4]))?,
            exe: c.get(7).unwrap_or(&"").to_string(),
        });
    }
    out.sort_by_key(|s| s.time);
    Ok(out)
}
