//! What a container needs before its process starts: directories, localized resources,
//! environment and the `launch_container.sh` script.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Everything the executor needs to run one container (independent of the wire format).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchSpec {
    /// `container_<ts>_<app>_<attempt>_<n>`.
    pub container_id: String,
    /// `application_<ts>_<seq>`.
    pub app_id: String,
    /// The submitting user (processes still run as the NM's user).
    pub user: String,
    /// Shell command line, run by `bash -c`; `<LOG_DIR>` and `<CPS>` are expanded as YARN does.
    pub command: String,
    /// Extra environment from the launch context.
    pub env: BTreeMap<String, String>,
    /// Name in the work directory -> local path or `file://` URL.
    pub local_resources: BTreeMap<String, String>,
    /// Memory limit in bytes; 0 means unlimited.
    pub memory_bytes: u64,
    /// Virtual cores, for the cpu weight.
    pub vcores: u32,
}

/// Where this node keeps container files and how containers reach the NM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeLayout {
    /// The NM's local dir; work dirs live under `usercache/<user>/appcache/<app>/<container>`.
    pub local_dir: PathBuf,
    /// Container logs live under `<log_dir>/<app>/<container>`.
    pub log_dir: PathBuf,
    /// NM_HOST for containers.
    pub nm_host: String,
    /// NM_PORT for containers.
    pub nm_port: u16,
    /// NM_HTTP_PORT for containers (Weft's NM has no web server yet; YARN's default 8042).
    pub nm_http_port: u16,
}

/// Errors preparing a container; nothing of the container is left running.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// An id, resource name or environment name that cannot be used safely.
    #[error("invalid {what} {value:?}: {why}")]
    Invalid {
        /// Which field.
        what: &'static str,
        /// The offending value.
        value: String,
        /// Why it is refused.
        why: &'static str,
    },
    /// A local resource that could not be localized.
    #[error("local resource {name:?} from {source_path}: {error}")]
    Resource {
        /// Name in the work directory.
        name: String,
        /// The path or URL given.
        source_path: String,
        /// What went wrong.
        error: String,
    },
    /// A directory or file of the container could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying failure.
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> LaunchError + '_ {
    move |source| LaunchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Directories and script of a prepared container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prepared {
    pub(crate) work_dir: PathBuf,
    pub(crate) log_dir: PathBuf,
    pub(crate) script: PathBuf,
}

/// Environment names the NM owns; a launch context cannot override them.
const RESERVED: [&str; 11] = [
    "CONTAINER_ID",
    "APPLICATION_ID",
    "APP_SUBMITTER",
    "USER",
    "LOGNAME",
    "NM_HOST",
    "NM_PORT",
    "NM_HTTP_PORT",
    "LOCAL_DIRS",
    "LOG_DIRS",
    "PWD",
];

/// A single path component of our own choosing: no separators, no `..`, no surprises.
fn check_component(what: &'static str, value: &str) -> Result<(), LaunchError> {
    let invalid = |why| LaunchError::Invalid {
        what,
        value: value.to_string(),
        why,
    };
    if value.is_empty() {
        return Err(invalid("empty"));
    }
    if value == "." || value == ".." {
        return Err(invalid("not a file name"));
    }
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(invalid(
            "only letters, digits, '_', '-' and '.' are allowed",
        ));
    }
    Ok(())
}

fn check_env_name(name: &str) -> Result<(), LaunchError> {
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(LaunchError::Invalid {
            what: "environment variable name",
            value: name.to_string(),
            why: "must be a shell identifier",
        })
    }
}

/// Validates everything derived from the request before touching the disk.
pub(crate) fn validate(spec: &LaunchSpec) -> Result<(), LaunchError> {
    check_component("container id", &spec.container_id)?;
    check_component("application id", &spec.app_id)?;
    check_component("user", &spec.user)?;
    for name in spec.local_resources.keys() {
        check_component("local resource name", name)?;
    }
    for name in spec.env.keys() {
        check_env_name(name)?;
    }
    Ok(())
}

/// Single-quotes a value for bash, so nothing in it is expanded.
pub(crate) fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// Double-quotes a launch-context value: like YARN, `$VAR` references still expand
/// (e.g. `CLASSPATH="$PWD/*"`), but quotes and backslashes stay literal.
fn shell_double_quote(value: &str) -> String {
    let mut out = String::from("\"");
    for c in value.chars() {
        if matches!(c, '"' | '\\' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Resolves a local resource given as a path or a `file:` URL.
fn resource_path(source: &str) -> Result<PathBuf, String> {
    let path = if let Some(rest) = source.strip_prefix("file://") {
        // file://host/path is not supported; file:///path has an empty host.
        if !rest.starts_with('/') {
            return Err("only file:///absolute/path URLs are supported".into());
        }
        rest
    } else if let Some(rest) = source.strip_prefix("file:") {
        rest
    } else if source.contains("://") {
        return Err("only local paths and file:// URLs can be localized".into());
    } else {
        source
    };
    let path = PathBuf::from(path);
    if !path.exists() {
        return Err("does not exist".into());
    }
    Ok(path)
}

/// Copies files (so a later change at the source cannot alter a running container) and
/// symlinks directories (copying trees would be slow and they are read-only by contract).
fn localize(work_dir: &Path, name: &str, source: &str) -> Result<(), LaunchError> {
    let err = |error: String| LaunchError::Resource {
        name: name.to_string(),
        source_path: source.to_string(),
        error,
    };
    let from = resource_path(source).map_err(err)?;
    let to = work_dir.join(name);
    if from.is_dir() {
        std::os::unix::fs::symlink(&from, &to).map_err(|e| err(e.to_string()))
    } else {
        fs::copy(&from, &to)
            .map(|_| ())
            .map_err(|e| err(e.to_string()))
    }
}

/// The app-level local dir (YARN's LOCAL_DIRS entry for the app).
pub(crate) fn app_local_dir(layout: &NodeLayout, spec: &LaunchSpec) -> PathBuf {
    layout
        .local_dir
        .join("usercache")
        .join(&spec.user)
        .join("appcache")
        .join(&spec.app_id)
}

/// Expands YARN's command placeholders.
fn expand_command(command: &str, log_dir: &Path) -> String {
    command
        .replace("<LOG_DIR>", &log_dir.to_string_lossy())
        .replace("<CPS>", ":")
}

/// The environment the NM gives every container, before the launch context's own.
pub(crate) fn nm_environment(
    layout: &NodeLayout,
    spec: &LaunchSpec,
    work_dir: &Path,
    log_dir: &Path,
) -> Vec<(String, String)> {
    let mut env = vec![
        ("CONTAINER_ID", spec.container_id.clone()),
        ("APPLICATION_ID", spec.app_id.clone()),
        ("APP_SUBMITTER", spec.user.clone()),
        ("USER", spec.user.clone()),
        ("LOGNAME", spec.user.clone()),
        ("NM_HOST", layout.nm_host.clone()),
        ("NM_PORT", layout.nm_port.to_string()),
        ("NM_HTTP_PORT", layout.nm_http_port.to_string()),
        (
            "LOCAL_DIRS",
            app_local_dir(layout, spec).to_string_lossy().into_owned(),
        ),
        ("LOG_DIRS", log_dir.to_string_lossy().into_owned()),
        ("PWD", work_dir.to_string_lossy().into_owned()),
        ("HOME", work_dir.to_string_lossy().into_owned()),
    ];
    if let Ok(conf) = std::env::var("HADOOP_CONF_DIR") {
        env.push(("HADOOP_CONF_DIR", conf));
    }
    env.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Renders `launch_container.sh`.
///
/// The script joins the container's cgroups itself, first thing: every process it forks
/// afterwards is then born inside the group, which a write of the pid by the NM after
/// spawning could not guarantee (the shell might already have forked).
pub(crate) fn render_script(
    nm_env: &[(String, String)],
    spec: &LaunchSpec,
    work_dir: &Path,
    log_dir: &Path,
    cgroup_procs: &[PathBuf],
) -> String {
    let mut s = String::from("#!/bin/bash\n");
    for procs in cgroup_procs {
        let p = shell_quote(&procs.to_string_lossy());
        s.push_str(&format!(
            "echo $$ > {p} || {{ echo \"weft: cannot join cgroup \"{p} >&2; exit 1; }}\n"
        ));
    }
    s.push_str(&format!(
        "cd {} || exit 1\n",
        shell_quote(&work_dir.to_string_lossy())
    ));
    for (k, v) in nm_env {
        s.push_str(&format!("export {k}={}\n", shell_quote(v)));
    }
    for (k, v) in &spec.env {
        if !RESERVED.contains(&k.as_str()) {
            s.push_str(&format!("export {k}={}\n", shell_double_quote(v)));
        }
    }
    let command = expand_command(&spec.command, log_dir);
    s.push_str(&format!("exec /bin/bash -c {}\n", shell_quote(&command)));
    s
}

/// Creates the directories, localizes resources and writes the script.
pub(crate) fn prepare(
    layout: &NodeLayout,
    spec: &LaunchSpec,
    cgroup_procs: &[PathBuf],
) -> Result<Prepared, LaunchError> {
    validate(spec)?;
    let work_dir = app_local_dir(layout, spec).join(&spec.container_id);
    let log_dir = layout.log_dir.join(&spec.app_id).join(&spec.container_id);
    for dir in [&work_dir, &log_dir] {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    for (name, source) in &spec.local_resources {
        localize(&work_dir, name, source)?;
    }
    let nm_env = nm_environment(layout, spec, &work_dir, &log_dir);
    let script = work_dir.join("launch_container.sh");
    let text = render_script(&nm_env, spec, &work_dir, &log_dir, cgroup_procs);
    fs::write(&script, text).map_err(io_err(&script))?;
    fs::set_permissions(&script, fs::Permissions::from_mode(0o700)).map_err(io_err(&script))?;
    Ok(Prepared {
        work_dir,
        log_dir,
        script,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec {
            container_id: "container_1_0001_01_000002".into(),
            app_id: "application_1_0001".into(),
            user: "alice".into(),
            command: "echo hi 1><LOG_DIR>/out".into(),
            ..LaunchSpec::default()
        }
    }

    #[test]
    fn ids_and_names_that_escape_the_work_dir_are_refused() {
        let mut s = spec();
        s.container_id = "../../etc".into();
        assert!(matches!(validate(&s), Err(LaunchError::Invalid { .. })));
        let mut s = spec();
        s.local_resources.insert("a/b".into(), "/tmp".into());
        assert!(validate(&s).is_err());
        let mut s = spec();
        s.env.insert("BAD-NAME".into(), "x".into());
        assert!(validate(&s).is_err());
        assert!(validate(&spec()).is_ok());
    }

    #[test]
    fn quoting_survives_hostile_values() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_double_quote(r#"a"b\c`d$PWD"#), r#""a\"b\\c\`d$PWD""#);
    }

    #[test]
    fn resources_accept_paths_and_file_urls_only() {
        assert_eq!(resource_path("file:///tmp").unwrap(), PathBuf::from("/tmp"));
        assert_eq!(resource_path("/tmp").unwrap(), PathBuf::from("/tmp"));
        assert!(resource_path("hdfs://nn/x").is_err());
        assert!(resource_path("file://host/tmp").is_err());
        assert!(resource_path("/definitely/not/here").is_err());
    }

    #[test]
    fn script_joins_cgroup_first_and_cannot_override_reserved_names() {
        let layout = NodeLayout {
            local_dir: "/l".into(),
            log_dir: "/g".into(),
            nm_host: "h".into(),
            nm_port: 1,
            nm_http_port: 2,
        };
        let mut s = spec();
        s.env.insert("CONTAINER_ID".into(), "spoofed".into());
        s.env.insert("GREETING".into(), "hello".into());
        let work = Path::new("/w");
        let logs = Path::new("/g/a/c");
        let env = nm_environment(&layout, &s, work, logs);
        let text = render_script(&env, &s, work, logs, &[PathBuf::from("/cg/cgroup.procs")]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("echo $$ > '/cg/cgroup.procs'"));
        assert!(text.contains("export CONTAINER_ID='container_1_0001_01_000002'"));
        assert!(!text.contains("spoofed"));
        assert!(text.contains("export GREETING=\"hello\""));
        assert!(text.contains("export LOCAL_DIRS='/l/usercache/alice/appcache/application_1_0001'"));
        assert!(text.ends_with("exec /bin/bash -c 'echo hi 1>/g/a/c/out'\n"));
    }
}
