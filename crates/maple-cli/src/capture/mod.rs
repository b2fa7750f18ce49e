//! `maple capture --out DIR -- CMD ARGS...`: runs a command under strace with
//! address randomization off and writes a capture directory in the format
//! `maple replay` reads (see the `replay` module): one `trace.<tid>` file per
//! thread, `/proc/<tgid>/maps` and `VmFlags` snapshots taken while a task is
//! held at `execve` entry / exit or `exit_group` entry, `snapshots.tsv`,
//! `command` and `rc`.
//!
//! How: `setarch -R` turns randomization off (`ADDR_NO_RANDOMIZE`, inherited
//! by every child); strace's `inject=...:delay_enter/delay_exit` holds each
//! task 150 ms in those stops without changing any result; meanwhile the
//! [`watcher`] polls `/proc` and copies the layout. strace does not stop the
//! first `execve` of the command it starts, so the command is started through
//! `maple __capture-exec`, which only `execve`s its argument; the wrapper's own
//! snapshots are dropped. Nothing is injected into the traced program.

mod watcher;

use std::ffi::OsString;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The delay strace holds a task at each stop the watcher snapshots (µs).
pub const STOP_DELAY_US: u32 = 150_000;

/// The `PATH` of the clean environment the command runs in.
const CLEAN_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The hidden subcommand the wrapper runs as.
pub const EXEC_SUBCOMMAND: &str = "__capture-exec";

/// What `maple capture` needs.
pub struct CaptureArgs {
    /// The capture directory (created; must be empty or absent).
    pub out: PathBuf,
    /// The command and its arguments.
    pub command: Vec<OsString>,
    /// Also trace the calls that set state the memory calls depend on
    /// ([`STATE_CALLS`]), so that the replay knows it.
    pub state_calls: bool,
}

/// The system calls `--state-calls` adds to the trace. The format's own
/// trace set (memory and process calls) leaves out state that decides what
/// memory calls do: the open mode (`O_RDONLY`, `O_RDWR`, ...) of each
/// descriptor a mapping may use (the opens and `dup`s), and which
/// protection keys are allocated (`pkey_alloc`, `pkey_free`, which strace
/// does not count as memory calls), and the size of each System V segment
/// `shmat` attaches (`shmget`).
pub const STATE_CALLS: &str =
    "open,openat,openat2,creat,memfd_create,dup,dup2,dup3,close,pkey_alloc,pkey_free,shmget";

/// The wrapper: replaces itself with `argv[0]` (an absolute path) at once.
/// Returns only on failure.
pub fn exec_wrapper(args: &[OsString]) -> String {
    let Some((prog, rest)) = args.split_first() else {
        return format!("{EXEC_SUBCOMMAND}: no program given");
    };
    let err = Command::new(prog).args(rest).exec();
    format!(
        "{EXEC_SUBCOMMAND}: cannot execute {}: {err}",
        prog.to_string_lossy()
    )
}

/// Finds `prog` in the clean `PATH` (or takes it as a path if it has a `/`).
fn resolve(prog: &OsString) -> Result<PathBuf, String> {
    let p = Path::new(prog);
    if prog.to_string_lossy().contains('/') {
        return fs::canonicalize(p).map_err(|e| format!("{}: {e}", p.display()));
    }
    for dir in CLEAN_PATH.split(':') {
        let c = Path::new(dir).join(p);
        if c.is_file() {
            return Ok(c);
        }
    }
    Err(format!("{}: not found in PATH ({CLEAN_PATH})", p.display()))
}

/// Checks that strace runs; the message says how to install it if not.
pub fn strace_available() -> Result<(), String> {
    match Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("`strace -V` failed ({s})")),
        Err(e) => Err(format!(
            "strace is needed to capture ({e}). Install it: `apt-get install strace` \
             (Debian/Ubuntu), `dnf install strace` (Fedora) or `apk add strace` (Alpine)"
        )),
    }
}

/// Runs the capture; returns the command's exit status.
pub fn capture(a: &CaptureArgs) -> Result<i32, String> {
    if a.command.is_empty() {
        return Err("capture: no command given (maple capture --out DIR -- CMD ARGS...)".into());
    }
    strace_available()?;
    if a.out.exists() {
        let nonempty = fs::read_dir(&a.out)
            .map_err(|e| format!("{}: {e}", a.out.display()))?
            .next()
            .is_some();
        if nonempty {
            return Err(format!("{}: exists and is not empty", a.out.display()));
        }
    }
    fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let out = fs::canonicalize(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let prog = resolve(&a.command[0])?;
    let me = std::env::current_exe().map_err(|e| format!("cannot find maple's own path: {e}"))?;
    let cmdline: Vec<String> = a
        .command
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    fs::write(out.join("command"), format!("{}\n", cmdline.join(" ")))
        .map_err(|e| format!("{}: {e}", out.join("command").display()))?;

    let d = STOP_DELAY_US;
    let mut cmd = Command::new("setarch");
    cmd.arg("x86_64")
        .arg("-R")
        .arg("strace")
        .args(["-ff", "-ttt", "-y", "-s", "256", "--seccomp-bpf", "-o"])
        .arg(out.join("trace"))
        .arg("-e")
        .arg(if a.state_calls {
            format!("trace=%memory,%process,shmat,shmdt,prctl,{STATE_CALLS}")
        } else {
            "trace=%memory,%process,shmat,shmdt,prctl".to_string()
        })
        .arg("-e")
        .arg(format!(
            "inject=execve,execveat:delay_enter={d}:delay_exit={d}"
        ))
        .arg("-e")
        .arg(format!("inject=exit_group:delay_enter={d}"))
        .arg(&me)
        .arg(EXEC_SUBCOMMAND)
        .arg(&prog)
        .args(&a.command[1..])
        .env_clear()
        .env("PATH", CLEAN_PATH)
        .env(
            "HOME",
            std::env::var_os("HOME").unwrap_or_else(|| "/root".into()),
        )
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start `setarch -R strace`: {e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let w = watcher::Watcher::new(child.id(), out.clone(), me.clone());
    let stop2 = Arc::clone(&stop);
    let handle = std::thread::spawn(move || w.run(&stop2));
    let status = child.wait().map_err(|e| format!("waiting for strace: {e}"));
    stop.store(true, Ordering::Relaxed);
    let report = handle
        .join()
        .map_err(|_| "the watcher thread panicked".to_string())??;
    let status = status?;
    let rc = status.code().unwrap_or(128 + 9);
    fs::write(out.join("rc"), format!("rc={rc}\n"))
        .map_err(|e| format!("{}: {e}", out.join("rc").display()))?;
    let exits = count_exit_groups(&out);
    if exits > report.exits {
        eprintln!(
            "capture: warning: {exits} exit_group calls in the traces but {} exit snapshots: \
             the watcher missed a stop (a loaded machine?); capture again for a complete one",
            report.exits
        );
    }
    eprintln!(
        "capture: {} snapshots of {} processes in {}; rc={rc}",
        report.snapshots,
        report.processes,
        out.display()
    );
    Ok(rc)
}

/// How many `exit_group` calls the trace files hold (each should have an
/// `exit` snapshot).
fn count_exit_groups(dir: &Path) -> usize {
    let Ok(rd) = fs::read_dir(dir) else {
        return 0;
    };
    rd.filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("trace."))
        .filter_map(|e| fs::read_to_string(e.path()).ok())
        .map(|t| t.lines().filter(|l| l.contains(" exit_group(")).count())
        .sum()
}
