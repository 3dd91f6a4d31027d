//! `taloscope node reboot|shutdown|cordon|uncordon|drain` and `taloscope service restart`: a
//! guarded action on one node without the console. `--plan` prints the plan and every guard's
//! verdict; `--yes --confirm NODE` runs it through the dispatcher, one progress line per
//! change, and follows the node until the action is done. Exit 0 / 1 / 2, as `upgrade`.
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;

use super::exit::exit_code_as;
use super::exit::{EXIT_BLOCKED, Stop, usage, write_stdout};
use super::gate::{
    RunFlags, approve, dispatcher, finish_run, progress_printer, refuse, report_interrupted,
    run_operation, unknown_acks,
};
use super::plan_report::{GuardLine, PlanText, guard_lines, guards_table, indent};
use super::session::{Connected, check_mode, choose, connect, rollout_lease_read};
use crate::cli::{
    GlobalArgs, NodeActionArgs, NodeArgs, NodeCommand, OutputFormat, ServiceArgs, ServiceCommand,
};
use crate::guards::{Guard, blocking};
use crate::kube::DrainOptions;
use crate::node_actions::{NodeActionOptions, NodeActionPlan, NodeOperation, gather_guards};
use crate::operation::node::NodeAction;

/// One node action as the command line asked for it.
pub struct NodeCommandLine {
    pub operation: NodeOperation,
    pub flags: NodeActionArgs,
}

/// Runs `taloscope node ACTION` to its exit code (`forget` is its own command).
pub fn run_node(global: &GlobalArgs, args: NodeArgs) -> ExitCode {
    let (operation, flags) = match args.action {
        NodeCommand::Reboot(f) => (NodeOperation::Reboot, f),
        NodeCommand::Shutdown(f) => (NodeOperation::Shutdown, f),
        NodeCommand::Cordon(f) => (NodeOperation::Cordon, f),
        NodeCommand::Uncordon(f) => (NodeOperation::Uncordon, f),
        NodeCommand::Drain(f) => (NodeOperation::Drain, f),
        NodeCommand::Forget(forget) => return super::forget::run(global, &forget),
        NodeCommand::Info(info) => return super::node_info::run(global, &info),
    };
    run(global, &NodeCommandLine { operation, flags })
}

pub fn from_service_args(args: ServiceArgs) -> NodeCommandLine {
    match args.action {
        ServiceCommand::Restart { service, flags } => NodeCommandLine {
            operation: NodeOperation::ServiceRestart(service),
            flags,
        },
    }
}

/// Runs one node action to its exit code.
pub fn run(global: &GlobalArgs, command: &NodeCommandLine) -> ExitCode {
    exit_code_as(run_inner(global, command), command.flags.gate.output)
}

fn run_inner(global: &GlobalArgs, command: &NodeCommandLine) -> Result<ExitCode, Stop> {
    let flags = &command.flags;
    let gate = RunFlags::of(&flags.gate);
    check_mode(gate.plan, gate.yes, gate.confirm, "node")?;
    let chosen = choose(global)?;
    let Connected {
        runtime,
        observer,
        status,
        ..
    } = connect(&chosen)?;
    let kube_paired = observer.kube.is_some();
    let plan = NodeActionPlan::new(&status, &flags.node, command.operation.clone(), kube_paired)
        .map_err(|e| usage(crate::printable::line(&e.to_string())))?;
    let guards = runtime.block_on(async {
        let lease = rollout_lease_read(&observer).await;
        gather_guards(&plan, &status, &observer, &lease).await
    });
    unknown_acks(&guards, gate.acks)?;
    let report = NodePlanReport::new(&plan, &guards, gate.acks);
    if gate.plan {
        write_stdout(&report.text(gate.output)?)?;
        return Ok(exit_for(blocking(&guards, gate.acks)));
    }
    let dispatcher = dispatcher(global, &chosen.paths);
    report_interrupted(&dispatcher, &chosen.paths);
    let approved = approve(&dispatcher, plan.mutating_action(), gate.confirm)?;
    if blocking(&guards, gate.acks) {
        write_stdout(&report.table())?;
        return Err(refuse(&dispatcher, &approved, &guards, gate.acks));
    }
    let options = NodeActionOptions {
        node_timeout: Duration::from_secs(flags.node_timeout),
        poll_interval: Duration::from_millis(flags.poll_ms.max(10)),
        drain: DrainOptions {
            timeout: Duration::from_secs(flags.drain_timeout),
            retry_every: Duration::from_millis(flags.poll_ms.clamp(10, 1000)),
        },
    };
    let mut action = NodeAction::new(plan.clone(), observer.clone(), options);
    let result = run_operation(
        &runtime,
        (&dispatcher, &approved),
        (&chosen.paths, gate.acks),
        &mut action,
        &progress_printer(gate.output),
    );
    let outcome = ActionOutcome {
        cluster: &plan.cluster,
        node: &plan.node,
        operation: &plan.operation,
        succeeded: result.is_ok(),
        message: result.clone().unwrap_or_else(|e| e),
    };
    finish_run(gate.output, &outcome.message, &outcome, outcome.succeeded)
}

fn exit_for(blocked: bool) -> ExitCode {
    if blocked {
        ExitCode::from(EXIT_BLOCKED)
    } else {
        ExitCode::SUCCESS
    }
}

fn to_json(value: &impl Serialize) -> Result<String, Stop> {
    serde_json::to_string_pretty(value)
        .map(|j| j + "\n")
        .map_err(|e| Stop(1, format!("cannot encode the output as JSON: {e}")))
}

/// How a run ended: the `--yes --output json` contract.
#[derive(Debug, Serialize)]
struct ActionOutcome<'a> {
    cluster: &'a str,
    node: &'a str,
    operation: &'a NodeOperation,
    succeeded: bool,
    message: String,
}

/// The plan and its guards: the `--plan --output json` contract.
#[derive(Debug, Serialize)]
struct NodePlanReport<'a> {
    cluster: &'a str,
    node: &'a str,
    address: &'a str,
    role: &'static str,
    operation: &'a NodeOperation,
    etcd_member: Option<&'a str>,
    guards: Vec<GuardLine>,
    /// True when any guard blocks: the run would be refused.
    blocked: bool,
}

impl<'a> NodePlanReport<'a> {
    fn new(plan: &'a NodeActionPlan, guards: &[Guard], acks: &[String]) -> NodePlanReport<'a> {
        let guards = guard_lines(guards, acks);
        NodePlanReport {
            cluster: &plan.cluster,
            node: &plan.node,
            address: &plan.address,
            role: plan.role.as_str(),
            operation: &plan.operation,
            etcd_member: plan.etcd_member.as_deref(),
            blocked: guards.iter().any(|g| g.blocks),
            guards,
        }
    }

    fn text(&self, output: OutputFormat) -> Result<String, Stop> {
        match output {
            OutputFormat::Table => Ok(self.table()),
            OutputFormat::Json => to_json(self),
        }
    }
}

impl PlanText for NodePlanReport<'_> {
    fn table(&self) -> String {
        let mut out = format!(
            "{} node {} in {}\n",
            self.operation.verb().to_uppercase(),
            self.node,
            self.cluster
        );
        let member = self
            .etcd_member
            .map_or("no etcd member".to_string(), |m| format!("etcd member {m}"));
        out.push_str(&indent(&format!(
            "address {}, {}, {member}",
            self.address, self.role
        )));
        out.push_str(&guards_table(&self.guards, self.node));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::NodeRole;
    use crate::guards::GuardId;

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
        let text = NodePlanReport::new(&plan, &guards, &[]).table();
        assert!(text.starts_with("REBOOT node cp-2 in healthy\n"), "{text}");
        assert!(text.contains("etcd member 00aa"), "{text}");
        assert!(
            text.ends_with("ready: run it with --yes --confirm cp-2\n"),
            "{text}"
        );
    }
}
