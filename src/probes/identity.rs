//! Probe: who is asking — the uid and groups whose access to the GPU is judged.
//! `--user NAME` judges another account (read from the inspected /etc/passwd and /etc/group).

use std::collections::BTreeMap;
use std::path::Path;

use crate::facts::identity::Identity;
use crate::fsys::HostFs;

/// Account databases read once and shared with the probes that name owners and groups.
#[derive(Debug, Clone, Default)]
pub struct Accounts {
    pub users: BTreeMap<u32, String>,
    pub groups: BTreeMap<u32, String>,
    /// name → (uid, gid, line number): the first line wins, as with getpwnam(3).
    users_by_name: BTreeMap<String, (u32, u32, usize)>,
    members: BTreeMap<u32, Vec<String>>,
    /// Why /etc/passwd could not be read, so an unknown --user says so.
    passwd_error: Option<String>,
}

impl Accounts {
    pub fn read(fs: &HostFs) -> Accounts {
        let mut acc = Accounts::default();
        let passwd = fs.read_text(Path::new("/etc/passwd"));
        acc.passwd_error = passwd.as_ref().err().map(|e| e.to_string());
        if let Ok(f) = passwd {
            for (line_no, line) in f.text.lines().enumerate() {
                let parts: Vec<&str> = line.split(':').collect();
                if parts.len() < 4 {
                    continue;
                }
                if let (Ok(uid), Ok(gid)) = (parts[2].parse::<u32>(), parts[3].parse::<u32>()) {
                    acc.users.entry(uid).or_insert_with(|| parts[0].to_string());
                    acc.users_by_name
                        .entry(parts[0].to_string())
                        .or_insert((uid, gid, line_no));
                }
            }
        }
        if let Ok(f) = fs.read_text(Path::new("/etc/group")) {
            for line in f.text.lines() {
                let parts: Vec<&str> = line.split(':').collect();
                if parts.len() < 3 {
                    continue;
                }
                if let Ok(gid) = parts[2].parse::<u32>() {
                    acc.groups
                        .entry(gid)
                        .or_insert_with(|| parts[0].to_string());
                    let members = parts
                        .get(3)
                        .map(|m| {
                            m.split(',')
                                .filter(|s| !s.is_empty())
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default();
                    acc.members.insert(gid, members);
                }
            }
        }
        acc
    }

    pub fn group_name(&self, gid: u32) -> Option<&str> {
        self.groups.get(&gid).map(String::as_str)
    }

    pub fn user_name(&self, uid: u32) -> Option<&str> {
        self.users.get(&uid).map(String::as_str)
    }
}

#[derive(Debug, thiserror::Error)]
#[error(
    "--user {0}: no such user in /etc/passwd{1} (a numeric UID or UID:GID works without an entry)"
)]
pub struct UnknownUser(pub String, pub String);

pub fn probe(
    fs: &HostFs,
    accounts: &Accounts,
    user: Option<&str>,
) -> Result<Identity, UnknownUser> {
    match user {
        Some(spec) => for_user(fs, accounts, spec),
        None => Ok(for_process(fs, accounts)),
    }
}

fn for_user(fs: &HostFs, accounts: &Accounts, spec: &str) -> Result<Identity, UnknownUser> {
    // `NAME`, `UID`, or `UID:GID` for an account without a passwd entry (arbitrary container uids).
    let by_name = accounts
        .users_by_name
        .get(spec)
        .map(|&(uid, gid, _)| (Some(spec.to_string()), uid, gid, None));
    let numeric = || -> Option<(Option<String>, u32, u32, Option<&'static str>)> {
        let (uid, gid) = match spec.split_once(':') {
            Some((u, g)) => (u.parse().ok()?, Some(g.parse().ok()?)),
            None => (spec.parse().ok()?, None),
        };
        let first = accounts
            .users_by_name
            .iter()
            .filter(|(_, (u, _, _))| *u == uid)
            .min_by_key(|(_, (_, _, line))| *line);
        Some(match (first, gid) {
            (Some((name, (_, g, _))), None) => (Some(name.clone()), uid, *g, None),
            (Some((name, _)), Some(g)) => (Some(name.clone()), uid, g, None),
            (None, Some(g)) => (None, uid, g, Some("no passwd entry; gid given")),
            (None, None) => (
                None,
                uid,
                uid,
                Some("no passwd entry; gid assumed equal to uid"),
            ),
        })
    };
    let Some((name, uid, gid, note)) = by_name.or_else(numeric) else {
        let mut where_ = fs
            .root()
            .map(|r| format!(" under {}", r.display()))
            .unwrap_or_default();
        if let Some(e) = &accounts.passwd_error {
            where_.push_str(&format!(" ({e})"));
        }
        return Err(UnknownUser(spec.to_string(), where_));
    };
    let mut groups: Vec<u32> = match &name {
        Some(name) => accounts
            .members
            .iter()
            .filter(|(_, m)| m.contains(name))
            .map(|(g, _)| *g)
            .collect(),
        None => Vec::new(),
    };
    groups.push(gid);
    groups.sort_unstable();
    groups.dedup();
    let mut source = "--user, from /etc/passwd and /etc/group".to_string();
    if let Some(note) = note {
        source = format!("--user ({note})");
    }
    Ok(Identity {
        uid,
        gid,
        groups,
        user_name: name,
        source,
        is_process: false,
        in_user_namespace: None,
    })
}

fn for_process(fs: &HostFs, accounts: &Accounts) -> Identity {
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    let mut groups = process_groups();
    groups.push(gid);
    groups.sort_unstable();
    groups.dedup();
    let in_user_namespace = if fs.root().is_none() {
        fs.read_text(Path::new("/proc/self/uid_map"))
            .ok()
            .map(|f| !is_initial_uid_map(&f.text))
    } else {
        None
    };
    Identity {
        uid,
        gid,
        groups,
        user_name: accounts.user_name(uid).map(str::to_string),
        source: "process credentials (geteuid, getgroups)".to_string(),
        is_process: true,
        in_user_namespace,
    }
}

fn process_groups() -> Vec<u32> {
    rustix::process::getgroups()
        .map(|groups| {
            groups
                .into_iter()
                .map(rustix::process::Gid::as_raw)
                .collect()
        })
        .unwrap_or_default()
}

/// The initial user namespace maps every id to itself: `0 0 4294967295`.
fn is_initial_uid_map(text: &str) -> bool {
    let fields: Vec<&str> = text.split_whitespace().collect();
    fields == ["0", "0", "4294967295"]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_map() {
        assert!(is_initial_uid_map("         0          0 4294967295\n"));
        assert!(!is_initial_uid_map("         0       1000          1\n"));
    }
}
