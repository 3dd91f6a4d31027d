//! `taloscope node reboot|shutdown|cordon|uncordon|drain` and `taloscope service restart`: a
//! guarded action on one node without the console. `--plan` prints the plan and every guard's
//! verdict; `--yes --confirm NODE` runs it through the dispatcher, one progress line per
//! change, and follows the node until the action is done. Exit 0 / 1 / 2, as `upgrade`.
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use super::exit::{Stop, usage};
use super::gate::CommandGate;
use super::plan_report::{PlanText, indent};
use super::session::{open, rollout_lease_read};
use crate::cli::{GlobalArgs, NodeActionArgs};
use crate::kube::DrainOptions;
use crate::node_actions::{NodeActionOptions, NodeActionPlan, NodeOperation, gather_guards};
use crate::operation::node::NodeAction;

/// Runs one node action: its plan through the gate, then the action through the one runner.
pub(super) fn run(
    global: &GlobalArgs,
    operation: NodeOperation,
    flags: &NodeActionArgs,
) -> Result<ExitCode, Stop> {
    let (chosen, cluster) = open(global, &flags.gate, "node")?;
    let (runtime, observer, status) = (cluster.runtime, cluster.observer, cluster.status);
    let plan = NodeActionPlan::new(&status, &flags.node, operation, observer.kube.is_some())
        .map_err(|e| usage(crate::printable::line(&e.to_string())))?;
    let guards = runtime.block_on(async {
        let lease = rollout_lease_read(&observer).await;
        gather_guards(&plan, &status, &observer, &lease).await
    });
    let gate = CommandGate::new(global, &chosen.paths, &flags.gate);
    let approved = gate.pass(&plan, plan.mutating_action(), &guards)?;
    let options = NodeActionOptions {
        node_timeout: Duration::from_secs(flags.node_timeout),
        poll_interval: Duration::from_millis(flags.poll_ms.max(10)),
        drain: DrainOptions {
            timeout: Duration::from_secs(flags.drain_timeout),
            retry_every: Duration::from_millis(flags.poll_ms.clamp(10, 1000)),
        },
    };
    let mut action = NodeAction::new(plan.clone(), observer.clone(), options);
    let subject = json!({"cluster": plan.cluster, "node": plan.node, "operation": plan.operation});
    gate.run_to_exit(&runtime, &approved, &mut action, subject)
}

/// The node action's part of its plan report: the plan's fields are the `--plan --output json`
/// contract beside the guards.
impl PlanText for &NodeActionPlan {
    fn table(&self) -> String {
        let member = (self.etcd_member.as_ref())
            .map_or("no etcd member".to_string(), |m| format!("etcd member {m}"));
        format!(
            "{} node {} in {}\n{}",
            self.operation.verb().to_uppercase(),
            self.node,
            self.cluster,
            indent(&format!(
                "address {}, {}, {member}",
                self.address,
                self.role.as_str()
            ))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::plan_report::PlanReport;
    use crate::fleet::NodeRole;
    use crate::guards::{Guard, GuardId};

    #[test]
    fn the_plan_names_the_node_and_ends_with_how_to_run_it() {
        let plan = NodeActionPlan {
            cluster: "healthy".into(),
            operation: NodeOperation::Reboot,
            node: "cp-2".into(),
            address: "127.0.0.2".into(),
            role: NodeRole::Controlplane,
            etcd_member: Some("00aa".into()),
        };
        let guards = vec![Guard::pass(GuardId::EtcdQuorum, "cp-2 can go down")];
        let text = PlanReport::new(&plan, &guards, &[]).table("cp-2");
        assert!(text.starts_with("REBOOT node cp-2 in healthy\n"), "{text}");
        assert!(text.contains("etcd member 00aa"), "{text}");
        assert!(
            text.ends_with("ready: run it with --yes --confirm cp-2\n"),
            "{text}"
        );
    }
}
