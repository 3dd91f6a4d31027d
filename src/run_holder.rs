//! Who runs a mutating action: `user@host` of this process, and the run holder
//! `user@host/pid-start` that rollout Leases and journals carry, so a live run
//! is told from one whose process is gone (a reused pid has another start).
use std::fmt;
use std::time::{Duration, UNIX_EPOCH};

use crate::clock::utc_timestamp;

/// `user@host` of this process: the user from USER/LOGNAME, else the login
/// name of the uid (USER is often unset under tmux, cron or sudo), and the
/// kernel host name.
pub fn local_identity() -> String {
    let env_user = ["USER", "LOGNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok());
    identity(env_user, login_name_of_uid, host)
}

/// `user@host` from what the environment said; `uid_name` is asked only
/// when the environment names no user.
fn identity(
    env_user: Option<String>,
    uid_name: impl FnOnce() -> Option<String>,
    host: Option<String>,
) -> String {
    let named = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let user = named(env_user)
        .or_else(|| named(uid_name()))
        .unwrap_or_else(|| format!("uid{}", current_uid()));
    let host = named(host).unwrap_or_else(|| "localhost".to_string());
    format!("{user}@{host}")
}

fn current_uid() -> u32 {
    // SAFETY: getuid(2) cannot fail and touches no memory of ours.
    unsafe { libc::getuid() }
}

/// The login name of this process's uid from the user database (getpwuid_r:
/// /etc/passwd or whatever NSS is set up to ask); `None` when it has none.
fn login_name_of_uid() -> Option<String> {
    let mut buf = vec![0u8; 4096];
    // SAFETY: passwd is plain data; getpwuid_r writes into `pwd` and `buf`
    // (whose length it is told) and sets `found` to `&pwd` or null.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            current_uid(),
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut found,
        );
        if rc != 0 || found.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        let name = std::ffi::CStr::from_ptr(pwd.pw_name);
        Some(crate::printable::line(&name.to_string_lossy()))
    }
}

/// One run: the process that holds a rollout, as `user@host/pid-start`, where
/// `start` is the process's start time in seconds since the Unix epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunHolder {
    /// `user@host`.
    pub who: String,
    pub pid: u32,
    /// When the process started, seconds since the Unix epoch.
    pub started_unix: u64,
}

/// Where a run is, seen from this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// This very process.
    Ours,
    /// A live process on this host with the run's pid and start time.
    Running,
    /// On this host, and no process with its pid and start time is left.
    Gone,
    /// On another host (or of the same user@host in another pid namespace's
    /// words we cannot check): only its Lease expiring says it is gone.
    Elsewhere,
}

impl RunHolder {
    /// This process's run holder (read once).
    pub fn this_process() -> RunHolder {
        static THIS: std::sync::OnceLock<RunHolder> = std::sync::OnceLock::new();
        THIS.get_or_init(|| {
            let pid = std::process::id();
            RunHolder {
                who: local_identity(),
                pid,
                started_unix: process_started_unix(pid).unwrap_or_else(crate::clock::unix_now),
            }
        })
        .clone()
    }

    /// The run holder of live process `pid` of this host; `None` when there is none.
    pub fn of_local_process(pid: u32) -> Option<RunHolder> {
        Some(RunHolder {
            who: local_identity(),
            pid,
            started_unix: process_started_unix(pid)?,
        })
    }

    /// Reads `user@host/pid-start`; `None` for anything else (an older
    /// taloscope's plain `user@host`, another tool's holder).
    pub fn parse(text: &str) -> Option<RunHolder> {
        let (who, run) = text.rsplit_once('/')?;
        let (pid, started) = run.split_once('-')?;
        if !who.contains('@') {
            return None;
        }
        Some(RunHolder {
            who: who.to_string(),
            pid: pid.parse().ok()?,
            started_unix: started.parse().ok()?,
        })
    }

    /// The host part of `user@host`.
    pub fn host(&self) -> &str {
        host_of(&self.who)
    }

    /// Whether the run is this process, alive or gone on this host, or elsewhere.
    pub fn liveness(&self) -> Liveness {
        let this = RunHolder::this_process();
        if *self == this {
            Liveness::Ours
        } else if self.host() != this.host() {
            Liveness::Elsewhere
        } else if process_started_unix(self.pid) == Some(self.started_unix) {
            Liveness::Running
        } else {
            Liveness::Gone
        }
    }

    /// "pid 4242 on ops1, running since 2026-12-01T17:10:00Z", for messages.
    pub fn whereabouts(&self) -> String {
        let since = UNIX_EPOCH + Duration::from_secs(self.started_unix);
        format!(
            "pid {} on {}, running since {}",
            self.pid,
            self.host(),
            utc_timestamp(since)
        )
    }
}

impl fmt::Display for RunHolder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}-{}", self.who, self.pid, self.started_unix)
    }
}

/// A holder as messages name it: `alice@ops1/4242-1796052057 (pid 4242 on
/// ops1, running since …)`, or the text itself when it is no run holder.
pub fn holder_described(holder: &str) -> String {
    match RunHolder::parse(holder) {
        Some(run) => format!("{holder} ({})", run.whereabouts()),
        None => holder.to_string(),
    }
}

/// The host of `user@host` (the text after the last `@`).
pub fn host_of(who: &str) -> &str {
    who.rsplit_once('@').map_or(who, |(_, host)| host)
}

/// When process `pid` of this host started, in seconds since the Unix epoch;
/// `None` when there is no such process or it is a zombie (already dead).
fn process_started_unix(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields count from its end.
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.first() == Some(&"Z") || fields.first() == Some(&"X") {
        return None;
    }
    let ticks: u64 = fields.get(19)?.parse().ok()?;
    let boot = boot_time_unix()?;
    // SAFETY: sysconf only reads a system constant.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let per_second = u64::try_from(per_second).ok().filter(|t| *t > 0)?;
    Some(boot + ticks / per_second)
}

/// The kernel's boot time (`btime` of /proc/stat), seconds since the Unix epoch.
fn boot_time_unix() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_reads_back_and_older_holders_are_not_runs() {
        let run = RunHolder {
            who: "alice@ops1".into(),
            pid: 4242,
            started_unix: 1_796_052_057,
        };
        assert_eq!(run.to_string(), "alice@ops1/4242-1796052057");
        assert_eq!(RunHolder::parse(&run.to_string()), Some(run.clone()));
        assert_eq!(run.host(), "ops1");
        assert_eq!(
            holder_described("alice@ops1/4242-1796052057"),
            "alice@ops1/4242-1796052057 (pid 4242 on ops1, running since 2026-11-30T15:20:57Z)"
        );
        for old in ["alice@ops1", "bob@jump2/x-1", "nobody/1-2", ""] {
            assert_eq!(RunHolder::parse(old), None, "{old:?}");
            assert_eq!(holder_described(old), old);
        }
    }

    #[test]
    fn this_process_is_ours_and_its_start_is_what_proc_says() {
        let this = RunHolder::this_process();
        assert_eq!(this.liveness(), Liveness::Ours);
        assert_eq!(process_started_unix(this.pid), Some(this.started_unix));
        assert_eq!(RunHolder::parse(&this.to_string()), Some(this));
    }

    #[test]
    fn a_live_child_runs_and_is_gone_once_reaped() {
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("sleep runs");
        let run = RunHolder::of_local_process(child.id()).expect("a live child");
        assert_eq!(run.liveness(), Liveness::Running);
        let reused = RunHolder {
            started_unix: run.started_unix - 1,
            ..run.clone()
        };
        assert_eq!(
            reused.liveness(),
            Liveness::Gone,
            "another start: a reused pid"
        );
        child.kill().expect("kill");
        child.wait().expect("reaped");
        assert_eq!(run.liveness(), Liveness::Gone);
        let elsewhere = RunHolder {
            who: "alice@another-host".into(),
            ..run
        };
        assert_eq!(elsewhere.liveness(), Liveness::Elsewhere);
    }

    #[test]
    fn without_user_in_the_environment_the_uid_names_the_holder() {
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            identity(some("op"), || panic!("not asked"), some("jump1\n")),
            "op@jump1"
        );
        // Unset or empty USER (tmux, cron, sudo): the uid's login name.
        assert_eq!(identity(None, || some("alice"), some("vm")), "alice@vm");
        assert_eq!(
            identity(some(""), || some("alice"), None),
            "alice@localhost"
        );
        // A uid without a name still says which uid, never "unknown".
        let nameless = identity(None, || None, some("vm"));
        assert!(
            nameless.starts_with("uid") && nameless.ends_with("@vm"),
            "{nameless}"
        );
    }

    #[test]
    fn this_process_uid_has_a_login_name() {
        // The test runs as a user the system knows (root in CI containers).
        let name = login_name_of_uid().expect("the uid has a name in the user database");
        assert!(!name.is_empty() && !local_identity().starts_with("unknown@"));
    }
}
