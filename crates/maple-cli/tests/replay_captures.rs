//! Replays every capture committed under `captures/` with `maple replay` and
//! checks its figures (no strace needed: the captures are files). The
//! figures are what the model achieved when the captures were taken; a
//! change to maple-mm that loses one fails here, one that gains one must
//! update the table (and README.md's).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Per capture: processes, calls, placements, placement hits, result
/// mismatches, calls not expressible, snapshots compared, snapshots with
/// equal pages, final layouts, final layouts with exact boundaries.
const FIGURES: [(&str, [usize; 10]); 50] = [
    ("awk", [1, 31, 8, 8, 0, 0, 1, 1, 1, 1]),
    // cargo and two rustc probes (rustc -vV and the target query), the
    // second racing twice: a new thread's stack mmap served before a
    // munmap of another thread that entered first, and one served after a
    // munmap that entered later (--offline: cargo then fails, rc 101).
    ("cargo_metadata", [4, 417, 94, 94, 0, 0, 8, 8, 4, 4]),
    // Chromium (--headless --dump-dom, --state-calls; 30 processes): its
    // allocator commits reserved memory by mprotect before forking
    // renderers (whose later commits beside it do not merge), a thread's
    // mmap served after another's mremap moved a mapping away, four
    // processes killed while held at a stop (empty snapshots), and one
    // munmap without a result (killed mid-call).
    (
        "chromium_headless",
        [30, 9455, 1653, 1653, 0, 1, 44, 44, 27, 27],
    ),
    ("churn12k", [1, 11951, 4004, 4004, 0, 0, 1, 1, 1, 1]),
    // Go 1.24's getrandom state: mmap(MAP_DROPPABLE), which strace 6.1
    // prints as `0x8 /* MAP_??? */`.
    ("docker_version", [1, 59, 33, 33, 0, 0, 1, 1, 1, 1]),
    // Erlang's BEAM (5 processes): its JIT maps one memfd twice,
    // executable and then writable, so the descriptor is read-write.
    ("erlang", [5, 941, 141, 141, 0, 0, 11, 11, 5, 5]),
    // 26 children fork and exit right after a failing call: their exit
    // snapshots are the layouts after each failure. Captured with
    // --state-calls: the replay knows /etc/hostname was opened read-only, so
    // its MAP_SHARED|PROT_WRITE mmap is EACCES as in the kernel.
    ("errors", [27, 46, 6, 6, 0, 0, 27, 27, 27, 27]),
    ("find_xargs", [6, 174, 94, 94, 0, 0, 13, 13, 5, 5]),
    ("forker", [5, 196, 101, 101, 0, 0, 5, 5, 5, 5]),
    ("gcc", [3, 146, 49, 49, 0, 0, 8, 8, 3, 3]),
    // gdb reading /bin/true's symbols, and the iconv it runs: the loader's
    // small allocations fill the hole above libpython's .bss before the
    // library is relocated, and merge with it (not yet written).
    ("gdb_batch", [2, 409, 105, 105, 0, 0, 6, 6, 2, 2]),
    // git add, commit, log and gc in a fresh repository (14 processes).
    ("git_commit", [14, 837, 235, 235, 0, 0, 27, 27, 14, 14]),
    // The Go runtime: heap arenas mapped, then merged by madvise before
    // their first write (the replay's deferred first writes).
    ("go_version", [1, 27, 17, 17, 0, 0, 1, 1, 1, 1]),
    // A JVM dumping a class-data archive: its threads' stacks are handed to
    // them (clone3) before they map guard pages over the stacks' bottoms.
    ("java_cds_dump", [1, 8673, 86, 86, 0, 0, 1, 1, 1, 1]),
    // A JVM with the parallel collector and three GC threads.
    ("java_parallel", [1, 365, 90, 90, 0, 0, 1, 1, 1, 1]),
    // A JVM: memory committed page by page into reservations (MAP_FIXED
    // over PROT_NONE) is written after the run of commits; its thread
    // stacks' guards are set up by the stack's own thread.
    ("java_version", [1, 875, 86, 86, 0, 0, 1, 1, 1, 1]),
    // A JVM with ZGC: its heap is a memfd mapped several times.
    ("java_zgc", [1, 440, 89, 89, 0, 0, 1, 1, 1, 1]),
    // javac, then a JVM running 3 threads: heap, card table and bitmaps
    // committed page by page into reservations.
    ("javac_threads", [3, 2041, 198, 198, 0, 0, 5, 5, 3, 3]),
    ("ls", [1, 39, 19, 19, 0, 0, 1, 1, 1, 1]),
    // ls exec'd by sh after `ulimit -s unlimited`: its mmap_base is about a
    // sixth of the address space up, which the replay reads from the
    // layout execve built (sh's is the default).
    // ls exec'd by `setarch -L -R`: the legacy layout, placements
    // bottom-up from TASK_SIZE / 3 (seen in where execve put the
    // interpreter); setarch's own part is the default layout.
    ("ls_legacy_layout", [1, 67, 36, 36, 0, 0, 5, 5, 1, 1]),
    ("ls_unlimited_stack", [1, 54, 23, 23, 0, 0, 5, 5, 1, 1]),
    ("madvise_heavy", [1, 150, 6, 6, 0, 0, 1, 1, 1, 1]),
    // MAP_32BIT: bottom-up from 1 GiB, hints inside and outside the window,
    // ENOMEM when nothing fits below 2 GiB; MAP_SHARED_VALIDATE refused for
    // anonymous memory.
    ("map_32bit", [1, 28, 13, 13, 0, 0, 1, 1, 1, 1]),
    // Up to vm.max_map_count (65530): 65,509 mappings, then the calls that
    // need one more VMA fail with ENOMEM (trace and final maps gzipped).
    ("mapcount", [1, 65529, 65513, 65513, 0, 0, 1, 1, 1, 1]),
    // System V shared memory (shmat: the segment's size, from shmget, is
    // not in the trace: it is taken from the exit snapshot) and
    // mlock/munlock/mlockall/munlockall (splits merged back). The memfd
    // mapped shared writable is known to be open read-write, so a later
    // read-only shared mapping of it may be mprotected writable.
    ("memfd_shm_mlock", [3, 74, 22, 22, 0, 0, 4, 4, 3, 3]),
    // An mremap(MREMAP_DONTUNMAP) without a fifth argument: the kernel saw
    // a garbage new_addr (EINVAL); strace does not print it, so the call is
    // not expressible (and skipped, as the kernel left the layout alone).
    ("mremap_heavy", [1, 64, 26, 26, 0, 1, 1, 1, 1, 1]),
    ("node", [1, 693, 85, 85, 0, 0, 1, 1, 1, 1]),
    // Node allocating Buffers and a large typed array: two threads' 128 MiB
    // arena reservations entered 0.1 ms apart and the model placed both
    // elsewhere than the kernel (a race), then one later mapping of the
    // main thread.
    ("node_buffers", [1, 342, 91, 88, 0, 0, 1, 1, 1, 1]),
    // Two worker threads whose malloc arenas race for the same hint: the
    // kernel served one thread's mmap before the other's that entered
    // first, and the replay follows the kernel's order.
    ("node_workers", [1, 2606, 278, 278, 0, 0, 1, 1, 1, 1]),
    // Node on a CPU without protection keys: its pkey_alloc fails with
    // EINVAL, which tells the replay the machine has none.
    ("npm_version", [1, 353, 89, 89, 0, 0, 5, 5, 1, 1]),
    // perf linked with libperl: the loader maps into the hole above
    // libperl's .bss after the program's RELRO mprotect and before its own,
    // and the kernel merges that mapping with the .bss, not yet written.
    // pbzip2 on two threads: one thread's glibc arena (a 128 MiB mmap, then
    // its trimming munmap) served before another thread's mmap that
    // entered first, and a third call of that race already applied when
    // the search meets it again.
    ("pbzip2", [1, 130, 31, 31, 0, 0, 1, 1, 1, 1]),
    ("perf_version", [1, 157, 36, 36, 0, 0, 1, 1, 1, 1]),
    ("perl", [1, 66, 25, 25, 0, 0, 1, 1, 1, 1]),
    // Protection keys, MADV_COLLAPSE, guard regions (--state-calls). The
    // write between the two MADV_COLLAPSEs of one block is not in the trace:
    // the kernel's success of the second shows it (the replay makes it).
    ("pkeys_guard", [2, 56, 11, 11, 0, 0, 2, 2, 2, 2]),
    ("py_multiprocessing", [3, 140, 44, 44, 0, 0, 3, 3, 3, 3]),
    ("python3", [1, 53, 15, 15, 0, 0, 1, 1, 1, 1]),
    ("python3_threads", [2, 105, 32, 32, 0, 0, 6, 6, 2, 2]),
    // R's mclapply (17 processes): OpenBLAS mbinds its buffers, and a
    // mapping made just below one stays apart from it.
    ("r_mclapply", [17, 870, 222, 222, 0, 0, 29, 29, 17, 17]),
    // Ruby's fiber stacks: one mapping, each stack's guard page made after
    // the stack below it was put to use (all but the first keep
    // VM_ACCOUNT).
    ("ruby", [1, 1352, 497, 497, 0, 0, 1, 1, 1, 1]),
    // Ruby's YJIT maps its code region PROT_READ | PROT_EXEC, makes it
    // writable to emit code (now written: it keeps VM_ACCOUNT), then
    // toggles pages between writable and executable.
    ("ruby_yjit", [1, 6211, 965, 965, 0, 0, 1, 1, 1, 1]),
    ("rust_maple", [1, 28, 7, 7, 0, 0, 1, 1, 1, 1]),
    // A tokio runtime of 4 workers and blocking threads: two threads'
    // mmaps waited while a third made nine; the one the kernel served
    // first took the top of the free range.
    ("rust_tokio", [1, 2364, 470, 470, 0, 0, 1, 1, 1, 1]),
    // rustup's proxy, then rustc (threads, gcc as the linker): the proxy's
    // stack grew by faults before its execve (taken from the snapshot), and
    // two threads' mmaps raced (replayed in the kernel's order).
    ("rustc_hello", [6, 908, 182, 182, 0, 0, 19, 19, 6, 6]),
    ("sh_pipeline", [4, 112, 58, 58, 0, 0, 7, 7, 4, 4]),
    // A file mapped MAP_SHARED and moved by mremap, dlopen/dlclose.
    ("shared_mremap_dlopen", [1, 42, 13, 13, 0, 0, 1, 1, 1, 1]),
    // shmat/shmdt without shmget in the trace (each segment's size from a
    // later snapshot), their errors, mlock/mlock2/munlock (one over a hole),
    // mlockall(MCL_FUTURE); a child's exit snapshot after each step.
    ("shm_mlock", [9, 43, 10, 10, 0, 0, 9, 9, 9, 9]),
    ("sqlite3", [1, 64, 15, 15, 0, 0, 1, 1, 1, 1]),
    ("static_hello", [1, 7, 1, 1, 0, 0, 1, 1, 1, 1]),
    // tar | xz -T2 (xz's threads), tar czf (gzip child).
    ("tar_xz", [7, 228, 105, 105, 0, 0, 13, 13, 7, 7]),
    ("threads", [1, 43, 12, 12, 0, 0, 1, 1, 1, 1]),
];

const KEYS: [&str; 10] = [
    "processes",
    "calls",
    "placements",
    "placement_hits",
    "result_mismatches",
    "not_modelled",
    "snapshots",
    "snapshots_pages_equal",
    "final_layouts",
    "final_boundaries_exact",
];

fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../captures")
}

fn maple(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_maple"))
        .args(args)
        .output()
        .expect("maple runs")
}

/// The program's and the stack's lines in a hand-made capture's layouts.
const PROG: &str =
    "555555554000-555555555000 r-xp 00000000 08:01 7                          /bin/x\n";
const STACK: &str =
    "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]\n";

/// A capture written by hand into a fresh temporary directory (removed when
/// dropped), for the replay rules no real capture shows on its own.
struct HandMade {
    dir: PathBuf,
}

impl HandMade {
    fn new(tag: &str) -> HandMade {
        let dir = std::env::temp_dir().join(format!("maple-replay-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        HandMade { dir }
    }

    fn file(&self, name: &str, text: &str) {
        std::fs::write(self.dir.join(name), text).unwrap();
    }

    /// Process 100's two layouts: [`PROG`] and [`STACK`] after its
    /// `execve` (at 1.1 s), and with `maps` between them at its exit (at
    /// `exit_time`).
    fn layouts(&self, exit_time: &str, maps: &str) {
        self.file("maps.100.1.execexit", &format!("{PROG}{STACK}"));
        self.file("maps.100.2.exit", &format!("{PROG}{maps}{STACK}"));
        self.file(
            "snapshots.tsv",
            &format!("1.100000\t100\t100\t1\texecexit\n{exit_time}\t100\t100\t2\texit\n"),
        );
    }

    /// `maple replay DIR --out DIR/out`: its stdout, after checking that it
    /// succeeded.
    fn replay(&self) -> String {
        self.replay_with(&[])
    }

    /// [`replay`](Self::replay) with more arguments.
    fn replay_with(&self, more: &[&str]) -> String {
        let out = self.out();
        let mut args = vec![
            "replay".as_ref(),
            self.dir.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ];
        args.extend(more.iter().map(std::ffi::OsStr::new));
        let o = maple(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// A file the replay wrote.
    fn output(&self, name: &str) -> String {
        std::fs::read_to_string(self.out().join(name)).unwrap()
    }

    fn out(&self) -> PathBuf {
        self.dir.join("out")
    }
}

impl Drop for HandMade {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn every_committed_capture_is_in_the_table() {
    let mut dirs: Vec<String> = std::fs::read_dir(captures())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("snapshots.tsv").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let table: Vec<&str> = FIGURES.iter().map(|(n, _)| *n).collect();
    assert_eq!(dirs, table);
}

#[test]
fn replays_reproduce_the_figures() {
    let tmp = std::env::temp_dir().join(format!("maple-replay-test-{}", std::process::id()));
    for (name, want) in FIGURES {
        let dir = captures().join(name);
        let out = tmp.join(name);
        let o = maple(&[
            "replay".as_ref(),
            dir.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
            "--svg".as_ref(),
            out.join("final.svg").as_os_str(),
        ]);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let summary = stdout
            .lines()
            .find_map(|l| l.strip_prefix("summary: "))
            .unwrap_or_else(|| panic!("{name}: no summary line"));
        let get = |k: &str| -> usize {
            summary
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name}: no {k} in {summary}"))
        };
        let got: Vec<usize> = KEYS.iter().map(|k| get(k)).collect();
        assert_eq!(got, want, "{name}: {KEYS:?}\n{stdout}");
        assert_eq!(get("unreplayed"), 0, "{name}");
        // Every committed capture's VMAs have the kernel's VmFlags.
        assert_eq!(get("vmflags_diffs"), 0, "{name}\n{stdout}");
        // placements.tsv: one line per placement; a model snapshot per compared one.
        let tsv = std::fs::read_to_string(out.join("placements.tsv")).unwrap();
        assert_eq!(tsv.lines().count(), want[2], "{name}: placements.tsv");
        for l in tsv.lines() {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c.len(), 6, "{name}: {l}");
            assert!(c[4].starts_with("0x") && c[5].starts_with("0x"), "{l}");
        }
        let maps = std::fs::read_dir(&out)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("maps.")
            })
            .count();
        assert_eq!(maps, want[6], "{name}: OUT/maps.* files");
        let svg = std::fs::read_to_string(out.join("final.svg")).unwrap();
        assert!(svg.starts_with("<svg"), "{name}");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_broken_capture_is_an_error_naming_file_and_line() {
    let tmp = std::env::temp_dir().join(format!("maple-replay-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(
        tmp.join("trace.100"),
        "1.000001 brk(NULL) = 0x555555559000\n1.000002 mmap(NULL, 4096, PROT_READ, MAP_WHAT, -1, 0) = 0x1000\n",
    )
    .unwrap();
    std::fs::write(tmp.join("snapshots.tsv"), "").unwrap();
    let o = maple(&["replay".as_ref(), tmp.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("trace.100:2") && err.contains("MAP_WHAT"),
        "{err}"
    );

    std::fs::write(tmp.join("trace.100"), "1.0 brk(NULL) = 0x1000\n").unwrap();
    std::fs::write(tmp.join("snapshots.tsv"), "1.5\t100\t100\t1\texecexit\n").unwrap();
    std::fs::write(
        tmp.join("maps.100.1.execexit"),
        "00400000-00401000 r-xp 0 08:01 1 /x\nnonsense\n",
    )
    .unwrap();
    // The snapshot is read when an execve asks for it: give it one.
    std::fs::write(
        tmp.join("trace.100"),
        "1.0 execve(\"/x\", [\"x\"], 0x1 /* 0 vars */) = 0\n2.0 brk(NULL) = 0x1000\n",
    )
    .unwrap();
    let o = maple(&["replay".as_ref(), tmp.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("maps.100.1.execexit:line 2"), "{err}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A hand-made capture: two threads racing for `mmap` (the main thread's
/// call `<unfinished ...>` while the other's completes first), a vfork child
/// sharing the space until its failed and then successful `execve`.
#[test]
fn threads_unfinished_calls_and_vfork() {
    let cap = HandMade::new("threads");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 brk(NULL) = 0x555555556000\n\
         3.000000 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, stack=0x1, stack_size=0x2}, 88) = 101\n\
         4.000000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0 <unfinished ...>\n\
         4.500000 <... mmap resumed>) = 0x7ffff7ffd000\n\
         5.000000 vfork() = 102\n\
         6.000000 exit_group(0) = ?\n\
         6.500000 +++ exited with 0 +++\n",
    );
    cap.file(
        "trace.101",
        "4.200000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffe000\n\
         4.300000 munmap(0x1001, 4096) = -1 EINVAL (Invalid argument)\n\
         5.900000 +++ exited with 0 +++\n",
    );
    cap.file(
        "trace.102",
        "5.100000 execve(\"/usr/local/bin/y\", [\"y\"], 0x7ffe /* 1 var */) = -1 ENOENT (No such file or directory) (DELAYED)\n\
         5.300000 execve(\"/bin/y\", [\"y\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         5.700000 exit_group(0) = ?\n",
    );
    let both = "7ffff7ffd000-7ffff7fff000 rw-p 00000000 00:00 0 \n";
    cap.file("maps.100.1.execexit", &format!("{PROG}{STACK}"));
    cap.file("maps.100.2.exit", &format!("{PROG}{both}{STACK}"));
    cap.file("maps.102.1.execentry", &format!("{PROG}{both}{STACK}"));
    cap.file(
        "maps.102.2.execexit",
        &format!("{}{STACK}", PROG.replace("/bin/x", "/bin/y")),
    );
    cap.file(
        "maps.102.3.exit",
        &format!("{}{STACK}", PROG.replace("/bin/x", "/bin/y")),
    );
    cap.file(
        "snapshots.tsv",
        "1.100000\t100\t100\t1\texecexit\n\
         5.150000\t102\t102\t1\texecentry\n\
         5.400000\t102\t102\t2\texecexit\n\
         5.750000\t102\t102\t3\texit\n\
         6.100000\t100\t100\t2\texit\n",
    );
    let stdout = cap.replay();
    // Replayed in entry order, the main thread's mmap is placed first, at the
    // top: a miss (the threads raced), moved to the kernel's address; the
    // other thread's then lands where the kernel put it.
    let tsv = cap.output("placements.tsv");
    assert_eq!(
        tsv,
        "100\t100\t4.000000\tmmap\t0x7ffff7ffd000\t0x7ffff7ffe000\n\
         100\t101\t4.200000\tmmap\t0x7ffff7ffe000\t0x7ffff7ffe000\n"
    );
    assert!(
        stdout.contains("summary: processes=2 calls=4 placements=2 placement_hits=1 "),
        "{stdout}"
    );
    assert!(stdout.contains("result_mismatches=0 "), "{stdout}");
    // The vfork child's execentry is the parent's layout; both exits are exact.
    assert!(
        stdout.contains(
            "snapshots=3 snapshots_pages_equal=3 final_layouts=2 final_boundaries_exact=2"
        ),
        "{stdout}"
    );
    assert_eq!(
        cap.output("maps.102.1.execentry"),
        format!("{PROG}{both}{STACK}")
    );
}

/// A hand-made capture: the main thread's `mmap` entered first but was
/// served after three `mmap`s of another thread (it was preempted before
/// taking `mmap_lock`): each time the model's placement of the main
/// thread's call lands where the kernel put one of the other thread's, that
/// call goes first, with the calls its thread made before it.
#[test]
fn a_call_served_after_several_of_another_thread() {
    let cap = HandMade::new("served_after");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, stack=0x1, stack_size=0x2}, 88) = 101\n\
         3.000000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffb000\n\
         4.000000 exit_group(0) = ?\n\
         4.500000 +++ exited with 0 +++\n",
    );
    cap.file(
        "trace.101",
        "3.000100 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffe000\n\
         3.000200 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffd000\n\
         3.000300 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffc000\n\
         3.900000 +++ exited with 0 +++\n",
    );
    let four = "7ffff7ffb000-7ffff7fff000 rw-p 00000000 00:00 0 \n";
    cap.layouts("3.950000", four);
    let stdout = cap.replay();
    assert!(
        stdout.contains("summary: processes=1 calls=4 placements=4 placement_hits=4 "),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "snapshots=1 snapshots_pages_equal=1 final_layouts=1 final_boundaries_exact=1"
        ),
        "{stdout}"
    );
}

/// The main thread's trace of the `munmap` races below: it starts thread
/// 101, maps a page at the top, and unmaps it at `unmap_at` (then makes
/// the calls `then` holds, if any).
fn munmap_race_main(unmap_at: &str, then: &str) -> String {
    format!(
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 clone3({{flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, stack=0x1, stack_size=0x2}}, 88) = 101\n\
         2.500000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffe000\n\
         {unmap_at} munmap(0x7ffff7ffe000, 4096) = 0\n\
         {then}\
         4.000000 exit_group(0) = ?\n\
         4.500000 +++ exited with 0 +++\n"
    )
}

/// Hand-made captures: a thread's `mmap` and another thread's `munmap`
/// served in the other order than they entered. The `mmap` that entered
/// first but got the place the later `munmap` freed was served after it;
/// the `mmap` that entered after a `munmap` but was placed as if the
/// unmapped VMA were still there was served before it. Unless the
/// unmapping thread made another call in between: then its `munmap` was
/// done, and the kernel's placement is a miss of the model.
#[test]
fn an_mmap_and_a_munmap_of_two_threads_served_out_of_entry_order() {
    // Also when strace stamped the munmap's entry after the mapping
    // thread's next call (a busy tracer stamps a call when it gets to it):
    // the kernel put the mmap only where nothing was.
    for (tag, then) in [
        ("munmap_first", ""),
        (
            "munmap_stamped_late",
            "3.000050 madvise(0x7ffff7ffe000, 4096, MADV_DONTNEED) = 0\n",
        ),
    ] {
        let freed_first = HandMade::new(tag);
        freed_first.file("trace.100", &munmap_race_main("3.000100", ""));
        freed_first.file(
            "trace.101",
            &format!(
                "3.000000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffe000\n\
                 {then}\
                 3.900000 +++ exited with 0 +++\n"
            ),
        );
        freed_first.layouts(
            "3.950000",
            "7ffff7ffe000-7ffff7fff000 rw-p 00000000 00:00 0 \n",
        );
        let stdout = freed_first.replay();
        assert!(
            stdout.contains("placements=2 placement_hits=2 ")
                && stdout.contains("result_mismatches=0 ")
                && stdout.contains("final_layouts=1 final_boundaries_exact=1"),
            "{tag}: {stdout}"
        );
    }

    let mapped_first = |tag: &str, then: &str| {
        let cap = HandMade::new(tag);
        cap.file("trace.100", &munmap_race_main("3.000000", then));
        cap.file(
            "trace.101",
            "3.000100 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffd000\n\
             3.900000 +++ exited with 0 +++\n",
        );
        cap.layouts(
            "3.950000",
            "7ffff7ffd000-7ffff7ffe000 rw-p 00000000 00:00 0 \n",
        );
        let stdout = cap.replay();
        assert!(
            stdout.contains("final_layouts=1 final_boundaries_exact=1"),
            "{stdout}"
        );
        stdout
    };
    let stdout = mapped_first("mmap_first", "");
    assert!(
        stdout.contains("placements=2 placement_hits=2 "),
        "{stdout}"
    );
    let done = "3.000050 madvise(0x7ffff7ffe000, 4096, MADV_DONTNEED) = -1 ENOMEM (Cannot allocate memory)\n";
    let stdout = mapped_first("munmap_done", done);
    assert!(
        stdout.contains("placements=2 placement_hits=1 "),
        "{stdout}"
    );

    // A thread unmapping at once what another has just mapped (where the
    // model would not have put it) is no race: the munmap frees nothing
    // the model still has, so it stays after the mmap, and the mapping is
    // gone at the end as in the kernel.
    let unmapped_after = HandMade::new("unmapped_after");
    unmapped_after.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, stack=0x1, stack_size=0x2}, 88) = 101\n\
         3.000000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ff0000\n\
         4.000000 exit_group(0) = ?\n\
         4.500000 +++ exited with 0 +++\n",
    );
    unmapped_after.file(
        "trace.101",
        "3.000100 munmap(0x7ffff7ff0000, 4096) = 0\n\
         3.900000 +++ exited with 0 +++\n",
    );
    unmapped_after.layouts("3.950000", "");
    let stdout = unmapped_after.replay();
    assert!(
        stdout.contains("placements=1 placement_hits=0 ")
            && stdout.contains("final_layouts=1 final_boundaries_exact=1"),
        "{stdout}"
    );
}

/// A hand-made capture: a race of three threads. Thread 101's `mmap`
/// entered first but was served after two `mmap`s of the main thread, the
/// first of which got the page thread 102's `munmap`, entered between
/// them, freed: that `munmap` goes first too.
#[test]
fn a_call_served_after_another_threads_calls_and_the_munmap_they_needed() {
    let cap = HandMade::new("three_threads");
    let map = |t: &str, at: &str| {
        format!("{t} mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = {at}\n")
    };
    let clone = |t: &str, child: u32| {
        format!("{t} clone3({{flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, stack=0x1, stack_size=0x2}}, 88) = {child}\n")
    };
    cap.file(
        "trace.100",
        &format!(
            "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
             {}{}{}{}{}\
             4.000000 exit_group(0) = ?\n\
             4.500000 +++ exited with 0 +++\n",
            clone("2.000000", 101),
            clone("2.100000", 102),
            map("2.500000", "0x7ffff7ffe000"),
            map("3.000200", "0x7ffff7ffe000"),
            map("3.000300", "0x7ffff7ffd000"),
        ),
    );
    cap.file(
        "trace.101",
        &format!(
            "{}3.900000 +++ exited with 0 +++\n",
            map("3.000000", "0x7ffff7ffc000")
        ),
    );
    cap.file(
        "trace.102",
        "3.000100 munmap(0x7ffff7ffe000, 4096) = 0\n\
         3.900000 +++ exited with 0 +++\n",
    );
    cap.layouts(
        "3.950000",
        "7ffff7ffc000-7ffff7fff000 r--p 00000000 00:00 0 \n",
    );
    let stdout = cap.replay();
    assert!(
        stdout.contains("placements=4 placement_hits=4 ")
            && stdout.contains("result_mismatches=0 ")
            && stdout.contains("final_layouts=1 final_boundaries_exact=1"),
        "{stdout}"
    );
}

/// A hand-made capture: a thread's `mmap` got the place another thread's
/// `mremap`, entered after it, moved a mapping away from: the `mremap` was
/// served first.
#[test]
fn an_mmap_served_after_a_later_mremap_moved_away() {
    let cap = HandMade::new("mremap_first");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, stack=0x1, stack_size=0x2}, 88) = 101\n\
         2.500000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffe000\n\
         3.000100 mremap(0x7ffff7ffe000, 4096, 4096, MREMAP_MAYMOVE|MREMAP_FIXED, 0x7ffff7ff0000) = 0x7ffff7ff0000\n\
         4.000000 exit_group(0) = ?\n\
         4.500000 +++ exited with 0 +++\n",
    );
    cap.file(
        "trace.101",
        "3.000000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffe000\n\
         3.900000 +++ exited with 0 +++\n",
    );
    cap.layouts(
        "3.950000",
        "7ffff7ff0000-7ffff7ff1000 rw-p 00000000 00:00 0 \n\
         7ffff7ffe000-7ffff7fff000 rw-p 00000000 00:00 0 \n",
    );
    let stdout = cap.replay();
    assert!(
        stdout.contains("placements=2 placement_hits=2 ")
            && stdout.contains("result_mismatches=0 ")
            && stdout.contains("final_layouts=1 final_boundaries_exact=1"),
        "{stdout}"
    );
}

/// A hand-made capture: a thread creates another on a stack it mapped
/// (glibc writes the new thread's block at the stack's top before
/// `clone3`), and the new thread maps a guard over the stack's bottom and
/// makes it `PROT_NONE` while its creator makes one more call. The guard,
/// never written, loses `VM_ACCOUNT` (the kernel's `mprotect_fixup`); had
/// the stack's first write waited for its creator's next memory call, that
/// write would have reached the guard first.
#[test]
fn a_stack_handed_to_a_new_thread_was_written_before_the_clone() {
    let cap = HandMade::new("handed_stack");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 mmap(NULL, 1048576, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_STACK, -1, 0) = 0x7ffff7eff000\n\
         2.100000 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS, child_tid=0x7ffff7ffe990, stack=0x7ffff7eff000, stack_size=0xfff80, tls=0x7ffff7ffe6c0} => {parent_tid=[101]}, 88) = 101\n\
         2.250000 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7efe000\n\
         3.000000 exit_group(0) = ?\n\
         3.500000 +++ exited with 0 +++\n",
    );
    cap.file(
        "trace.101",
        "2.200000 mmap(0x7ffff7eff000, 16384, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7ffff7eff000\n\
         2.300000 mprotect(0x7ffff7eff000, 16384, PROT_NONE) = 0\n\
         2.900000 +++ exited with 0 +++\n",
    );
    cap.layouts(
        "3.100000",
        "7ffff7efe000-7ffff7eff000 r--p 00000000 00:00 0 \n\
         7ffff7eff000-7ffff7f03000 ---p 00000000 00:00 0 \n\
         7ffff7f03000-7ffff7fff000 rw-p 00000000 00:00 0 \n",
    );
    cap.file("vmflags.100.2.exit", "7ffff7eff000-7ffff7f03000 mr mw me\n");
    let stdout = cap.replay();
    assert!(
        stdout.contains("final_layouts=1 final_boundaries_exact=1 vmflags_diffs=0 "),
        "{stdout}"
    );
}

/// A hand-made capture: memory committed by `mprotect` into a `PROT_NONE`
/// reservation (as glibc grows an arena and Chromium's allocator commits)
/// was written before a fork, so the child's copy has a forked anon_vma:
/// the next commit beside it does not merge with it in the child (the
/// kernel's `is_mergeable_anon_vma` refuses a fork child as target), as it
/// does in the parent.
#[test]
fn memory_committed_by_mprotect_was_written_before_a_fork() {
    let cap = HandMade::new("mprotect_commit");
    let commit =
        |t: &str| format!("{t} mprotect(0x7ffff7f0f000, 65536, PROT_READ|PROT_WRITE) = 0\n");
    cap.file(
        "trace.100",
        &format!(
            "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
             2.000000 mmap(NULL, 1048576, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0) = 0x7ffff7eff000\n\
             2.100000 mprotect(0x7ffff7eff000, 65536, PROT_READ|PROT_WRITE) = 0\n\
             2.200000 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7ffff7dd2a10) = 101\n\
             {}\
             3.000000 exit_group(0) = ?\n\
             3.500000 +++ exited with 0 +++\n",
            commit("2.300000")
        ),
    );
    cap.file(
        "trace.101",
        &format!(
            "{}\
             2.600000 exit_group(0) = ?\n\
             2.700000 +++ exited with 0 +++\n",
            commit("2.250000")
        ),
    );
    let rest = "7ffff7f1f000-7ffff7fff000 ---p 00000000 00:00 0 \n";
    cap.file("maps.100.1.execexit", &format!("{PROG}{STACK}"));
    cap.file(
        "maps.100.2.exit",
        &format!("{PROG}7ffff7eff000-7ffff7f1f000 rw-p 00000000 00:00 0 \n{rest}{STACK}"),
    );
    cap.file(
        "maps.101.1.exit",
        &format!(
            "{PROG}7ffff7eff000-7ffff7f0f000 rw-p 00000000 00:00 0 \n\
             7ffff7f0f000-7ffff7f1f000 rw-p 00000000 00:00 0 \n{rest}{STACK}"
        ),
    );
    cap.file(
        "snapshots.tsv",
        "1.100000\t100\t100\t1\texecexit\n\
         2.650000\t101\t101\t1\texit\n\
         3.100000\t100\t100\t2\texit\n",
    );
    let stdout = cap.replay();
    assert!(
        stdout.contains("final_layouts=2 final_boundaries_exact=2 "),
        "{stdout}"
    );
}

/// A hand-made capture: a run of commits into a reservation (as a JVM's
/// Metaspace commits its chunks) whose later commit fills a hole below an
/// earlier one of the run. The earlier one was in use before (a runtime
/// commits out of order what it allocates as it goes), so it does not
/// merge with the commit below it, which merges with the written memory
/// under it.
#[test]
fn a_commit_below_an_earlier_one_of_its_run_finds_it_written() {
    let cap = HandMade::new("commit_below");
    let commit = |t: &str, at: &str| {
        format!("{t} mmap({at}, 65536, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = {at}\n")
    };
    cap.file(
        "trace.100",
        &format!(
            "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
             2.000000 mmap(NULL, 1048576, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0) = 0x7ffff7eff000\n\
             {}\
             2.200000 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7efe000\n\
             {}{}\
             3.000000 exit_group(0) = ?\n\
             3.500000 +++ exited with 0 +++\n",
            commit("2.100000", "0x7ffff7eff000"),
            commit("2.300000", "0x7ffff7f1f000"),
            commit("2.400000", "0x7ffff7f0f000"),
        ),
    );
    cap.layouts(
        "3.100000",
        "7ffff7efe000-7ffff7eff000 r--p 00000000 00:00 0 \n\
         7ffff7eff000-7ffff7f1f000 rw-p 00000000 00:00 0 \n\
         7ffff7f1f000-7ffff7f2f000 rw-p 00000000 00:00 0 \n\
         7ffff7f2f000-7ffff7fff000 ---p 00000000 00:00 0 \n",
    );
    let stdout = cap.replay();
    assert!(
        stdout.contains("final_layouts=1 final_boundaries_exact=1 "),
        "{stdout}"
    );
}

/// A hand-made capture: a pool of stacks in one mapping (as Ruby makes its
/// fibers'), each guard page made after the stack below it was put to use:
/// the first guard loses `VM_ACCOUNT` (nothing was written yet), the next
/// ones keep it. And one stack with guards at both ends (as Valgrind makes
/// its threads'), written only later: both guards lose it.
#[test]
fn a_guard_inside_a_pool_of_stacks_finds_the_stack_below_it_in_use() {
    let cap = HandMade::new("stack_pool");
    let guard = |t: &str, at: &str| format!("{t} mprotect({at}, 4096, PROT_NONE) = 0\n");
    cap.file(
        "trace.100",
        &format!(
            "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
             2.000000 mmap(NULL, 196608, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7fcf000\n\
             {}{}{}\
             2.400000 mmap(0x7ffff7e00000, 65536, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7e00000\n\
             {}{}\
             3.000000 exit_group(0) = ?\n\
             3.500000 +++ exited with 0 +++\n",
            guard("2.100000", "0x7ffff7fcf000"),
            guard("2.200000", "0x7ffff7fdf000"),
            guard("2.300000", "0x7ffff7fef000"),
            guard("2.500000", "0x7ffff7e00000"),
            guard("2.600000", "0x7ffff7e0f000"),
        ),
    );
    cap.layouts(
        "3.100000",
        "7ffff7e00000-7ffff7e01000 ---p 00000000 00:00 0 \n\
         7ffff7e01000-7ffff7e0f000 rw-p 00000000 00:00 0 \n\
         7ffff7e0f000-7ffff7e10000 ---p 00000000 00:00 0 \n\
         7ffff7fcf000-7ffff7fd0000 ---p 00000000 00:00 0 \n\
         7ffff7fd0000-7ffff7fdf000 rw-p 00000000 00:00 0 \n\
         7ffff7fdf000-7ffff7fe0000 ---p 00000000 00:00 0 \n\
         7ffff7fe0000-7ffff7fef000 rw-p 00000000 00:00 0 \n\
         7ffff7fef000-7ffff7ff0000 ---p 00000000 00:00 0 \n\
         7ffff7ff0000-7ffff7fff000 rw-p 00000000 00:00 0 \n",
    );
    cap.file(
        "vmflags.100.2.exit",
        "7ffff7e00000-7ffff7e01000 mr mw me\n\
         7ffff7e0f000-7ffff7e10000 mr mw me\n\
         7ffff7fcf000-7ffff7fd0000 mr mw me\n\
         7ffff7fdf000-7ffff7fe0000 mr mw me ac\n\
         7ffff7fef000-7ffff7ff0000 mr mw me ac\n",
    );
    let stdout = cap.replay();
    assert!(
        stdout.contains("final_layouts=1 final_boundaries_exact=1 vmflags_diffs=0 "),
        "{stdout}"
    );
}

/// A hand-made capture without the opens traced: a JIT's two views of one
/// memfd, executable then writable, made one after the other (as Erlang's
/// BEAM makes them). The writable view shows the descriptor open
/// read-write, so the executable one, shared, may become writable
/// (`VM_MAYWRITE`, `mw`) and stays `VM_SHARED` (`sh`).
#[test]
fn a_shared_view_followed_by_a_writable_one_is_of_a_read_write_descriptor() {
    let cap = HandMade::new("jit_views");
    let view = |t: &str, prot: &str, at: &str| {
        format!("{t} mmap(NULL, 1048576, {prot}, MAP_SHARED, 17</memfd:vmem>(deleted), 0) = {at}\n")
    };
    cap.file(
        "trace.100",
        &format!(
            "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
             {}{}\
             3.000000 exit_group(0) = ?\n\
             3.500000 +++ exited with 0 +++\n",
            view("2.000000", "PROT_READ|PROT_EXEC", "0x7ffff7eff000"),
            view("2.100000", "PROT_READ|PROT_WRITE", "0x7ffff7dff000"),
        ),
    );
    let name = "/memfd:vmem (deleted)";
    cap.layouts(
        "3.100000",
        &format!(
            "7ffff7dff000-7ffff7eff000 rw-s 00000000 00:01 5                          {name}\n\
             7ffff7eff000-7ffff7fff000 r-xs 00000000 00:01 5                          {name}\n"
        ),
    );
    cap.file(
        "vmflags.100.2.exit",
        "7ffff7dff000-7ffff7eff000 rd wr sh mr mw me ms\n\
         7ffff7eff000-7ffff7fff000 rd ex sh mr mw me ms\n",
    );
    let stdout = cap.replay();
    assert!(
        stdout.contains("final_layouts=1 final_boundaries_exact=1 vmflags_diffs=0 "),
        "{stdout}"
    );
}

/// A hand-made capture whose exit snapshot is empty, as when a process is
/// killed while a thread is held at `exit_group` (its memory is released
/// before the snapshot is read): counted, not compared.
#[test]
fn an_empty_snapshot_is_not_compared() {
    let cap = HandMade::new("empty_snapshot");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffe000\n\
         3.000000 exit_group(0) = ?\n\
         3.500000 +++ killed by SIGTERM +++\n",
    );
    cap.layouts("3.100000", "");
    cap.file("maps.100.2.exit", "");
    let stdout = cap.replay();
    assert!(
        stdout.contains("snapshots=0 snapshots_pages_equal=0 final_layouts=0 ")
            && stdout.contains("empty_snapshots=1 "),
        "{stdout}"
    );
}

/// A hand-made capture: a private mapping of /dev/zero keeps the file's
/// name (the kernel's `mmap_zero` makes it anonymous memory but leaves the
/// file), and a file mapping of a descriptor strace printed no path for
/// (not open) fails with `EBADF`.
#[test]
fn dev_zero_keeps_its_name_and_a_closed_descriptor_is_ebadf() {
    let cap = HandMade::new("dev_zero");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 mmap(NULL, 16384, PROT_READ|PROT_WRITE, MAP_PRIVATE, 6</dev/zero>, 0) = 0x7ffff7ffb000\n\
         2.100000 mmap(NULL, 16384, PROT_READ, MAP_PRIVATE, 99, 0) = -1 EBADF (Bad file descriptor)\n\
         3.000000 exit_group(0) = ?\n\
         3.500000 +++ exited with 0 +++\n",
    );
    let zero =
        "7ffff7ffb000-7ffff7fff000 rw-p 00000000 00:06 4                          /dev/zero\n";
    cap.layouts("2.950000", zero);
    let stdout = cap.replay();
    assert!(
        stdout.contains(
            "placements=1 placement_hits=1 placement_hit_rate=100.0% result_mismatches=0 "
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "snapshots=1 snapshots_pages_equal=1 final_layouts=1 final_boundaries_exact=1"
        ),
        "{stdout}"
    );
    assert!(
        cap.output("maps.100.2.exit").contains("/dev/zero"),
        "{}",
        cap.output("maps.100.2.exit")
    );
}

/// `mremap(MREMAP_DONTUNMAP)` without `MREMAP_FIXED` reads a `new_addr`
/// that strace does not print: an `EINVAL` that may come from it is not
/// expressible, but one that comes whatever it is (a resize, or no
/// `MREMAP_MAYMOVE`) is replayed and matched.
#[test]
fn a_dontunmap_refused_whatever_its_hint_is_replayed() {
    let cap = HandMade::new("dontunmap");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 mmap(NULL, 32768, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ff7000\n\
         2.100000 mremap(0x7ffff7ff7000, 32768, 16384, MREMAP_MAYMOVE|MREMAP_DONTUNMAP) = -1 EINVAL (Invalid argument)\n\
         2.200000 mremap(0x7ffff7ff7000, 16384, 16384, MREMAP_DONTUNMAP) = -1 EINVAL (Invalid argument)\n\
         2.300000 mremap(0x7ffff7ff7000, 16384, 16384, MREMAP_MAYMOVE|MREMAP_DONTUNMAP) = -1 EINVAL (Invalid argument)\n\
         3.000000 exit_group(0) = ?\n\
         3.500000 +++ exited with 0 +++\n",
    );
    let anon = "7ffff7ff7000-7ffff7fff000 rw-p 00000000 00:00 0 \n";
    cap.layouts("2.950000", anon);
    let stdout = cap.replay();
    // Three of four calls replayed, all as the kernel answered; the last
    // (a valid move whose hint the kernel refused) is not expressible.
    assert!(
        stdout.contains("calls=3 placements=1 placement_hits=1 placement_hit_rate=100.0% result_mismatches=0 not_modelled=1"),
        "{stdout}"
    );
}

/// A hand-made capture of a 24 GiB machine's heuristic overcommit: a 1 TiB
/// private writable `mmap` fails, the same with `MAP_NORESERVE` succeeds.
/// The replay takes the commit limit it is given (the capture does not
/// record one), so the refusal matches only under that limit.
#[test]
fn the_commit_limit_decides_a_huge_charge() {
    let cap = HandMade::new("commit_limit");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 mmap(NULL, 1099511627776, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = -1 ENOMEM (Cannot allocate memory)\n\
         2.100000 mmap(NULL, 1099511627776, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0) = 0x7efff7e00000\n\
         3.000000 exit_group(0) = ?\n\
         3.500000 +++ exited with 0 +++\n",
    );
    cap.file("maps.100.1.execexit", &format!("{PROG}{STACK}"));
    cap.file("snapshots.tsv", "1.100000\t100\t100\t1\texecexit\n");
    let limited = cap.replay_with(&["--commit-limit", &(24u64 << 30).to_string()]);
    assert!(
        limited.contains(
            "placements=1 placement_hits=1 placement_hit_rate=100.0% result_mismatches=0 "
        ),
        "{limited}"
    );
    let unlimited = cap.replay_with(&["--commit-limit", "none"]);
    assert!(unlimited.contains(" result_mismatches=1 "), "{unlimited}");
}

/// A hand-made capture: an `MADV_COLLAPSE` the kernel accepted shows the
/// program wrote the block (the replay makes that write), but the model's
/// own checks still decide: the same result on a `MAP_STACK` mapping
/// (`VM_NOHUGEPAGE`) is a mismatch.
#[test]
fn a_collapse_the_kernel_accepted_is_evidence_of_a_write_not_a_free_pass() {
    let cap = HandMade::new("collapse");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 mmap(NULL, 4194304, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7a00000\n\
         2.100000 madvise(0x7ffff7a00000, 2097152, MADV_COLLAPSE) = 0\n\
         2.200000 madvise(0x7ffff7a01000, 4096, MADV_COLLAPSE) = -1 EINVAL (Invalid argument)\n\
         2.300000 mmap(NULL, 4194304, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_STACK, -1, 0) = 0x7ffff7600000\n\
         2.400000 madvise(0x7ffff7600000, 2097152, MADV_COLLAPSE) = 0\n\
         3.000000 exit_group(0) = ?\n",
    );
    let maps = "7ffff7600000-7ffff7a00000 rw-p 00000000 00:00 0 \n\
                7ffff7a00000-7ffff7e00000 rw-p 00000000 00:00 0 \n";
    cap.layouts("3.100000", maps);
    let stdout = cap.replay();
    // The first collapse matches (the write it shows was made); the second,
    // inside a block (its ends round past each other), is EINVAL in both;
    // the third is the mismatch.
    assert!(stdout.contains("result_mismatches=1 "), "{stdout}");
    assert!(
        stdout.contains("trace.100:6: madvise: kernel 0x0, model Err(EINVAL)"),
        "{stdout}"
    );
}

/// A hand-made capture: a System V segment whose size only `shmget` tells
/// (detached before any snapshot), one whose size only the exit snapshot
/// shows (no `shmget`: the format does not trace it), and a `shmat` of a
/// segment nothing shows (not expressible).
#[test]
fn shmat_sizes_from_shmget_or_a_later_snapshot() {
    let cap = HandMade::new("shm");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 shmget(IPC_PRIVATE, 8292, IPC_CREAT|0600) = 7\n\
         2.100000 shmat(7, NULL, 0) = 0x7ffff7ffc000\n\
         2.200000 shmdt(0x7ffff7ffc000) = 0\n\
         2.300000 shmat(5, NULL, SHM_RDONLY) = 0x7ffff7ffd000\n\
         2.400000 mlock(0x7ffff7ffd000, 8192) = 0\n\
         2.500000 shmat(9, 0x1001, 0) = -1 EINVAL (Invalid argument)\n\
         3.000000 exit_group(0) = ?\n",
    );
    let seg = "7ffff7ffd000-7ffff7fff000 r--s 00000000 00:01 5                          /SYSV00000000 (deleted)\n";
    cap.layouts("3.100000", seg);
    let stdout = cap.replay();
    assert!(
        stdout.contains("calls=4 placements=0 ")
            && stdout.contains("result_mismatches=0 not_modelled=1 ")
            && stdout.contains("snapshots_pages_equal=1 final_layouts=1 final_boundaries_exact=1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("shmat of a segment of unknown size"),
        "{stdout}"
    );
    assert_eq!(cap.output("maps.100.2.exit"), format!("{PROG}{seg}{STACK}"));
}

/// A hand-made capture from a kernel with `CONFIG_ANON_VMA_NAME`: the
/// `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)` that succeeded tells the replay
/// the kernel names VMAs, so it names them too (splitting the mapping in
/// three, `[anon:NAME]` in its maps), and refuses a name with `$` as the
/// kernel did.
#[test]
fn anon_vma_names_when_the_kernel_has_them() {
    let cap = HandMade::new("anon-name");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0\n\
         2.000000 mmap(0x7ffff7ff9000, 12288, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ff9000\n\
         2.100000 prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, 0x7ffff7ffa000, 4096, \"buf \\\"1\\\"\") = 0\n\
         2.200000 prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, 0x7ffff7ff9000, 4096, \"a$b\") = -1 EINVAL (Invalid argument)\n\
         2.300000 prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, 0x7ffff7ff9000, 4096, NULL) = 0\n\
         3.000000 exit_group(0) = ?\n",
    );
    let line = |head: &str, name: &str| format!("{head:<73}{name}\n");
    let named = format!(
        "7ffff7ff9000-7ffff7ffa000 rw-p 00000000 00:00 0 \n{}7ffff7ffb000-7ffff7ffc000 rw-p 00000000 00:00 0 \n",
        line("7ffff7ffa000-7ffff7ffb000 rw-p 00000000 00:00 0 ", "[anon:buf \"1\"]")
    );
    cap.layouts("3.100000", &named);
    let stdout = cap.replay();
    assert!(
        stdout.contains("calls=4 ")
            && stdout.contains("result_mismatches=0 not_modelled=0 ")
            && stdout.contains("snapshots_pages_equal=1 final_layouts=1 final_boundaries_exact=1"),
        "{stdout}"
    );
    assert_eq!(
        cap.output("maps.100.2.exit"),
        format!("{PROG}{named}{STACK}")
    );
}

/// A hand-made capture of the dynamic loader mapping two libraries: the
/// `.bss` it maps after a library's data segment is not written until the
/// loader has relocated (a RELRO `mprotect`, then another call). Before
/// that, a mapping that fills the hole above the first library's `.bss`
/// merges with it and with the written mapping above (one VMA, as in the
/// kernel); after it, the same fill at the second library merges with the
/// `.bss` only, as the two have different anon_vmas.
#[test]
fn a_loaders_bss_is_written_after_relocation() {
    let cap = HandMade::new("loader_bss");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 mmap(0x7ffff7f00000, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3</lib/liba.so>, 0x1000) = 0x7ffff7f00000\n\
         2.100000 mmap(0x7ffff7f02000, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7ffff7f02000\n\
         2.200000 mmap(0x7ffff7f06000, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7ffff7f06000\n\
         2.300000 mmap(0x7ffff7f04000, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7ffff7f04000\n\
         3.000000 mmap(0x7ffff7e00000, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3</lib/libb.so>, 0x1000) = 0x7ffff7e00000\n\
         3.100000 mmap(0x7ffff7e01000, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7ffff7e01000\n\
         3.200000 mmap(0x7ffff7e03000, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7ffff7e03000\n\
         4.000000 mprotect(0x7ffff7e00000, 4096, PROT_READ) = 0\n\
         4.100000 mprotect(0x7ffff7f00000, 4096, PROT_READ) = 0\n\
         5.000000 munmap(0x7ffff7d00000, 4096) = 0\n\
         5.100000 mmap(0x7ffff7e02000, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7ffff7e02000\n\
         6.000000 exit_group(0) = ?\n\
         6.500000 +++ exited with 0 +++\n",
    );
    let libs = "7ffff7e00000-7ffff7e01000 r--p 00001000 08:01 9                          /lib/libb.so\n\
                7ffff7e01000-7ffff7e03000 rw-p 00000000 00:00 0 \n\
                7ffff7e03000-7ffff7e04000 rw-p 00000000 00:00 0 \n\
                7ffff7f00000-7ffff7f01000 r--p 00001000 08:01 8                          /lib/liba.so\n\
                7ffff7f01000-7ffff7f02000 rw-p 00002000 08:01 8                          /lib/liba.so\n\
                7ffff7f02000-7ffff7f08000 rw-p 00000000 00:00 0 \n";
    cap.layouts("6.100000", libs);
    let stdout = cap.replay();
    assert!(stdout.contains("result_mismatches=0 "), "{stdout}");
    assert!(
        stdout.contains(
            "snapshots=1 snapshots_pages_equal=1 final_layouts=1 final_boundaries_exact=1"
        ),
        "{stdout}"
    );
}

/// A hand-made capture: `mseal` as strace 6.1 prints it (it predates the
/// call), then the calls the seal refuses, `EPERM` in the kernel and in the
/// model.
#[test]
fn a_sealed_mapping_refuses_change() {
    let cap = HandMade::new("mseal");
    cap.file(
        "trace.100",
        "1.000000 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 1 var */) = 0 (DELAYED)\n\
         2.000000 mmap(NULL, 16384, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7ffb000\n\
         2.100000 syscall_0x1ce(0x7ffff7ffc000, 0x2000, 0, 0, 0x64, 0) = 0\n\
         2.200000 munmap(0x7ffff7ffb000, 16384) = -1 EPERM (Operation not permitted)\n\
         2.300000 mprotect(0x7ffff7ffc000, 4096, PROT_READ) = -1 EPERM (Operation not permitted)\n\
         2.400000 mremap(0x7ffff7ffc000, 8192, 16384, MREMAP_MAYMOVE) = -1 EPERM (Operation not permitted)\n\
         2.500000 mprotect(0x7ffff7ffb000, 4096, PROT_READ) = 0\n\
         3.000000 exit_group(0) = ?\n\
         3.500000 +++ exited with 0 +++\n",
    );
    let parts = "7ffff7ffb000-7ffff7ffc000 r--p 00000000 00:00 0 \n\
                 7ffff7ffc000-7ffff7ffe000 rw-p 00000000 00:00 0 \n\
                 7ffff7ffe000-7ffff7fff000 rw-p 00000000 00:00 0 \n";
    cap.layouts("3.100000", parts);
    let stdout = cap.replay();
    assert!(
        stdout.contains("result_mismatches=0 not_modelled=0 "),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "snapshots=1 snapshots_pages_equal=1 final_layouts=1 final_boundaries_exact=1"
        ),
        "{stdout}"
    );
}
