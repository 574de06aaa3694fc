//! What a container needs before its process starts: directories (its work dir with a
//! `tmp/`, its log dir), localized resources ([`crate::localize`]), the `container_tokens`
//! file, the environment YARN gives containers and the `launch_container.sh` script.
//!
//! Hadoop's markers are expanded in the command and in every environment value as Hadoop's
//! `ContainerLaunch.expandEnvironment` does: `<LOG_DIR>` → the log dir, `<CPS>` → `:`,
//! `{{` → `$` and `}}` → nothing (so `{{PWD}}` becomes `$PWD`, expanded by the shell).

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::localize::{self, LocalResourceSpec};

/// Everything the executor needs to run one container (independent of the wire format).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchSpec {
    /// `container_<ts>_<app>_<attempt>_<n>`.
    pub container_id: String,
    /// `application_<ts>_<seq>`.
    pub app_id: String,
    /// The submitting user (processes still run as the NM's user).
    pub user: String,
    /// Shell command line, run by `bash -c`; Hadoop's markers are expanded.
    pub command: String,
    /// Extra environment from the launch context (markers expanded).
    pub env: BTreeMap<String, String>,
    /// Link name (a relative path) in the work directory -> the resource placed there.
    pub local_resources: BTreeMap<String, LocalResourceSpec>,
    /// The launch context's `tokens` (a Hadoop `Credentials` stream), written verbatim to
    /// `container_tokens` (named by `HADOOP_TOKEN_FILE_LOCATION`).
    pub tokens: Vec<u8>,
    /// Write the command and environment values inside double quotes verbatim, as Hadoop's
    /// NM does, for launch contexts written for Hadoop (Spark escapes its arguments for exactly
    /// that); otherwise the command is single-quoted and values keep quotes literally.
    pub hadoop_quoting: bool,
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
    /// NM_HTTP_PORT for containers (YARN's default 8042).
    pub nm_http_port: u16,
    /// JAVA_HOME for containers whose launch context sets none (Hadoop passes the NM's own
    /// through `yarn.nodemanager.env-whitelist`); `None` leaves it unset.
    pub java_home: Option<String>,
    /// Bounds on what one archive may unpack to.
    pub archive_limits: localize::Limits,
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
        error: localize::LocalizeError,
    },
    /// The request is larger than a container launch may be.
    #[error("{what}: {size}, more than the {limit} allowed")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its size.
        size: usize,
        /// The bound.
        limit: usize,
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

/// Environment names the NM owns; a launch context cannot override them (Hadoop's
/// `sanitizeEnv` sets these over whatever the application sent).
const RESERVED: [&str; 15] = [
    "CONTAINER_ID",
    "APPLICATION_ID",
    "APP_SUBMITTER",
    "USER",
    "LOGNAME",
    "HOME",
    "NM_HOST",
    "NM_PORT",
    "NM_HTTP_PORT",
    "LOCAL_DIRS",
    "LOCAL_USER_DIRS",
    "LOG_DIRS",
    "PWD",
    "HADOOP_TOKEN_FILE_LOCATION",
    "JVM_PID",
];

/// Names the NM sets over the application's value only when it has one itself (Hadoop's
/// `putEnvIfNotNull`).
const RESERVED_WHEN_SET: [&str; 1] = ["HADOOP_CONF_DIR"];

/// Files and directories the NM writes in the work directory; no resource may take them.
const NM_FILES: [&str; 3] = [SCRIPT_FILE, TOKENS_FILE, TMP_DIR];
const SCRIPT_FILE: &str = "launch_container.sh";
/// Hadoop's `ContainerLaunch.FINAL_CONTAINER_TOKENS_FILE`.
const TOKENS_FILE: &str = "container_tokens";
/// Hadoop's `YarnConfiguration.DEFAULT_CONTAINER_TEMP_DIR`.
const TMP_DIR: &str = "tmp";

/// Bounds on one launch request (the IPC packet bound, 8 MiB, caps them all together).
const MAX_RESOURCES: usize = 1_000;
const MAX_ENV_VARS: usize = 1_000;
const MAX_ENV_BYTES: usize = 1 << 20;
const MAX_COMMAND_BYTES: usize = 1 << 20;
const MAX_TOKENS_BYTES: usize = 1 << 20;
const MAX_LINK_NAME_BYTES: usize = 1024;

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

/// A link name: a relative path inside the work directory (Hadoop allows subdirectories),
/// never `..`, absolute, or one of the NM's own files.
fn check_link_name(name: &str) -> Result<(), LaunchError> {
    let invalid = |why| LaunchError::Invalid {
        what: "local resource name",
        value: name.to_string(),
        why,
    };
    if name.len() > MAX_LINK_NAME_BYTES {
        return Err(invalid("longer than 1024 bytes"));
    }
    if name.contains('\0') || name.contains('\n') {
        return Err(invalid("contains a NUL or newline"));
    }
    if name.starts_with('/') {
        return Err(invalid("absolute paths are not allowed"));
    }
    // One spelling per path, so two names never place two resources at one spot.
    if name.ends_with('/') || name.contains("//") {
        return Err(invalid("empty path components are not allowed"));
    }
    let mut parts = 0;
    for c in Path::new(name).components() {
        match c {
            Component::Normal(_) => parts += 1,
            _ => return Err(invalid("'.', '..' and absolute paths are not allowed")),
        }
    }
    if parts == 0 {
        return Err(invalid("empty"));
    }
    if NM_FILES.iter().any(|f| Path::new(name).starts_with(f)) {
        return Err(invalid("the NodeManager writes a file of that name"));
    }
    Ok(())
}

/// No link may lie inside another: the outer one may be a symbolic link to a directory
/// outside the work dir, and placing the inner one would write there.
fn check_no_nested_links(spec: &LaunchSpec) -> Result<(), LaunchError> {
    for name in spec.local_resources.keys() {
        let nested = Path::new(name)
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .any(|a| spec.local_resources.contains_key(&*a.to_string_lossy()));
        if nested {
            return Err(LaunchError::Invalid {
                what: "local resource name",
                value: name.clone(),
                why: "inside another resource's link",
            });
        }
    }
    Ok(())
}

fn check_size(what: &'static str, size: usize, limit: usize) -> Result<(), LaunchError> {
    if size > limit {
        return Err(LaunchError::TooLarge { what, size, limit });
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
    check_size("local resources", spec.local_resources.len(), MAX_RESOURCES)?;
    for name in spec.local_resources.keys() {
        check_link_name(name)?;
    }
    check_no_nested_links(spec)?;
    check_size("environment variables", spec.env.len(), MAX_ENV_VARS)?;
    let env_bytes = spec.env.iter().map(|(k, v)| k.len() + v.len()).sum();
    check_size("environment bytes", env_bytes, MAX_ENV_BYTES)?;
    for name in spec.env.keys() {
        check_env_name(name)?;
    }
    check_size("command bytes", spec.command.len(), MAX_COMMAND_BYTES)?;
    check_size("token bytes", spec.tokens.len(), MAX_TOKENS_BYTES)?;
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

/// Places one resource under its link name (parents of a nested link name are created).
fn localize_one(
    work_dir: &Path,
    name: &str,
    resource: &LocalResourceSpec,
    limits: &localize::Limits,
) -> Result<(), LaunchError> {
    let to = work_dir.join(name);
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    localize::localize(resource, &to, limits).map_err(|error| LaunchError::Resource {
        name: name.to_string(),
        source_path: resource.url.clone(),
        error,
    })
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

/// Hadoop's `expandEnvironment`, for the command and every environment value. `<ADD_OPENS>`
/// (Hadoop 3.4+, the JDK 17 module options) becomes nothing: Weft adds no JVM options.
pub(crate) fn expand(value: &str, log_dir: &Path) -> String {
    value
        .replace("<LOG_DIR>", &log_dir.to_string_lossy())
        .replace("<CPS>", ":")
        .replace("<ADD_OPENS>", "")
        .replace("{{", "$")
        .replace("}}", "")
}

/// The environment the NM gives every container, before the launch context's own.
pub(crate) fn nm_environment(
    layout: &NodeLayout,
    spec: &LaunchSpec,
    work_dir: &Path,
    log_dir: &Path,
) -> Vec<(String, String)> {
    let user_dir = layout.local_dir.join("usercache").join(&spec.user);
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
        (
            "LOCAL_USER_DIRS",
            format!("{}/", user_dir.to_string_lossy()),
        ),
        ("LOG_DIRS", log_dir.to_string_lossy().into_owned()),
        ("PWD", work_dir.to_string_lossy().into_owned()),
        // Hadoop's default is `yarn.nodemanager.user-home-dir`, "/home/"; a writable home
        // inside the container serves tools that keep caches there.
        ("HOME", work_dir.to_string_lossy().into_owned()),
        (
            "HADOOP_TOKEN_FILE_LOCATION",
            work_dir.join(TOKENS_FILE).to_string_lossy().into_owned(),
        ),
    ];
    if let Ok(conf) = std::env::var("HADOOP_CONF_DIR") {
        env.push(("HADOOP_CONF_DIR", conf));
    }
    // Whitelisted, as Hadoop's `yarn.nodemanager.env-whitelist`: the application's own
    // value wins (its exports come later in the script).
    if let Some(java_home) = &layout.java_home {
        env.push(("JAVA_HOME", java_home.clone()));
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
    s.push_str("export JVM_PID=\"$$\"\n");
    for (k, v) in &spec.env {
        let nm_sets = |name: &str| nm_env.iter().any(|(n, _)| n == name);
        let owned = RESERVED.contains(&k.as_str())
            || (RESERVED_WHEN_SET.contains(&k.as_str()) && nm_sets(k));
        if !owned {
            let v = expand(v, log_dir);
            let quoted = if spec.hadoop_quoting {
                format!("\"{v}\"")
            } else {
                shell_double_quote(&v)
            };
            s.push_str(&format!("export {k}={quoted}\n"));
        }
    }
    let command = expand(&spec.command, log_dir);
    if spec.hadoop_quoting {
        s.push_str(&format!("exec /bin/bash -c \"{command}\"\n"));
    } else {
        s.push_str(&format!("exec /bin/bash -c {}\n", shell_quote(&command)));
    }
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
    let tmp_dir = work_dir.join(TMP_DIR);
    for dir in [&work_dir, &log_dir, &tmp_dir] {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    for (name, resource) in &spec.local_resources {
        localize_one(&work_dir, name, resource, &layout.archive_limits)?;
    }
    let tokens = work_dir.join(TOKENS_FILE);
    fs::write(&tokens, &spec.tokens).map_err(io_err(&tokens))?;
    fs::set_permissions(&tokens, fs::Permissions::from_mode(0o600)).map_err(io_err(&tokens))?;
    let nm_env = nm_environment(layout, spec, &work_dir, &log_dir);
    let script = work_dir.join(SCRIPT_FILE);
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

    fn layout() -> NodeLayout {
        NodeLayout {
            local_dir: "/l".into(),
            log_dir: "/g".into(),
            nm_host: "h".into(),
            nm_port: 1,
            nm_http_port: 2,
            java_home: Some("/usr/lib/jvm/java-17".into()),
            archive_limits: localize::Limits::default(),
        }
    }

    fn file(url: &str) -> LocalResourceSpec {
        LocalResourceSpec::file(url)
    }

    #[test]
    fn ids_and_names_that_escape_the_work_dir_are_refused() {
        let mut s = spec();
        s.container_id = "../../etc".into();
        assert!(matches!(validate(&s), Err(LaunchError::Invalid { .. })));
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "",
            ".",
            "tmp",
            "tmp/x",
            "container_tokens",
            "launch_container.sh",
        ] {
            let mut s = spec();
            s.local_resources.insert(bad.into(), file("/tmp"));
            assert!(validate(&s).is_err(), "{bad:?} accepted");
        }
        let mut s = spec();
        s.local_resources
            .insert("lib/dep-1.0+x.jar".into(), file("/tmp"));
        s.local_resources
            .insert("__spark_conf__".into(), file("/tmp"));
        assert!(validate(&s).is_ok());
        let mut s = spec();
        s.env.insert("BAD-NAME".into(), "x".into());
        assert!(validate(&s).is_err());
        assert!(validate(&spec()).is_ok());
    }

    #[test]
    fn oversized_requests_are_refused() {
        let mut s = spec();
        for i in 0..=MAX_RESOURCES {
            s.local_resources.insert(format!("r{i}"), file("/tmp"));
        }
        assert!(matches!(validate(&s), Err(LaunchError::TooLarge { .. })));
        let mut s = spec();
        s.env.insert("BIG".into(), "x".repeat(MAX_ENV_BYTES));
        assert!(matches!(validate(&s), Err(LaunchError::TooLarge { .. })));
        let mut s = spec();
        s.tokens = vec![0; MAX_TOKENS_BYTES + 1];
        assert!(matches!(validate(&s), Err(LaunchError::TooLarge { .. })));
    }

    #[test]
    fn quoting_survives_hostile_values() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_double_quote(r#"a"b\c`d$PWD"#), r#""a\"b\\c\`d$PWD""#);
    }

    #[test]
    fn hadoops_markers_expand_as_hadoop_expands_them() {
        let logs = Path::new("/g/a/c");
        assert_eq!(
            expand("{{JAVA_HOME}}/bin/java -Djava.io.tmpdir={{PWD}}/tmp -cp {{PWD}}<CPS>{{PWD}}/__spark_conf__<CPS>* 1><LOG_DIR>/stdout", logs),
            "$JAVA_HOME/bin/java -Djava.io.tmpdir=$PWD/tmp -cp $PWD:$PWD/__spark_conf__:* 1>/g/a/c/stdout"
        );
        assert_eq!(expand("<ADD_OPENS> x", logs), " x");
        // Hadoop replaces the two markers independently.
        assert_eq!(expand("a}}b{{c", logs), "ab$c");
    }

    #[test]
    fn script_joins_cgroup_first_and_cannot_override_reserved_names() {
        let mut s = spec();
        s.env.insert("CONTAINER_ID".into(), "spoofed".into());
        s.env
            .insert("HADOOP_TOKEN_FILE_LOCATION".into(), "spoofed".into());
        s.env.insert("GREETING".into(), "hello".into());
        s.env.insert("CLASSPATH".into(), "{{PWD}}<CPS>*".into());
        let work = Path::new("/w");
        let logs = Path::new("/g/a/c");
        let env = nm_environment(&layout(), &s, work, logs);
        let text = render_script(&env, &s, work, logs, &[PathBuf::from("/cg/cgroup.procs")]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("echo $$ > '/cg/cgroup.procs'"));
        assert!(text.contains("export CONTAINER_ID='container_1_0001_01_000002'"));
        assert!(!text.contains("spoofed"));
        assert!(text.contains("export GREETING=\"hello\""));
        assert!(text.contains("export CLASSPATH=\"$PWD:*\""));
        assert!(text.contains("export LOCAL_DIRS='/l/usercache/alice/appcache/application_1_0001'"));
        assert!(text.contains("export LOCAL_USER_DIRS='/l/usercache/alice/'"));
        assert!(text.contains("export HADOOP_TOKEN_FILE_LOCATION='/w/container_tokens'"));
        assert!(text.contains("export JAVA_HOME='/usr/lib/jvm/java-17'"));
        assert!(text.contains("export JVM_PID=\"$$\""));
        assert!(text.ends_with("exec /bin/bash -c 'echo hi 1>/g/a/c/out'\n"));
    }

    #[test]
    fn the_apps_hadoop_conf_dir_stands_unless_the_nm_has_one() {
        let mut s = spec();
        s.env.insert("HADOOP_CONF_DIR".into(), "/app/conf".into());
        let work = Path::new("/w");
        let logs = Path::new("/g/a/c");
        let text = render_script(&[], &s, work, logs, &[]);
        assert!(
            text.contains("export HADOOP_CONF_DIR=\"/app/conf\""),
            "{text}"
        );
        let nm = [("HADOOP_CONF_DIR".to_string(), "/nm/conf".to_string())];
        let text = render_script(&nm, &s, work, logs, &[]);
        assert!(text.contains("export HADOOP_CONF_DIR='/nm/conf'"), "{text}");
        assert!(!text.contains("/app/conf"), "{text}");
    }

    #[test]
    fn hadoop_quoting_writes_the_command_and_values_as_hadoop_does() {
        let mut s = spec();
        s.hadoop_quoting = true;
        // What Spark's escapeForShell makes of the argument `a$b "c"`.
        s.command = r#"{{JAVA_HOME}}/bin/java 'a\$b \"c\"' 1><LOG_DIR>/stdout"#.into();
        s.env.insert("SPARK_USER".into(), "alice".into());
        let work = Path::new("/w");
        let logs = Path::new("/g/a/c");
        let env = nm_environment(&layout(), &s, work, logs);
        let text = render_script(&env, &s, work, logs, &[]);
        assert!(text.contains("export SPARK_USER=\"alice\"\n"));
        assert!(text.ends_with(
            "exec /bin/bash -c \"$JAVA_HOME/bin/java 'a\\$b \\\"c\\\"' 1>/g/a/c/stdout\"\n"
        ));
    }

    #[test]
    fn prepare_makes_tmp_the_token_file_and_nested_links() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("dep.jar");
        std::fs::write(&src, "jar").unwrap();
        let mut layout = layout();
        layout.local_dir = dir.path().join("local");
        layout.log_dir = dir.path().join("logs");
        let mut s = spec();
        s.tokens = b"HDTS\x00tokens".to_vec();
        s.local_resources.insert(
            "lib/dep.jar".into(),
            file(&format!("file://{}", src.display())),
        );
        let p = prepare(&layout, &s, &[]).unwrap();
        assert!(p.work_dir.join("tmp").is_dir());
        assert_eq!(
            std::fs::read_to_string(p.work_dir.join("lib/dep.jar")).unwrap(),
            "jar"
        );
        let tokens = p.work_dir.join("container_tokens");
        assert_eq!(std::fs::read(&tokens).unwrap(), b"HDTS\x00tokens");
        let mode = std::fs::metadata(&tokens).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
