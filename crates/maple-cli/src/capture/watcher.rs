//! The watcher of `maple capture`: polls the tasks strace traces and copies
//! `/proc/<tgid>/maps` and the `VmFlags` of `/proc/<tgid>/smaps` while a task
//! is held at `execve` / `execveat` entry or exit, or at `exit_group` entry.
//!
//! A task is in such a stop when `/proc/<tgid>/task/<tid>/stat` shows state
//! `t` (tracing stop) and `/proc/<tgid>/task/<tid>/syscall` starts with 59,
//! 322 or 231. At the exit of a successful `execve` the kernel has zeroed the
//! argument registers, so a line whose first three arguments are 0 is the
//! `execexit` stop; the exit stop of a failed `execve` shows the entry's line
//! again and is not snapshotted (only its entry is).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How often the tasks are polled.
const POLL: Duration = Duration::from_micros(250);
/// How often every process is checked for `TracerPid` (orphans that left the
/// strace process tree).
const FULL_SCAN: Duration = Duration::from_millis(20);

/// What the watcher did.
pub struct Report {
    /// Snapshots written.
    pub snapshots: usize,
    /// Distinct processes snapshotted.
    pub processes: usize,
    /// `exit` snapshots among them.
    pub exits: usize,
}

/// Per task: the stop it was last seen in (its `syscall` line), and the line
/// of an `execve` entry whose exit has not been seen yet.
#[derive(Default)]
struct TaskState {
    in_stop: Option<String>,
    pending_exec: Option<String>,
}

pub struct Watcher {
    strace: u32,
    out: PathBuf,
    wrapper: PathBuf,
    tasks: HashMap<u32, TaskState>,
    seq: HashMap<u32, u32>,
    rows: String,
    snapshots: usize,
    exits: usize,
    orphans: HashSet<u32>,
}

fn read(p: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(p).ok()
}

/// `(state, ppid)` of `/proc/.../stat` (the command may contain spaces and
/// parentheses: the fields start after the last `)`).
fn stat_fields(stat: &str) -> Option<(char, u32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut it = rest.split_whitespace();
    let state = it.next()?.chars().next()?;
    let ppid = it.next()?.parse().ok()?;
    Some((state, ppid))
}

fn numeric_dirs(dir: &str) -> Vec<u32> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

fn tracer_pid(pid: u32) -> Option<u32> {
    let s = read(format!("/proc/{pid}/status"))?;
    s.lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))?
        .trim()
        .parse()
        .ok()
}

impl Watcher {
    pub fn new(strace: u32, out: PathBuf, wrapper: PathBuf) -> Watcher {
        Watcher {
            strace,
            out,
            wrapper,
            tasks: HashMap::new(),
            seq: HashMap::new(),
            rows: String::new(),
            snapshots: 0,
            exits: 0,
            orphans: HashSet::new(),
        }
    }

    /// Polls until `stop` is set, then writes `snapshots.tsv`.
    pub fn run(mut self, stop: &AtomicBool) -> Result<Report, String> {
        let mut last_full = Instant::now() - FULL_SCAN;
        while !stop.load(Ordering::Relaxed) {
            let full = last_full.elapsed() >= FULL_SCAN;
            if full {
                last_full = Instant::now();
            }
            for tgid in self.tracees(full) {
                self.poll_process(tgid)?;
            }
            std::thread::sleep(POLL);
        }
        let path = self.out.join("snapshots.tsv");
        fs::write(&path, &self.rows).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Report {
            snapshots: self.snapshots,
            processes: self.seq.len(),
            exits: self.exits,
        })
    }

    /// The processes under strace: its descendants, plus (checked every
    /// [`FULL_SCAN`]) processes it traces that were reparented elsewhere.
    fn tracees(&mut self, full: bool) -> Vec<u32> {
        let pids = numeric_dirs("/proc");
        let mut parent = HashMap::with_capacity(pids.len());
        for &p in &pids {
            if let Some((_, ppid)) = read(format!("/proc/{p}/stat"))
                .as_deref()
                .and_then(stat_fields)
            {
                parent.insert(p, ppid);
            }
        }
        let mut out = Vec::new();
        for &p in &pids {
            let mut q = p;
            let mut depth = 0;
            let below = loop {
                match parent.get(&q) {
                    Some(&pp) if pp == self.strace => break true,
                    Some(&pp) if pp > 1 && depth < 64 => {
                        q = pp;
                        depth += 1;
                    }
                    _ => break false,
                }
            };
            let tracee = (below && p != self.strace)
                || self.orphans.contains(&p)
                || (full && p != self.strace && tracer_pid(p) == Some(self.strace) && {
                    self.orphans.insert(p);
                    true
                });
            if tracee {
                out.push(p);
            }
        }
        self.orphans.retain(|p| parent.contains_key(p));
        out
    }

    fn poll_process(&mut self, tgid: u32) -> Result<(), String> {
        for tid in numeric_dirs(&format!("/proc/{tgid}/task")) {
            let base = format!("/proc/{tgid}/task/{tid}");
            let Some((state, _)) = read(format!("{base}/stat"))
                .as_deref()
                .and_then(stat_fields)
            else {
                continue;
            };
            let line = if state == 't' {
                read(format!("{base}/syscall")).map(|s| s.trim().to_string())
            } else {
                None
            };
            let nr = line
                .as_deref()
                .and_then(|l| l.split_whitespace().next())
                .and_then(|n| n.parse::<i64>().ok());
            let line = match (line, nr) {
                (Some(l), Some(59 | 322 | 231)) => l,
                _ => {
                    self.tasks.entry(tid).or_default().in_stop = None;
                    continue;
                }
            };
            let st = self.tasks.entry(tid).or_default();
            if st.in_stop.as_deref() == Some(line.as_str()) {
                continue; // the same stop, already handled
            }
            st.in_stop = Some(line.clone());
            let phase = if nr == Some(231) {
                st.pending_exec = None;
                "exit"
            } else if args_zero(&line) {
                st.pending_exec = None;
                "execexit"
            } else if st.pending_exec.as_deref() == Some(line.as_str()) {
                // The exit stop of a failed execve: same registers as its entry.
                st.pending_exec = None;
                continue;
            } else {
                st.pending_exec = Some(line.clone());
                "execentry"
            };
            self.snapshot(tgid, tid, phase, &line)?;
        }
        Ok(())
    }

    fn snapshot(&mut self, tgid: u32, tid: u32, phase: &str, line: &str) -> Result<(), String> {
        let time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|e| e.to_string())?;
        let exe = fs::read_link(format!("/proc/{tgid}/exe")).unwrap_or_default();
        let raw_cmdline = read(format!("/proc/{tgid}/cmdline")).unwrap_or_default();
        let mut argv = raw_cmdline.split('\0');
        let arg1 = argv.nth(1).unwrap_or("");
        if exe == self.wrapper && arg1 == super::EXEC_SUBCOMMAND {
            return Ok(()); // the wrapper's own layout (maple may be the traced program too)
        }
        // strace's own child, stopped at the execve of the wrapper (strace
        // does not always let it through unstopped): still strace's image.
        let strace_exe = fs::read_link(format!("/proc/{}/exe", self.strace)).ok();
        if strace_exe.is_some_and(|s| s == exe) {
            return Ok(());
        }
        let (Some(maps), Some(smaps)) = (
            read(format!("/proc/{tgid}/maps")),
            read(format!("/proc/{tgid}/smaps")),
        ) else {
            return Ok(()); // gone meanwhile
        };
        let vmflags = vmflags_of_smaps(&smaps);
        let seq = self.seq.entry(tgid).or_insert(0);
        *seq += 1;
        let name = format!("{tgid}.{seq}.{phase}");
        let write = |f: String, s: &str| -> Result<(), String> {
            let p = self.out.join(f);
            fs::write(&p, s).map_err(|e| format!("{}: {e}", p.display()))
        };
        write(format!("maps.{name}"), &maps)?;
        // smaps of a large process can take longer to read than the stop
        // lasts: a truncated copy is left out (the replay then assumes flags).
        if vmflags.lines().count() == maps.lines().count() {
            write(format!("vmflags.{name}"), &vmflags)?;
        } else {
            eprintln!(
                "capture: {name}: the process left its stop while smaps was read; no vmflags.{name}"
            );
        }
        let cmdline = raw_cmdline
            .trim_end_matches('\0')
            .replace(['\0', '\t', '\n'], " ");
        let _ = writeln!(
            self.rows,
            "{}.{:06}\t{tgid}\t{tid}\t{seq}\t{phase}\t{}\t{line}\t{}\t{cmdline}",
            time.as_secs(),
            time.subsec_micros(),
            maps.lines().count(),
            exe.display()
        );
        self.snapshots += 1;
        self.exits += (phase == "exit") as usize;
        Ok(())
    }
}

/// Whether the first three arguments of a `/proc/.../syscall` line are 0.
fn args_zero(line: &str) -> bool {
    let args: Vec<&str> = line.split_whitespace().skip(1).take(3).collect();
    args.len() == 3 && args.iter().all(|a| *a == "0x0")
}

/// `start-end words` for every VMA of an smaps text.
pub fn vmflags_of_smaps(smaps: &str) -> String {
    let mut out = String::new();
    let mut range = None;
    for l in smaps.lines() {
        if let Some(words) = l.strip_prefix("VmFlags:") {
            if let Some(r) = range.take() {
                let _ = writeln!(out, "{r} {}", words.trim());
            }
        } else if let Some(first) = l.split_whitespace().next() {
            if first.contains('-') && !first.ends_with(':') {
                range = Some(first.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_command() {
        let s = "123 (a) b (c)) t 77 123 123 0 -1";
        assert_eq!(stat_fields(s), Some(('t', 77)));
    }

    #[test]
    fn exec_exit_has_zero_args() {
        assert!(args_zero("59 0x0 0x0 0x0 0x0 0x0 0x0 0x7ffe 0x7f"));
        assert!(!args_zero(
            "59 0x5555 0x7ffe 0x7ffe 0x0 0x0 0x0 0x7ffe 0x7f"
        ));
    }

    #[test]
    fn smaps_vmflags() {
        let s = "00400000-00401000 r-xp 00000000 08:01 5 /bin/x\nSize: 4 kB\nVmFlags: rd ex mr mw me \n\
                 7ffff000-7ffff100 rw-p 00000000 00:00 0 \nRss: 0 kB\nVmFlags: rd wr mr mw me ac \n";
        assert_eq!(
            vmflags_of_smaps(s),
            "00400000-00401000 rd ex mr mw me\n7ffff000-7ffff100 rd wr mr mw me ac\n"
        );
    }
}
