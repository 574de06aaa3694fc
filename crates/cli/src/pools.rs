//! `weft pools check FILE`: reads an allocation file's `<resourcePools>` as the RM would and
//! shows what it means: every error and lint with its line and column, each pool's hosts, and
//! the pool each declared queue is bound to (and how).

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use weft_config::alloc_file::parse_allocations;
use weft_config::pools::{Binding, FairShareScope, MatchBy, ResourcePools, UnboundQueues};
use weft_config::{AllocationConfig, Diagnostic, Severity};
use weft_types::ResourceTypes;

/// `weft pools ...`.
#[derive(Subcommand)]
pub(crate) enum PoolsCommand {
    /// Validate an allocation file's resource pools and show how its queues bind to them.
    Check(CheckArgs),
}

/// `weft pools check`.
#[derive(Args)]
pub(crate) struct CheckArgs {
    /// The fair-scheduler.xml to read.
    pub(crate) file: PathBuf,
}

pub(crate) fn main(command: PoolsCommand) -> anyhow::Result<()> {
    match command {
        PoolsCommand::Check(args) => check(&args),
    }
}

fn check(args: &CheckArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let file = args.file.display();
    match parse_allocations(&text, &ResourceTypes::default()) {
        Err(diags) => {
            for d in &diags.0 {
                eprintln!("{}", located(&file.to_string(), d));
            }
            let n = diags
                .0
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count();
            bail!("{file}: {n} error(s); the RM would refuse this file");
        }
        Ok((config, warnings)) => {
            for d in &warnings {
                eprintln!("{}", located(&file.to_string(), d));
            }
            print!("{}", describe(&config));
            Ok(())
        }
    }
}

fn located(file: &str, d: &Diagnostic) -> String {
    let severity = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    format!(
        "{file}:{}:{}: {severity}: {}: {}",
        d.line, d.column, d.path, d.message
    )
}

/// The pools and the queue bindings, as text.
fn describe(config: &AllocationConfig) -> String {
    let Some(pools) = &config.resource_pools else {
        return "no <resourcePools>: resource pools are off; every queue may run on every node\n"
            .to_string();
    };
    let mut out = format!(
        "resource pools (unboundQueues={}, matchBy={}, fairShareScope={}):\n",
        match pools.unbound_queues {
            UnboundQueues::Reject => "reject",
            UnboundQueues::DefaultPartition => "defaultPartition",
        },
        match pools.match_by {
            MatchBy::Prefix => "prefix",
            MatchBy::Explicit => "explicit",
        },
        match pools.fair_share_scope {
            FairShareScope::Pool => "pool",
            FairShareScope::Cluster => "cluster",
        },
    );
    for p in &pools.pools {
        let hosts: Vec<String> = p.hosts.iter().map(ToString::to_string).collect();
        let hosts = if hosts.is_empty() {
            "(none in the file)".to_string()
        } else {
            hosts.join(" ")
        };
        out.push_str(&format!("  {:<16} {hosts}\n", p.name));
    }
    out.push_str("queues:\n");
    for name in config.queues.keys() {
        out.push_str(&format!("  {:<32} {}\n", name, binding_text(pools, name)));
    }
    out
}

fn binding_text(pools: &ResourcePools, queue: &str) -> String {
    match pools.binding(queue) {
        Some(Binding::Explicit(p)) => format!("{p} (explicit)"),
        Some(Binding::Prefix(p)) => format!("{p} (prefix)"),
        None if queue == "root" => "(all pools)".to_string(),
        None => match pools.unbound_queues {
            UnboundQueues::Reject => "(no pool: submissions refused)".to_string(),
            UnboundQueues::DefaultPartition => "(no pool: hosts in no pool)".to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_names_each_queue_pool_and_how_it_was_bound() {
        let text = r#"<allocations>
  <resourcePools>
    <resourcePool name="pool1"><host>a1</host><host>a2:8041</host></resourcePool>
    <resourcePool name="gpu"/>
  </resourcePools>
  <queue name="pool1_ads"/>
  <queue name="ml"><resourcePool>gpu</resourcePool></queue>
  <queue name="adhoc"/>
</allocations>"#;
        let (config, _) = parse_allocations(text, &ResourceTypes::default()).expect("valid");
        let out = describe(&config);
        assert!(out.contains("pool1            a1 a2:8041\n"), "{out}");
        assert!(
            out.contains("gpu              (none in the file)\n"),
            "{out}"
        );
        assert!(
            out.contains("root.pool1_ads                   pool1 (prefix)\n"),
            "{out}"
        );
        assert!(
            out.contains("root.ml                          gpu (explicit)\n"),
            "{out}"
        );
        assert!(
            out.contains("root.adhoc                       (no pool: submissions refused)\n"),
            "{out}"
        );
    }

    #[test]
    fn a_file_without_pools_says_so() {
        let (config, _) =
            parse_allocations("<allocations/>", &ResourceTypes::default()).expect("valid");
        assert!(describe(&config).starts_with("no <resourcePools>"));
    }
}
