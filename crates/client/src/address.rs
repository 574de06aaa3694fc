//! Where the ResourceManager's web address comes from: `--rm`, else `WEFT_RM`, else
//! yarn-site.xml in `HADOOP_CONF_DIR`, else [`DEFAULT_RM`].

use std::collections::HashMap;
use std::path::Path;

use crate::ClientError;

/// The RM address when nothing names one (YARN's default web port on this machine).
pub const DEFAULT_RM: &str = "http://127.0.0.1:8088";

/// YARN's default RM web port, used with `yarn.resourcemanager.hostname`.
const WEB_PORT: u16 = 8088;
/// YARN's default RM HTTPS web port.
const HTTPS_WEB_PORT: u16 = 8090;

/// Picks the RM base URL from the sources in priority order. Each argument is what that source
/// holds (`None` or empty when unset); taking them as inputs keeps the choice testable without
/// touching the process environment.
pub fn resolve_rm(
    flag: Option<&str>,
    env: Option<&str>,
    hadoop_conf_dir: Option<&Path>,
) -> Result<String, ClientError> {
    let given = |v: Option<&str>| {
        v.map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    if let Some(url) = given(flag) {
        return normalize_url(&url);
    }
    if let Some(url) = given(env) {
        return normalize_url(&url).map_err(|e| ClientError::Config(format!("WEFT_RM: {e}")));
    }
    if let Some(dir) = hadoop_conf_dir.filter(|d| !d.as_os_str().is_empty()) {
        let site = dir.join("yarn-site.xml");
        // A conf dir without yarn-site.xml is normal (only core-site, say): fall through.
        if let Ok(text) = std::fs::read_to_string(&site) {
            let found = rm_from_site_xml(&text)
                .map_err(|e| ClientError::Config(format!("{}: {e}", site.display())))?;
            if let Some(url) = found {
                return normalize_url(&url)
                    .map_err(|e| ClientError::Config(format!("{}: {e}", site.display())));
            }
        }
    }
    Ok(DEFAULT_RM.to_string())
}

/// `host:port` becomes `http://host:port`; a trailing `/` goes. Anything but http(s) is refused.
pub fn normalize_url(text: &str) -> Result<String, ClientError> {
    let text = text.trim().trim_end_matches('/');
    let url = if text.contains("://") {
        text.to_string()
    } else {
        format!("http://{text}")
    };
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| {
            ClientError::Config(format!(
                "the RM address '{text}' must be http://host:port (or a bare host:port)"
            ))
        })?;
    if rest.is_empty() || rest.starts_with(':') || rest.contains(char::is_whitespace) {
        return Err(ClientError::Config(format!(
            "the RM address '{text}' has no host"
        )));
    }
    Ok(url)
}

/// The RM web URL a yarn-site.xml text names, if any: the HTTPS address under
/// `yarn.http.policy=HTTPS_ONLY`, the first RM of an HA pair, else
/// `yarn.resourcemanager.webapp.address`, else `yarn.resourcemanager.hostname` with port 8088.
/// `${name}` references to other properties of the file are expanded; a wildcard bind host
/// (0.0.0.0) is replaced by the RM host name (or 127.0.0.1).
pub fn rm_from_site_xml(text: &str) -> Result<Option<String>, String> {
    let props = site_properties(text)?;
    let get = |name: &str| {
        props
            .get(name)
            .map(|v| expand(v, &props))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let https = get("yarn.http.policy").is_some_and(|p| p.eq_ignore_ascii_case("HTTPS_ONLY"));
    let (address_key, scheme, port) = if https {
        (
            "yarn.resourcemanager.webapp.https.address",
            "https",
            HTTPS_WEB_PORT,
        )
    } else {
        ("yarn.resourcemanager.webapp.address", "http", WEB_PORT)
    };
    // HA: the CLI has no failover, so it asks the first RM (a standby redirects to the active).
    let suffix = get("yarn.resourcemanager.ha.enabled")
        .filter(|v| v.eq_ignore_ascii_case("true"))
        .and_then(|_| get("yarn.resourcemanager.ha.rm-ids"))
        .and_then(|ids| {
            ids.split(',')
                .map(str::trim)
                .find(|s| !s.is_empty())
                .map(|id| format!(".{id}"))
        })
        .unwrap_or_default();
    let hostname = get(&format!("yarn.resourcemanager.hostname{suffix}"))
        .or_else(|| get("yarn.resourcemanager.hostname"));
    let address = get(&format!("{address_key}{suffix}"))
        .or_else(|| get(address_key))
        .or_else(|| hostname.as_ref().map(|h| format!("{h}:{port}")));
    let Some(address) = address else {
        return Ok(None);
    };
    let address = address
        .trim_start_matches("http://")
        .trim_start_matches("https://");
    let address = match address.strip_prefix("0.0.0.0:") {
        Some(port) => format!("{}:{port}", hostname.as_deref().unwrap_or("127.0.0.1")),
        None => address.to_string(),
    };
    Ok(Some(format!("{scheme}://{address}")))
}

/// The `<property>` name/value pairs of a Hadoop configuration file.
fn site_properties(text: &str) -> Result<HashMap<String, String>, String> {
    let doc = roxmltree::Document::parse(text).map_err(|e| format!("not valid XML: {e}"))?;
    let mut props = HashMap::new();
    for prop in doc
        .root_element()
        .children()
        .filter(|c| c.has_tag_name("property"))
    {
        let child = |tag: &str| {
            prop.children()
                .find(|c| c.has_tag_name(tag))
                .map(|c| c.text().unwrap_or_default().trim().to_string())
        };
        if let (Some(name), Some(value)) = (child("name"), child("value")) {
            props.insert(name, value);
        }
    }
    Ok(props)
}

/// Expands `${name}` from `props`, a few levels deep (Hadoop stops at 20; cycles end here too).
fn expand(value: &str, props: &HashMap<String, String>) -> String {
    let mut v = value.to_string();
    for _ in 0..20 {
        let Some(start) = v.find("${") else { break };
        let Some(len) = v[start..].find('}') else {
            break;
        };
        let name = &v[start + 2..start + len];
        let Some(sub) = props.get(name) else { break };
        v = format!("{}{}{}", &v[..start], sub, &v[start + len + 1..]);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(props: &[(&str, &str)]) -> String {
        let body: String = props
            .iter()
            .map(|(n, v)| format!("<property><name>{n}</name><value>{v}</value></property>\n"))
            .collect();
        format!("<?xml version=\"1.0\"?>\n<configuration>\n{body}</configuration>\n")
    }

    fn conf_dir(props: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("yarn-site.xml"), site(props)).expect("write");
        dir
    }

    #[test]
    fn flag_beats_env_beats_site_beats_default() {
        let dir = conf_dir(&[("yarn.resourcemanager.webapp.address", "site-rm:8188")]);
        let d = Some(dir.path());
        let r = |f, e, d| resolve_rm(f, e, d).expect("resolves");
        assert_eq!(r(Some("flag:1"), Some("env:2"), d), "http://flag:1");
        assert_eq!(r(None, Some("http://env:2/"), d), "http://env:2");
        assert_eq!(r(Some(""), Some(" "), d), "http://site-rm:8188");
        assert_eq!(r(None, None, d), "http://site-rm:8188");
        assert_eq!(r(None, None, None), DEFAULT_RM);
        let empty = tempfile::tempdir().expect("tempdir");
        assert_eq!(r(None, None, Some(empty.path())), DEFAULT_RM);
    }

    #[test]
    fn site_hostname_gets_the_default_web_port() {
        let xml = site(&[("yarn.resourcemanager.hostname", "master")]);
        assert_eq!(
            rm_from_site_xml(&xml).expect("parses").as_deref(),
            Some("http://master:8088")
        );
        let xml = site(&[
            ("yarn.resourcemanager.hostname", "master"),
            (
                "yarn.resourcemanager.webapp.address",
                "${yarn.resourcemanager.hostname}:9000",
            ),
        ]);
        assert_eq!(
            rm_from_site_xml(&xml).expect("parses").as_deref(),
            Some("http://master:9000")
        );
        let xml = site(&[
            ("yarn.resourcemanager.hostname", "master"),
            ("yarn.resourcemanager.webapp.address", "0.0.0.0:8088"),
        ]);
        assert_eq!(
            rm_from_site_xml(&xml).expect("parses").as_deref(),
            Some("http://master:8088")
        );
        assert_eq!(
            rm_from_site_xml(&site(&[("yarn.x", "y")])).expect("parses"),
            None
        );
    }

    #[test]
    fn site_https_and_ha() {
        let xml = site(&[
            ("yarn.http.policy", "HTTPS_ONLY"),
            ("yarn.resourcemanager.hostname", "secure"),
        ]);
        assert_eq!(
            rm_from_site_xml(&xml).expect("parses").as_deref(),
            Some("https://secure:8090")
        );
        let xml = site(&[
            ("yarn.resourcemanager.ha.enabled", "true"),
            ("yarn.resourcemanager.ha.rm-ids", "rm1,rm2"),
            ("yarn.resourcemanager.hostname.rm1", "a"),
            ("yarn.resourcemanager.hostname.rm2", "b"),
        ]);
        assert_eq!(
            rm_from_site_xml(&xml).expect("parses").as_deref(),
            Some("http://a:8088")
        );
    }

    #[test]
    fn bad_sources_are_errors_naming_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("yarn-site.xml"), "<configuration><oops>").expect("write");
        let e = resolve_rm(None, None, Some(dir.path())).expect_err("malformed");
        assert!(e.to_string().contains("yarn-site.xml"), "{e}");
        let e = resolve_rm(None, Some("ftp://x:1"), None).expect_err("bad scheme");
        assert!(e.to_string().starts_with("WEFT_RM"), "{e}");
        assert!(normalize_url(":8088").is_err());
        assert_eq!(normalize_url("https://h:1/").expect("ok"), "https://h:1");
    }
}
