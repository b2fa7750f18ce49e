//! Reading `strace -ff -ttt -y` output: one [`Call`] per system call of a
//! thread, an `<unfinished ...>` entry joined with its `<... resumed>` exit.

use std::collections::HashMap;

/// Microseconds since the epoch (strace's `-ttt` clock).
pub type Micros = u64;

/// Where a line came from, for error messages.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The trace file's name.
    pub file: String,
    /// 1-based line number (of the entry line).
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What a call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ret {
    /// A value (an address, 0, a pid).
    Val(u64),
    /// `-1 ENAME (...)`.
    Err(String),
    /// `?`: the call did not return (exit, a successful execve of another thread...).
    Unknown,
}

/// One system call of one thread.
#[derive(Debug, Clone)]
pub struct Call {
    /// When strace saw the entry.
    pub time: Micros,
    /// The thread.
    pub tid: u32,
    /// The system call's name.
    pub name: String,
    /// The arguments as strace printed them, split at top-level commas.
    pub args: Vec<String>,
    /// The result.
    pub ret: Ret,
    /// The path `-y` printed with a returned descriptor (`= 3</etc/hostname>`).
    pub ret_path: Option<String>,
    /// Where it was read.
    pub origin: Origin,
}

/// Parses `1795381603.523431` into microseconds.
pub fn parse_time(s: &str) -> Option<Micros> {
    let (a, b) = s.split_once('.').unwrap_or((s, "0"));
    if b.is_empty() || b.len() > 9 || !b.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = a.parse().ok()?;
    let mut frac: u64 = b.parse().ok()?;
    for _ in b.len()..6 {
        frac *= 10;
    }
    for _ in 6..b.len() {
        frac /= 10;
    }
    secs.checked_mul(1_000_000)?.checked_add(frac)
}

/// Splits an argument list at top-level commas (brackets, braces,
/// parentheses, quoted strings and `<path>` of `-y` nest).
pub fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut in_str = false;
    let mut esc = false;
    let mut prev = ' ';
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if in_str {
            cur.push(c);
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
            prev = c;
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            // A descriptor's path, `3</etc/hostname>`; not a shift,
            // `21<<MAP_HUGE_SHIFT`.
            '<' if prev.is_ascii_digit() && chars.peek() != Some(&'<') => depth += 1,
            '>' if depth > 0 => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                prev = c;
                continue;
            }
            _ => {}
        }
        cur.push(c);
        prev = c;
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Parses the text after `) = `: the result, and the path of a returned
/// descriptor (`3</etc/hostname>`, `-y`).
fn parse_ret(s: &str) -> Result<(Ret, Option<String>), String> {
    let s = s.trim();
    if s.starts_with('?') {
        return Ok((Ret::Unknown, None));
    }
    if let Some(rest) = s.strip_prefix("-1 ") {
        let name = rest
            .split_whitespace()
            .next()
            .ok_or_else(|| format!("error result without a name: {s:?}"))?;
        return Ok((Ret::Err(name.to_string()), None));
    }
    // `3</etc/hostname> (DELAYED)`: the number, then the path up to the
    // last `>` (a path may hold spaces and `>`), then `(deleted)` if the
    // file is unlinked (`memfd_create`).
    let (num, path) = match s.find('<') {
        Some(i) if s[..i].bytes().all(|b| b.is_ascii_digit()) && i > 0 => {
            let end = s
                .rfind('>')
                .filter(|&e| e > i)
                .ok_or_else(|| format!("bad descriptor result {s:?}"))?;
            let unlinked = s[end + 1..].starts_with("(deleted)");
            (&s[..i], Some(file_name(&s[i + 1..end], unlinked)))
        }
        _ => (s.split_whitespace().next().unwrap_or(""), None),
    };
    parse_num(num)
        .map(|v| (Ret::Val(v), path))
        .ok_or_else(|| format!("bad result {s:?}"))
}

/// The name of the file strace printed as a descriptor's path: for a file
/// that was unlinked (strace adds `(deleted)`: every memfd, a deleted
/// temporary), `PATH (deleted)`, as the kernel names it in the maps.
pub fn file_name(path: &str, unlinked: bool) -> String {
    if unlinked {
        format!("{path} (deleted)")
    } else {
        path.to_string()
    }
}

/// A number as strace prints it: decimal, `0x` hex, `NULL`; negative
/// decimals wrap (two's complement).
pub fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    if s == "NULL" {
        return Some(0);
    }
    if let Some(h) = s.strip_prefix("0x") {
        return u64::from_str_radix(h, 16).ok();
    }
    if let Some(d) = s.strip_prefix('-') {
        return d.parse::<u64>().ok().map(|v| v.wrapping_neg());
    }
    s.parse().ok()
}

/// A call seen entering but not yet resumed.
struct Pending {
    time: Micros,
    name: String,
    head: String,
    line: usize,
}

/// Splits `name(args...) = ret` (the whole text after the timestamp).
fn split_call(text: &str) -> Option<(&str, &str, &str)> {
    let open = text.find('(')?;
    let name = &text[..open];
    if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return None;
    }
    // `) = ret`, the result column padded with spaces (`brk(NULL)     = 0x…`).
    let eq = text.rfind(" = ")?;
    let head = text[..eq].trim_end();
    let args = head.strip_suffix(')')?.get(open + 1..)?;
    let ret = &text[eq + 3..];
    Some((name, args, ret.trim()))
}

/// Reads one thread's trace. `file` names it in errors.
pub fn parse_trace(file: &str, tid: u32, text: &str) -> Result<Vec<Call>, String> {
    let mut calls = Vec::new();
    let mut pending: HashMap<String, Pending> = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let at = || format!("{file}:{ln}");
        let line = raw.trim_end();
        if line.is_empty() {
            continue;
        }
        let (ts, rest) = line
            .split_once(' ')
            .ok_or_else(|| format!("{}: no timestamp in {line:?}", at()))?;
        let time = parse_time(ts)
            .ok_or_else(|| format!("{}: bad timestamp {ts:?} (want strace -ttt)", at()))?;
        let rest = rest.trim_start();
        if rest.starts_with("---") || rest.starts_with("+++") {
            continue; // signals, exits
        }
        if let Some(r) = rest.strip_prefix("<... ") {
            // <... mmap resumed>tail) = ret
            let (name, tail) = r
                .split_once(" resumed>")
                .ok_or_else(|| format!("{}: bad resumed line {line:?}", at()))?;
            let Some(p) = pending.remove(name) else {
                continue; // its entry came before the trace started
            };
            let text = format!("{}({}{}", p.name, p.head, tail);
            let (_, args, ret) = split_call(&text)
                .ok_or_else(|| format!("{}: cannot parse resumed call {line:?}", at()))?;
            let (ret, ret_path) = parse_ret(ret).map_err(|e| format!("{}: {e}", at()))?;
            calls.push(Call {
                time: p.time,
                tid,
                name: p.name,
                args: split_args(args),
                ret,
                ret_path,
                origin: Origin {
                    file: file.to_string(),
                    line: p.line,
                },
            });
            continue;
        }
        if let Some(head) = rest.strip_suffix("<unfinished ...>") {
            let open = head
                .find('(')
                .ok_or_else(|| format!("{}: bad unfinished line {line:?}", at()))?;
            let name = head[..open].to_string();
            pending.insert(
                name.clone(),
                Pending {
                    time,
                    name,
                    head: head[open + 1..].trim_end().to_string(),
                    line: ln,
                },
            );
            continue;
        }
        let Some((name, args, ret)) = split_call(rest) else {
            if rest.ends_with("= ?") || rest.contains(") = ? <unavailable>") {
                continue;
            }
            return Err(format!("{}: cannot parse {line:?}", at()));
        };
        let (ret, ret_path) = parse_ret(ret).map_err(|e| format!("{}: {e}", at()))?;
        calls.push(Call {
            time,
            tid,
            name: name.to_string(),
            args: split_args(args),
            ret,
            ret_path,
            origin: Origin {
                file: file.to_string(),
                line: ln,
            },
        });
    }
    // Calls that never resumed (the thread was killed): their effect is unknown.
    for (_, p) in pending {
        calls.push(Call {
            time: p.time,
            tid,
            args: split_args(&p.head),
            name: p.name,
            ret: Ret::Unknown,
            ret_path: None,
            origin: Origin {
                file: file.to_string(),
                line: p.line,
            },
        });
    }
    calls.sort_by_key(|c| (c.time, c.origin.line));
    Ok(calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("1795381603.523431"), Some(1_795_381_603_523_431));
        assert_eq!(parse_time("1.5"), Some(1_500_000));
        assert_eq!(parse_time("x.5"), None);
    }

    #[test]
    fn args_nest() {
        assert_eq!(
            split_args("NULL, 16416, PROT_READ, MAP_PRIVATE|MAP_DENYWRITE, 3</a,b>, 0"),
            [
                "NULL",
                "16416",
                "PROT_READ",
                "MAP_PRIVATE|MAP_DENYWRITE",
                "3</a,b>",
                "0"
            ]
        );
        assert_eq!(
            split_args("{flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD}, 88"),
            ["{flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD}", "88"]
        );
        assert_eq!(split_args("\"a,b\", [1, 2]"), ["\"a,b\"", "[1, 2]"]);
        assert!(split_args("").is_empty());
    }

    #[test]
    fn complete_unfinished_and_resumed() {
        let t = "1.000001 mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7fc0000\n\
                 1.000002 mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0 <unfinished ...>\n\
                 1.000005 <... mmap resumed>) = 0x7ffff7fbf000\n\
                 1.000006 munmap(0x1000, 4096) = -1 EINVAL (Invalid argument)\n\
                 1.000007 execve(\"/bin/x\", [\"x\"], 0x7ffe /* 3 vars */) = 0 (DELAYED)\n\
                 1.000008 exit_group(0)         = ?\n\
                 1.000009 +++ exited with 0 +++\n";
        let c = parse_trace("trace.7", 7, t).unwrap();
        assert_eq!(c.len(), 5);
        assert_eq!(
            c[1].args,
            [
                "NULL",
                "4096",
                "PROT_NONE",
                "MAP_PRIVATE|MAP_ANONYMOUS",
                "-1",
                "0"
            ]
        );
        assert_eq!(c[1].ret, Ret::Val(0x7fff_f7fb_f000));
        assert_eq!(c[1].origin.line, 2);
        assert_eq!(c[2].ret, Ret::Err("EINVAL".into()));
        assert_eq!(c[3].ret, Ret::Val(0));
        assert_eq!(c[4].ret, Ret::Unknown);
    }

    #[test]
    fn descriptor_results_keep_their_path() {
        let t = "1.0 openat(AT_FDCWD</w>, \"/etc/host name\", O_RDONLY|O_CLOEXEC) = 3</etc/host name>\n\
                 1.1 dup(3</etc/host name>) = 4</etc/host name> (DELAYED)\n\
                 1.2 openat(AT_FDCWD</w>, \"/nope\", O_RDONLY) = -1 ENOENT (No such file or directory)\n\
                 1.3 memfd_create(\"mf\", 0) = 6</memfd:mf>(deleted)\n";
        let c = parse_trace("trace.1", 1, t).unwrap();
        // An unlinked file is named as the kernel's maps name it.
        assert_eq!(c[3].ret_path.as_deref(), Some("/memfd:mf (deleted)"));
        assert_eq!(c[0].ret, Ret::Val(3));
        assert_eq!(c[0].ret_path.as_deref(), Some("/etc/host name"));
        assert_eq!(c[1].ret, Ret::Val(4));
        assert_eq!(c[1].ret_path.as_deref(), Some("/etc/host name"));
        assert_eq!(c[2].ret, Ret::Err("ENOENT".into()));
        assert_eq!(c[2].ret_path, None);
    }

    #[test]
    fn garbage_names_file_and_line() {
        let e = parse_trace("trace.9", 9, "1.0 brk(NULL) = 0x1000\nhello\n").unwrap_err();
        assert!(e.starts_with("trace.9:2:"), "{e}");
        let e = parse_trace("trace.9", 9, "1.0 brk(NULL) = zz\n").unwrap_err();
        assert!(e.starts_with("trace.9:1:"), "{e}");
    }
}
