//! `<data-dir>/hadoop-conf/`: the configuration Hadoop's own clients (YarnClient,
//! spark-submit) read through `HADOOP_CONF_DIR` to find the cluster `weft up` started.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Where the cluster's RM listens, as clients should dial it.
pub(crate) struct RmAddresses<'a> {
    /// ApplicationClientProtocol (`yarn.resourcemanager.address`).
    pub(crate) client: &'a str,
    /// The AM port (`yarn.resourcemanager.scheduler.address`): Hadoop's ApplicationMasterProtocol
    /// for AMRMClient and Weft's gRPC AM service for dshell share it (the RM tells them apart
    /// by the first byte, `weft_rm`'s `hadoop::shared_port`).
    pub(crate) scheduler: &'a str,
    /// The resource tracker.
    pub(crate) tracker: &'a str,
    /// The web UI and REST API.
    pub(crate) web: &'a str,
}

fn property(name: &str, value: &str) -> String {
    format!(
        "  <property>\n    <name>{name}</name>\n    <value>{}</value>\n  </property>\n",
        escape(value)
    )
}

fn escape(v: &str) -> String {
    v.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn document(properties: &[(&str, &str)]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\"?>\n<!-- Written by `weft up` for Hadoop clients (HADOOP_CONF_DIR); rewritten at each start. -->\n<configuration>\n",
    );
    for (name, value) in properties {
        out.push_str(&property(name, value));
    }
    out.push_str("</configuration>\n");
    out
}

/// yarn-site.xml: the RM's addresses (both of its Hadoop IPC protocols, ApplicationClientProtocol
/// and ApplicationMasterProtocol) and client retry bounds short enough that a stopped cluster
/// fails a client in seconds, not Hadoop's default 15 minutes.
pub(crate) fn yarn_site(rm: &RmAddresses<'_>) -> String {
    let host = rm.client.rsplit_once(':').map_or(rm.client, |(h, _)| h);
    document(&[
        ("yarn.resourcemanager.hostname", host),
        ("yarn.resourcemanager.address", rm.client),
        ("yarn.resourcemanager.scheduler.address", rm.scheduler),
        ("yarn.resourcemanager.resource-tracker.address", rm.tracker),
        ("yarn.resourcemanager.webapp.address", rm.web),
        ("yarn.resourcemanager.connect.max-wait.ms", "10000"),
        ("yarn.resourcemanager.connect.retry-interval.ms", "500"),
        ("yarn.client.nodemanager-connect.max-wait-ms", "10000"),
        ("yarn.client.nodemanager-connect.retry-interval-ms", "500"),
    ])
}

/// core-site.xml: the local file system as the default (no HDFS: staging dirs are local
/// paths every NM of this machine reads) and simple authentication.
pub(crate) fn core_site() -> String {
    document(&[
        ("fs.defaultFS", "file:///"),
        ("hadoop.security.authentication", "simple"),
    ])
}

/// Writes both files under `<root>/hadoop-conf/` and returns that directory.
pub(crate) fn write(root: &Path, rm: &RmAddresses<'_>) -> anyhow::Result<PathBuf> {
    let dir = root.join("hadoop-conf");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, text) in [
        ("yarn-site.xml", yarn_site(rm)),
        ("core-site.xml", core_site()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_name_the_rm_addresses_and_simple_auth() {
        let dir = tempfile::tempdir().unwrap();
        let rm = RmAddresses {
            client: "127.0.0.1:8032",
            scheduler: "127.0.0.1:8030",
            tracker: "127.0.0.1:8031",
            web: "127.0.0.1:8088",
        };
        let conf = write(dir.path(), &rm).unwrap();
        assert_eq!(conf, dir.path().join("hadoop-conf"));
        // The RM reads the same yarn-site.xml back to the same addresses.
        let args = weft_rm::RmArgs {
            yarn_site: Some(conf.join("yarn-site.xml")),
            ..Default::default()
        };
        let s = weft_rm::Settings::load(&args).unwrap();
        assert_eq!(s.client_address, "127.0.0.1:8032");
        assert_eq!(s.scheduler_address, "127.0.0.1:8030");
        assert_eq!(s.tracker_address, "127.0.0.1:8031");
        assert_eq!(s.web_address, "127.0.0.1:8088");
        let core = std::fs::read_to_string(conf.join("core-site.xml")).unwrap();
        assert!(core.contains("<name>fs.defaultFS</name>\n    <value>file:///</value>"));
        assert!(
            core.contains("<name>hadoop.security.authentication</name>\n    <value>simple</value>")
        );
    }
}
