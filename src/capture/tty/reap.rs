//! Ending everything a terminal session started. The CLI runs as the leader of its own
//! session (the pty crate calls `setsid`), so its pid is also its session and process
//! group id; a background job may have moved into a group or session of its own. Before
//! the leader is killed, every process of its session, of its group and every descendant
//! (parent links in `/proc/PID/stat`) is collected, then all are sent SIGKILL.

/// `(pid, parent pid, process group, session)` of every process, from `/proc`.
fn processes() -> Vec<(i32, i32, i32, i32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let pid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid pgrp session …`; comm may hold spaces and parentheses.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split(' ').take(4).collect();
        Some((
            pid,
            f.get(1)?.parse().ok()?,
            f.get(2)?.parse().ok()?,
            f.get(3)?.parse().ok()?,
        ))
    })
    .collect()
}

/// The processes of `leader`'s session and group and its descendants, `leader` included.
pub fn family(leader: i32) -> Vec<i32> {
    let all = processes();
    let mut out: Vec<i32> = all
        .iter()
        .filter(|(pid, _, pgrp, sid)| *pid == leader || *pgrp == leader || *sid == leader)
        .map(|p| p.0)
        .collect();
    let mut grew = true;
    while grew {
        grew = false;
        for (pid, ppid, _, _) in &all {
            if out.contains(ppid) && !out.contains(pid) {
                out.push(*pid);
                grew = true;
            }
        }
    }
    out
}

/// Send SIGKILL to every process of [`family`]; returns how many were signalled.
pub fn kill_family(leader: u32) -> usize {
    let Ok(leader) = i32::try_from(leader) else {
        return 0;
    };
    let pids = family(leader);
    for p in &pids {
        // SAFETY: kill(2) takes plain integers; no memory is shared with the callee.
        unsafe {
            libc::kill(*p, libc::SIGKILL);
        }
    }
    pids.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descendant_in_a_group_of_its_own_is_found_and_killed() {
        use std::os::unix::process::CommandExt;
        // `setsid sleep` leaves the group and session of the shell that started it.
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 311 & sleep 312"])
            .process_group(0)
            .spawn()
            .unwrap();
        let leader = sh.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while family(leader).len() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let fam = family(leader);
        assert_eq!(
            fam.len(),
            3,
            "sh, sleep 312 and the setsid'd sleep 311: {fam:?}"
        );
        assert_eq!(kill_family(sh.id()), 3);
        let _ = sh.wait();
        std::thread::sleep(std::time::Duration::from_millis(100));
        for p in fam {
            let alive = std::fs::read_to_string(format!("/proc/{p}/stat"))
                .is_ok_and(|s| !s.contains(") Z "));
            assert!(!alive, "{p} still runs");
        }
    }
}
