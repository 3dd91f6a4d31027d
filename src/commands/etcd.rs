//! `taloscope etcd`: the etcd actions without the console. `alarms` lists the alarms and each
//! member's database against the quota; the others print their plan and guards (`--plan`, as
//! `upgrade --plan` does) or run through the dispatcher (`--yes --confirm NAME`), one line per
//! step. Exit 0 done / 1 refused or failed / 2 usage, as every headless command.
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;

use super::exit::{
    EXIT_BLOCKED, Stop, exit_if, json, nothing_to_do, print_report, usage, write_stdout,
};
use super::gate::CommandGate;
use super::plan_report::{PlanText, indent, steps_table};
use super::progress::progress_printer;
use super::session::{check_gate, choose, connect, rollout_lease_read};
use crate::cli::{EtcdArgs, EtcdVerb, GlobalArgs, OutputFormat};
use crate::etcd_maintenance::{
    EtcdPlan, EtcdRequest, MEMBER_HEADER, MemberSpace, PlanError, QUOTA_BYTES, SnapshotLimits,
    member_space, plan_guards,
};
use crate::fleet::{ClusterStatus, EtcdAlarmReport};
use crate::operation::etcd::EtcdOperation;
use crate::printable::{bytes_text, table};

pub(super) fn run(global: &GlobalArgs, args: &EtcdArgs) -> Result<ExitCode, Stop> {
    let request = request_of(args)?;
    if request.is_some() {
        check_gate(&args.gate, "cluster")?;
    }
    let chosen = choose(global)?;
    let connected = connect(&chosen)?;
    let Some(request) = request else {
        return print_alarms(&connected.status, args.gate.output);
    };
    let plan = match EtcdPlan::new(&connected.status, &request) {
        Ok(plan) => plan,
        Err(PlanError::NothingToDo(message)) => return nothing_to_do(&args.gate, message),
        Err(e @ PlanError::Unknown(_)) => {
            return Err(usage(crate::printable::line(&e.to_string())));
        }
    };
    let roles = connected.observer.talos.roles().clone();
    let lease = connected
        .runtime
        .block_on(rollout_lease_read(&connected.observer));
    let guards = plan_guards(&plan, &connected.status, &roles, &lease);
    let gate = CommandGate::new(global, &chosen.paths, &args.gate);
    let approved = gate.pass(&plan, plan.mutating_action(), &guards)?;
    let limits = SnapshotLimits::within(Duration::from_secs(args.timeout));
    let what = format!("{} in {}", approved.action().describe(), plan.cluster);
    let mut operation = EtcdOperation::new(plan, connected.observer.clone(), limits);
    let printer = progress_printer(args.gate.output, None);
    let result = gate.run(&connected.runtime, &approved, &mut operation, &printer);
    result.map_err(|e| {
        let ended = if e.starts_with("cancelled") {
            ""
        } else {
            " failed"
        };
        Stop(EXIT_BLOCKED, format!("{what}{ended}: {e}"))
    })?;
    match args.gate.output {
        OutputFormat::Table => println!("{what}: done"),
        OutputFormat::Json => write_stdout(&json(operation.outcome())?)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The request the verb and its flags make; `None` for `alarms`, which only reads.
fn request_of(args: &EtcdArgs) -> Result<Option<EtcdRequest>, Stop> {
    let needs = |flag: Option<&String>, why: &str| flag.cloned().ok_or_else(|| usage(why));
    Ok(Some(match args.verb {
        EtcdVerb::Alarms => return Ok(None),
        EtcdVerb::Disarm => EtcdRequest::Disarm,
        EtcdVerb::Defrag => EtcdRequest::Defragment {
            node: args.node.clone(),
        },
        EtcdVerb::Snapshot => EtcdRequest::Snapshot {
            node: args.node.clone(),
            out: args
                .out
                .clone()
                .ok_or_else(|| usage("etcd snapshot needs --out FILE"))?,
            overwrite: args.overwrite,
        },
        EtcdVerb::Forfeit => EtcdRequest::ForfeitLeadership {
            node: needs(args.node.as_ref(), "etcd forfeit needs --node NODE")?,
        },
        EtcdVerb::RemoveMember => EtcdRequest::RemoveMember {
            member: needs(args.member.as_ref(), "etcd remove-member needs --member ID")?,
        },
    }))
}

/// The etcd action's part of its plan report: the plan's fields are the `etcd ... --plan
/// --output json` contract beside the guards.
impl PlanText for &EtcdPlan {
    fn table(&self) -> String {
        let mut out = format!(
            "{} in {}: {}\n",
            self.action.as_str().to_uppercase(),
            self.cluster,
            self.target
        );
        out.push_str(&members_table(&self.members, self.quota));
        let rows = (self.steps.iter()).map(|s| vec![s.node.clone(), s.call.describe(&s.node)]);
        out + "STEPS\n" + &steps_table(&["NODE", "CALL"], rows)
    }
}

/// MEMBERS: each member's database against the quota, its leader mark and alarm.
fn members_table(members: &[MemberSpace], quota: i64) -> String {
    let unknown = || "?".to_string();
    let rows = (members.iter()).map(|m| m.cells().map(|c| c.unwrap_or_else(unknown)).to_vec());
    let table = indent(&table(&MEMBER_HEADER, rows));
    format!("MEMBERS (quota {})\n{table}", bytes_text(quota))
}

/// `etcd alarms --output json`.
#[derive(Debug, Serialize)]
struct AlarmsReport<'a> {
    cluster: &'a str,
    quota: i64,
    alarms: &'a [EtcdAlarmReport],
    members: Vec<MemberSpace>,
}

/// `alarms`: read-only; exit 1 when an alarm is active.
fn print_alarms(status: &ClusterStatus, output: OutputFormat) -> Result<ExitCode, Stop> {
    let report = AlarmsReport {
        cluster: &status.name,
        quota: QUOTA_BYTES,
        alarms: &status.etcd.alarms,
        members: member_space(status),
    };
    print_report(output, &report, |report| {
        let out = if report.alarms.is_empty() {
            format!("no etcd alarms on {}\n", status.name)
        } else {
            let listed: Vec<String> = report
                .alarms
                .iter()
                .map(|a| {
                    let on = a.hostname.clone().unwrap_or_else(|| a.member_id.clone());
                    format!("{} on {on}", a.alarm)
                })
                .collect();
            format!("etcd alarms on {}: {}\n", status.name, listed.join(", "))
        };
        out + &members_table(&report.members, report.quota)
    })?;
    Ok(exit_if(!report.alarms.is_empty()))
}
