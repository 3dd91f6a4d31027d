//! `taloscope config show` and `taloscope config drift`: the machine configuration the nodes
//! run, read over the Talos API (the `MachineConfigs` resource, os:admin only), secrets
//! redacted unless `--reveal` (audited), and the nodes of each role compared. Read-only.
use std::process::ExitCode;

use serde::Serialize;

use super::exit::{EXIT_BLOCKED, Stop, exit_if, json, print_report, usage, write_stdout};
use super::session::read_cluster;
use crate::approval::AuditLog;
use crate::cli::{ConfigOutput, ConfigShowArgs, GlobalArgs, ReadArgs};
use crate::fleet::{NodeRole, NodeStatus};
use crate::machine_config::{
    ClusterDrift, DriftTarget, MachineConfigError, read_cluster_drift, read_node_config, yaml_text,
};

fn refused(e: &MachineConfigError) -> Stop {
    Stop(EXIT_BLOCKED, crate::printable::line(&e.to_string()))
}

/// `config show --output json` and `config drift --output json`, the contracts: the cluster's
/// name beside the document's own fields.
#[derive(Serialize)]
struct OfCluster<T> {
    cluster: String,
    #[serde(flatten)]
    of: T,
}

pub(super) fn run_show(global: &GlobalArgs, args: &ConfigShowArgs) -> Result<ExitCode, Stop> {
    let (chosen, config) = read_cluster(global, async |_, observer| {
        let status = observer.status().await;
        let (name, address) = match status.node_named(&args.node) {
            Ok(n) => (n.name.clone(), n.address.clone()),
            Err(_) if args.node.parse::<std::net::IpAddr>().is_ok() => {
                (args.node.clone(), args.node.clone())
            }
            Err(why) => return Err(usage(why)),
        };
        read_node_config(&observer.talos, &name, &address, args.reveal)
            .await
            .map_err(|e| refused(&e))
    })?;
    if args.reveal {
        // Written before anything is printed: secrets are never shown unaudited.
        AuditLog::new(chosen.paths.audit_log())
            .record_described(
                &chosen.cluster.name,
                &format!("config show --reveal: node {}", config.node),
                "secrets shown",
            )
            .map_err(|e| Stop(EXIT_BLOCKED, e.to_string()))?;
    }
    let text = match args.output {
        ConfigOutput::Yaml => yaml_text(&config),
        ConfigOutput::Json => json(&OfCluster {
            cluster: chosen.cluster.name.clone(),
            of: &config,
        })?,
    };
    write_stdout(&text)?;
    if !config.revealed && config.redacted > 0 {
        eprintln!(
            "taloscope: {} secrets redacted; --reveal shows them (written to the audit log)",
            config.redacted
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn run_drift(global: &GlobalArgs, args: &ReadArgs) -> Result<ExitCode, Stop> {
    let (_, report) = read_cluster(global, async |chosen, observer| {
        let status = observer.status().await;
        let targets: Vec<DriftTarget> = [NodeRole::Controlplane, NodeRole::Worker]
            .iter()
            .flat_map(|role| status.nodes.iter().filter(move |n| n.role == *role))
            .filter(|n| !n.address.is_empty())
            .map(NodeStatus::drift_target)
            .collect();
        let drift = read_cluster_drift(&observer.talos, &targets)
            .await
            .map_err(|e| refused(&e))?;
        Ok(OfCluster {
            cluster: chosen.cluster.name.clone(),
            of: drift,
        })
    })?;
    print_report(args.output, &report, drift_text)?;
    let drift = &report.of;
    let clean = drift.unread.is_empty() && drift.roles.iter().all(|r| r.drift.is_empty());
    Ok(exit_if(!clean))
}

/// Each role, its differing paths, and per value the nodes holding it.
fn drift_text(report: &OfCluster<ClusterDrift>) -> String {
    let mut out = String::new();
    for role in &report.of.roles {
        let verdict = match role.drift.len() {
            0 => "no drift".to_string(),
            1 => "1 path differs".to_string(),
            n => format!("{n} paths differ"),
        };
        out.push_str(&format!(
            "{} ({}): {verdict}\n",
            role.role,
            role.nodes.join(", ")
        ));
        for entry in &role.drift {
            out.push_str(&format!("  {}\n", entry.path));
            for value in &entry.values {
                out.push_str(&format!(
                    "    {}: {}\n",
                    value.nodes.join(", "),
                    value.value.as_deref().unwrap_or("(absent)")
                ));
            }
        }
    }
    for node in &report.of.unread {
        out.push_str(&format!("not read: {}: {}\n", node.node, node.error));
    }
    out
}
