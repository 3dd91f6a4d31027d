//! `taloscope node forget`: the address of a node that is no longer a member taken out of the
//! talosconfig context (--context), a backup of the file first. `--plan` prints the plan (the
//! node, the lists, the file and its backup) and every guard; `--yes --confirm ADDRESS` runs it
//! through the dispatcher and the one runner. Exit 0 done / 1 refused or failed / 2 usage.
use std::process::ExitCode;

use serde_json::json;

use super::exit::{Stop, usage};
use super::gate::CommandGate;
use super::plan_report::{PlanText, indent};
use super::session::{open, sources};
use crate::cli::{ForgetArgs, GlobalArgs};
use crate::operation::forget::{ForgetPlan, NodeForget, forget_guards};

pub(super) fn run(global: &GlobalArgs, args: &ForgetArgs) -> Result<ExitCode, Stop> {
    let (chosen, cluster) = open(global, &args.gate, "node")?;
    let (runtime, observer, status) = (cluster.runtime, cluster.observer, cluster.status);
    let (sources, _) = sources(global, &chosen.paths);
    let plan = ForgetPlan::new(
        &chosen.cluster.name,
        chosen.cluster.talos.as_ref(),
        &status,
        &args.node,
        sources.config.kept_backups(),
    )
    .map_err(|e| usage(crate::printable::line(&e.to_string())))?;
    let guards = forget_guards(&plan, &status);
    let gate = CommandGate::new(global, &chosen.paths, &args.gate);
    let approved = gate.pass(&plan, plan.action(), &guards)?;
    let mut operation = NodeForget::new(plan.clone(), observer);
    let subject =
        json!({"cluster": plan.cluster, "context": plan.context, "address": plan.address});
    gate.run_to_exit(&runtime, &approved, &mut operation, subject)
}

/// The forget's part of its plan report: the plan's fields are the `--plan --output json`
/// contract beside the guards.
impl PlanText for &ForgetPlan {
    fn table(&self) -> String {
        let p = self;
        let mut out = format!("FORGET node {} ({}) in {}\n", p.node, p.address, p.cluster);
        out.push_str(&indent(&format!(
            "remove {} from the {} of talosconfig context {}",
            p.address,
            p.lists(),
            p.context
        )));
        out.push_str(&indent(&format!("file {}", p.file.display())));
        out.push_str(&indent(&format!("backup first: {}", p.backup_named())));
        out.push_str(&indent(
            "role: none needed (it only edits a local file; no Talos API call)",
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn the_plan_names_the_node_the_file_its_backup_and_that_no_role_is_needed() {
        let plan = ForgetPlan {
            cluster: "capi-work".into(),
            context: "admin@capi-work".into(),
            file: PathBuf::from("/home/op/.talos/config"),
            node: "capi-work-cp-x".into(),
            address: "127.10.1.5".into(),
            in_nodes: true,
            endpoint: None,
            nodes_left: 2,
            endpoints_left: 1,
            kept_backups: 5,
        };
        let text = (&plan).table();
        assert!(
            text.starts_with("FORGET node capi-work-cp-x (127.10.1.5) in capi-work\n"),
            "{text}"
        );
        assert!(text.contains("from the nodes of talosconfig context admin@capi-work"));
        assert!(
            text.contains("backup first: /home/op/.talos/config.taloscope-backup-<UTC time>"),
            "{text}"
        );
        assert!(text.contains("role: none needed"), "{text}");
    }
}
