//! `taloscope capi doctor`: the stuck states of one CAPI workload cluster, each explained
//! with its fix; `--fix ID` shows a fix's plan and guards (`--plan`) or applies it through the
//! dispatcher (`--yes --confirm NAME`: the cluster, or the node a reboot fix reboots) and
//! follows until the state clears. Exit 0 healthy or
//! fixed / 1 stuck, refused or not cleared / 2 usage.
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;

use super::exit::{EXIT_BLOCKED, Stop, exit_if, print_report, usage};
use super::gate::CommandGate;
use super::plan_report::{PlanText, indent};
use super::progress::{print_progress, progress_printer};
use super::session::{Chosen, check_gate, connect, context, discover_all, rollout_lease_read};
use crate::capi_doctor::{Finding, FixPlan, LocateError, Located, diagnose, fix_guards, locate};
use crate::cli::{CapiDoctorArgs, GlobalArgs, OutputFormat};
use crate::fleet::ClusterStatus;
use crate::operation::capi_fix::CapiFix;

/// `capi doctor --output json` without `--fix`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DoctorReport<'a> {
    /// The discovered cluster the workload cluster is.
    cluster: &'a str,
    /// `management/namespace/name` of its Cluster object.
    owner: String,
    findings: &'a [Finding],
}

/// The fix's part of its plan report (`--fix ID --plan`): the finding and the fix's steps.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FixPlanText<'a> {
    finding: &'a Finding,
    plan: &'a FixPlan,
}

impl PlanText for FixPlanText<'_> {
    fn table(&self) -> String {
        let plan = self.plan;
        let steps: Vec<String> = plan
            .steps()
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{}. {s}", i + 1))
            .collect();
        format!(
            "FIX {} in {}: {}\nSTEPS\n{}",
            self.finding.id,
            plan.cluster(),
            plan.mutating_action().describe(),
            indent(&(steps.join("\n") + "\n"))
        )
    }
}

pub(super) fn run(global: &GlobalArgs, args: &CapiDoctorArgs) -> Result<ExitCode, Stop> {
    let missing = "name the workload cluster (or its management cluster) with --context";
    let wanted = context(global, missing)?;
    if args.fix.is_some() {
        check_gate(&args.gate, "cluster")?;
    } else if args.gate.plan || args.gate.yes {
        return Err(usage("--plan and --yes go with --fix FINDING-ID"));
    }
    let (paths, discovery) = discover_all(global);
    let Some(kubeconfig) = discovery.kubeconfig.clone() else {
        return Err(usage("no kubeconfig was read; name one with --kubeconfig"));
    };
    let runtime = super::command_runtime()?;
    let located = runtime
        .block_on(locate(
            &discovery,
            &kubeconfig,
            wanted,
            args.cluster.as_deref(),
        ))
        .map_err(|e| match e {
            LocateError::Unknown(m) => usage(m),
            LocateError::Unusable(m) => Stop(EXIT_BLOCKED, m),
        })?;
    drop(runtime);
    let chosen = Chosen {
        paths,
        discovery,
        cluster: located.workload.clone(),
    };
    let connected = connect(&chosen)?;
    let findings = diagnose(&located.tree, &connected.status);
    let Some(id) = args.fix.as_deref() else {
        return print_findings(&located, &connected.status, &findings, args.gate.output);
    };
    let finding = findings.iter().find(|f| f.id == id).ok_or_else(|| {
        let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
        usage(format!(
            "no finding {id:?} in {} now (findings: {})",
            located.workload.name,
            if ids.is_empty() {
                "none".to_string()
            } else {
                ids.join(", ")
            }
        ))
    })?;
    let plan = FixPlan::new(finding, &located.tree, &connected.status)
        .map_err(|why| Stop(EXIT_BLOCKED, why))?;
    let roles = connected.observer.talos.roles().clone();
    // Only a reboot asks the workload cluster's rollout Lease (another console's rollout).
    let other = match plan {
        FixPlan::RebootNode(_) => connected
            .runtime
            .block_on(rollout_lease_read(&connected.observer)),
        _ => Ok(None),
    };
    let guards = fix_guards(&plan, &located.tree, &connected.status, &roles, &other);
    let gate = CommandGate::new(global, &chosen.paths, &args.gate);
    let fix_text = FixPlanText {
        finding,
        plan: &plan,
    };
    let approved = gate.pass(fix_text, plan.mutating_action(), &guards)?;
    let say = |kind: &str, line: String| print_progress(args.gate.output, kind, &line, &line);
    let bounds = (
        Duration::from_secs(args.wait),
        Duration::from_millis(args.poll_ms.max(10)),
    );
    let what = format!("{} in {}", approved.action().describe(), plan.cluster());
    let observer = connected.observer.clone();
    let fix = CapiFix::connect(plan, observer, &kubeconfig, located.owner.clone(), bounds);
    let mut fix = (connected.runtime.block_on(fix)).map_err(|e| Stop(EXIT_BLOCKED, e))?;
    let printer = progress_printer(args.gate.output, Some("step"));
    let applied = gate.run(&connected.runtime, &approved, &mut fix, &printer);
    applied.map_err(|e| Stop(EXIT_BLOCKED, format!("{what} failed: {e}")))?;
    let followed = (connected.runtime).block_on(fix.follow(finding, |line| say("progress", line)));
    match followed {
        Ok(done) => {
            say("cleared", done);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(Stop(EXIT_BLOCKED, e)),
    }
}

/// The findings; exit 1 when there is any (the cluster is stuck).
fn print_findings(
    located: &Located,
    status: &ClusterStatus,
    findings: &[Finding],
    output: OutputFormat,
) -> Result<ExitCode, Stop> {
    let report = DoctorReport {
        cluster: &located.workload.name,
        owner: located.owner.to_string(),
        findings,
    };
    print_report(output, &report, |_| {
        findings_table(located, status, findings)
    })?;
    Ok(exit_if(!findings.is_empty()))
}

fn findings_table(located: &Located, status: &ClusterStatus, findings: &[Finding]) -> String {
    let mut out = format!(
        "{} (Cluster {}): {}\n",
        located.workload.name,
        located.owner,
        crate::capi_doctor::progress_line(&located.tree, status)
    );
    if status.etcd.members.is_empty() {
        out.push_str("etcd members could not be read over the Talos API: nothing to compare\n");
    } else if findings.is_empty() {
        out.push_str("no stuck state found\n");
    }
    for f in findings {
        out.push_str(&format!("\n{}\n  {}\n", f.id, f.summary));
        out.push_str(&format!("  {}\n", f.explanation));
        match &f.fix {
            Some(fix) => out.push_str(&format!(
                "  fix: {} (taloscope capi doctor --context {} --fix {} --plan)\n",
                fix.describe(),
                located.workload.name,
                f.id
            )),
            None => out.push_str("  fix: none that is safe to automate\n"),
        }
    }
    out
}
