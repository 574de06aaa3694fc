//! The user → groups mapping the RM hands its core (Hadoop's `hadoop.security.group.mapping`):
//! placement rules (`primaryGroup`, Capacity's `g:` and `%primary_group` mappings), queue
//! ACLs and `yarn.admin.acl` all read a user's groups, primary group first.
//!
//! As Hadoop's default (`JniBasedUnixGroupsMappingWithFallback`, or the shell-based mapping
//! that runs `id -gn` / `id -Gn`), the groups are the operating system's: the user's primary
//! group from the passwd database, then every group that lists the user as a member. Weft reads
//! `/etc/passwd` and `/etc/group` itself (no process per lookup; directory services behind NSS
//! are not consulted; Weft's `weft.security.group.mapping.passwd-file` and `.group-file` name
//! other files). `hadoop.user.group.static.mapping.overrides` (`user=g1,g2;user2=`,
//! default `dr.who=;`) comes first, as in Hadoop. `NullGroupsMapping` gives nobody groups.
//!
//! Lookups are cached for `hadoop.security.groups.cache.secs` (300 s), users without groups
//! for `hadoop.security.groups.negative-cache.secs` (30 s); the cache holds at most
//! [`MAX_USERS`] users (request input names them, so it is bounded), and `weft rmadmin
//! -refreshUserToGroupsMappings` empties it.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use weft_types::Time;

use crate::settings::SettingsError;

/// Users whose groups are cached at once (and known to the core).
pub(crate) const MAX_USERS: usize = 10_000;

const MAPPING: &str = "hadoop.security.group.mapping";
const OVERRIDES: &str = "hadoop.user.group.static.mapping.overrides";
const CACHE_SECS: &str = "hadoop.security.groups.cache.secs";
const NEGATIVE_CACHE_SECS: &str = "hadoop.security.groups.negative-cache.secs";
const PASSWD_FILE: &str = "weft.security.group.mapping.passwd-file";
const GROUP_FILE: &str = "weft.security.group.mapping.group-file";

/// The mapping classes that mean "the operating system's groups".
const OS_MAPPINGS: &[&str] = &[
    "org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback",
    "org.apache.hadoop.security.JniBasedUnixGroupsMapping",
    "org.apache.hadoop.security.ShellBasedUnixGroupsMapping",
];
const NULL_MAPPING: &str = "org.apache.hadoop.security.NullGroupsMapping";

/// Where groups come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The passwd and group files.
    Os {
        /// The passwd database (`/etc/passwd`).
        passwd: PathBuf,
        /// The group database (`/etc/group`).
        group: PathBuf,
    },
    /// Nobody has groups (beyond the static overrides).
    None,
}

/// The group mapping's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GroupSettings {
    pub(crate) source: Source,
    /// Static overrides, taken before the source.
    pub(crate) overrides: BTreeMap<String, Vec<String>>,
    pub(crate) cache: Duration,
    pub(crate) negative_cache: Duration,
}

impl Default for GroupSettings {
    fn default() -> GroupSettings {
        GroupSettings {
            source: Source::Os {
                passwd: PathBuf::from("/etc/passwd"),
                group: PathBuf::from("/etc/group"),
            },
            overrides: BTreeMap::from([("dr.who".to_string(), Vec::new())]),
            cache: Duration::from_secs(300),
            negative_cache: Duration::from_secs(30),
        }
    }
}

impl GroupSettings {
    /// Reads Hadoop's keys from yarn-site's pairs (Hadoop reads them from core-site; one
    /// Configuration holds both there, so a yarn-site value counts the same).
    pub(crate) fn read(pairs: &BTreeMap<String, String>) -> Result<GroupSettings, SettingsError> {
        let mut s = GroupSettings::default();
        if let Some(class) = pairs.get(MAPPING).map(|v| v.trim()) {
            if class == NULL_MAPPING {
                s.source = Source::None;
            } else if !OS_MAPPINGS.contains(&class) {
                return Err(SettingsError::Invalid(format!(
                    "{MAPPING}: {class} is not supported; Weft maps users to the operating system's groups ({}) or to none ({NULL_MAPPING}), with {OVERRIDES} before either",
                    OS_MAPPINGS.join(", ")
                )));
            }
        }
        if let Source::Os { passwd, group } = &mut s.source {
            for (key, path) in [(PASSWD_FILE, passwd), (GROUP_FILE, group)] {
                if let Some(v) = pairs.get(key).map(|v| v.trim()) {
                    if v.is_empty() {
                        return Err(SettingsError::Invalid(format!("{key} is empty")));
                    }
                    *path = PathBuf::from(v);
                }
            }
        }
        if let Some(v) = pairs.get(OVERRIDES) {
            s.overrides = parse_overrides(v)?;
        }
        let secs = |key: &str, default: Duration| -> Result<Duration, SettingsError> {
            match pairs.get(key).map(|v| v.trim()) {
                None => Ok(default),
                Some(v) => v.parse::<u64>().map(Duration::from_secs).map_err(|_| {
                    SettingsError::Invalid(format!("{key}: '{v}' is not a number of seconds"))
                }),
            }
        };
        s.cache = secs(CACHE_SECS, s.cache)?;
        s.negative_cache = secs(NEGATIVE_CACHE_SECS, s.negative_cache)?;
        Ok(s)
    }
}

/// `user=g1,g2;user2=`: every entry needs its `=`; empty group lists are allowed.
fn parse_overrides(value: &str) -> Result<BTreeMap<String, Vec<String>>, SettingsError> {
    let mut map = BTreeMap::new();
    for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let (user, groups) = entry.split_once('=').ok_or_else(|| {
            SettingsError::Invalid(format!(
                "{OVERRIDES}: entry '{entry}' has no '=' (entries are user=group1,group2 separated by ';')"
            ))
        })?;
        let user = user.trim();
        if user.is_empty() {
            return Err(SettingsError::Invalid(format!(
                "{OVERRIDES}: entry '{entry}' names no user"
            )));
        }
        let groups = groups
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_string)
            .collect();
        map.insert(user.to_string(), groups);
    }
    Ok(map)
}

/// `user`'s groups from the text of a passwd and a group file: the primary group (by the
/// passwd entry's gid) first, then the groups listing the user, each once. An unknown user
/// has none.
pub(crate) fn os_groups(user: &str, passwd: &str, group: &str) -> Vec<String> {
    let gid = passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.first() == Some(&user))
        .and_then(|f| f.get(3).map(|g| g.trim().to_string()));
    let mut primary = None;
    let mut others = Vec::new();
    for line in group.lines() {
        let f: Vec<&str> = line.split(':').collect();
        let (Some(name), Some(id)) = (f.first(), f.get(2)) else {
            continue;
        };
        if name.is_empty() || name.starts_with('#') {
            continue;
        }
        if primary.is_none() && gid.as_deref() == Some(id.trim()) {
            primary = Some(name.to_string());
        } else if f
            .get(3)
            .is_some_and(|m| m.split(',').any(|m| m.trim() == user))
        {
            others.push(name.to_string());
        }
    }
    // A gid with no group entry: `id -gn` prints the number, and so does Hadoop's mapping.
    let primary = primary.or_else(|| gid.clone());
    let mut groups: Vec<String> = primary.into_iter().collect();
    for g in others {
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    if gid.is_none() {
        // Not a user of this machine: `id` would fail, Hadoop finds no groups.
        groups.clear();
    }
    groups
}

/// A cached lookup.
struct Entry {
    groups: Vec<String>,
    at: Time,
}

/// What the core must be told after a lookup.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Change {
    /// The user's groups, when they differ from what the core was last told.
    pub(crate) groups: Option<Vec<String>>,
    /// A user evicted to keep the cache bounded: the core forgets them.
    pub(crate) evicted: Option<String>,
}

/// The cache of users' groups, shared by the RM's handlers.
pub(crate) struct GroupCache {
    settings: GroupSettings,
    entries: Mutex<HashMap<String, Entry>>,
}

impl GroupCache {
    pub(crate) fn new(settings: GroupSettings) -> GroupCache {
        GroupCache {
            settings,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `user`'s cached groups are still fresh at `now`.
    pub(crate) fn fresh(&self, user: &str, now: Time) -> bool {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.get(user).is_some_and(|e| {
            let ttl = if e.groups.is_empty() {
                self.settings.negative_cache
            } else {
                self.settings.cache
            };
            u128::from(now.as_millis().saturating_sub(e.at.as_millis())) < ttl.as_millis()
        })
    }

    /// Looks `user` up (overrides, then the source; reads files, so call it off the async
    /// threads) and records the answer.
    pub(crate) fn resolve(&self, user: &str, now: Time) -> Change {
        let groups = self.lookup(user);
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let mut change = Change::default();
        if !entries.contains_key(user) && entries.len() >= MAX_USERS {
            let oldest = entries
                .iter()
                .min_by_key(|(_, e)| e.at)
                .map(|(u, _)| u.clone());
            if let Some(u) = oldest {
                entries.remove(&u);
                change.evicted = Some(u);
            }
        }
        let previous = entries.insert(
            user.to_string(),
            Entry {
                groups: groups.clone(),
                at: now,
            },
        );
        // A user first seen with no groups changes nothing in the core either.
        let known = previous.map_or_else(Vec::new, |e| e.groups);
        if known != groups {
            change.groups = Some(groups);
        }
        change
    }

    /// Forgets every cached lookup (`-refreshUserToGroupsMappings`); the next request of each
    /// user looks them up again.
    pub(crate) fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    fn lookup(&self, user: &str) -> Vec<String> {
        if let Some(groups) = self.settings.overrides.get(user) {
            return groups.clone();
        }
        match &self.settings.source {
            Source::None => Vec::new(),
            Source::Os { passwd, group } => {
                // Unreadable databases mean no groups, as a failing `id` does in Hadoop.
                let read = |p: &PathBuf| std::fs::read_to_string(p).unwrap_or_default();
                os_groups(user, &read(passwd), &read(group))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\n\
                          alice:x:1000:1000::/home/alice:/bin/sh\n\
                          bob:x:1001:100::/home/bob:/bin/sh\n";
    const GROUP: &str = "root:x:0:\n\
                         users:x:100:alice\n\
                         alice:x:1000:\n\
                         eng:x:2000:bob,alice\n\
                         ops:x:2001: carol , bob\n";

    #[test]
    fn os_groups_put_the_primary_group_first_then_memberships() {
        assert_eq!(os_groups("alice", PASSWD, GROUP), ["alice", "users", "eng"]);
        assert_eq!(os_groups("bob", PASSWD, GROUP), ["users", "eng", "ops"]);
        assert_eq!(os_groups("root", PASSWD, GROUP), ["root"]);
        let orphan = "dave:x:1002:4242::/home/dave:/bin/sh\n";
        assert_eq!(os_groups("dave", orphan, GROUP), ["4242"]);
        // carol is listed in a group but has no passwd entry: not a user here.
        assert!(os_groups("carol", PASSWD, GROUP).is_empty());
        assert!(os_groups("", PASSWD, GROUP).is_empty());
    }

    #[test]
    fn settings_follow_hadoops_keys_and_refuse_what_weft_cannot_do() {
        let pairs = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let d = GroupSettings::read(&pairs(&[])).unwrap();
        assert_eq!(d, GroupSettings::default());
        assert_eq!(d.overrides.get("dr.who"), Some(&Vec::new()));
        let s = GroupSettings::read(&pairs(&[
            (OVERRIDES, "alice=eng,ops; bob=;"),
            (CACHE_SECS, "5"),
            (MAPPING, NULL_MAPPING),
        ]))
        .unwrap();
        assert_eq!(s.source, Source::None);
        assert_eq!(
            s.overrides.get("alice"),
            Some(&vec!["eng".to_string(), "ops".to_string()])
        );
        assert_eq!(s.overrides.get("bob"), Some(&Vec::new()));
        assert_eq!(s.cache, Duration::from_secs(5));
        let err = |kv: &[(&str, &str)]| GroupSettings::read(&pairs(kv)).unwrap_err().to_string();
        assert!(err(&[(OVERRIDES, "alice")]).contains("entry 'alice' has no '='"));
        assert!(err(&[(OVERRIDES, "=eng")]).contains("names no user"));
        assert!(
            err(&[(MAPPING, "org.apache.hadoop.security.LdapGroupsMapping")])
                .contains("LdapGroupsMapping is not supported")
        );
        assert!(err(&[(CACHE_SECS, "soon")]).contains("hadoop.security.groups.cache.secs"));
    }

    fn cache_with(overrides: &str) -> GroupCache {
        GroupCache::new(GroupSettings {
            source: Source::None,
            overrides: parse_overrides(overrides).unwrap(),
            ..GroupSettings::default()
        })
    }

    fn at(t0: Time, ms: u64) -> Time {
        Time(t0.as_millis() + ms)
    }

    #[test]
    fn the_cache_reports_changes_once_and_expires() {
        let cache = cache_with("alice=eng");
        let t0 = Time(1_000_000);
        assert!(!cache.fresh("alice", t0));
        let first = cache.resolve("alice", t0);
        assert_eq!(first.groups, Some(vec!["eng".to_string()]));
        assert!(cache.fresh("alice", at(t0, 299_000)));
        assert!(!cache.fresh("alice", at(t0, 300_000)));
        // Looked up again with the same answer: nothing to tell the core.
        assert_eq!(cache.resolve("alice", t0), Change::default());
        // No groups: nothing to tell, and the shorter negative expiry.
        assert_eq!(cache.resolve("nobody", t0), Change::default());
        assert!(!cache.fresh("nobody", at(t0, 30_000)));
        cache.clear();
        assert!(!cache.fresh("alice", t0));
    }

    #[test]
    fn the_cache_stays_bounded_and_says_whom_it_forgot() {
        let cache = cache_with("");
        let t0 = Time(1_000_000);
        for i in 0..MAX_USERS {
            cache.resolve(&format!("u{i}"), at(t0, i as u64));
        }
        let change = cache.resolve("late", at(t0, 60_000));
        assert_eq!(change.evicted.as_deref(), Some("u0"));
        let len = cache
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        assert_eq!(len, MAX_USERS);
    }
}
