//! `taloscope etcd`: the etcd actions without the console. `alarms` lists the alarms and each
//! member's database against the quota; the others print their plan and guards (`--plan`, as
//! `upgrade --plan` does) or run through the dispatcher (`--yes --confirm NAME`), one line per
//! step. Exit 0 done / 1 refused or failed / 2 usage, as every headless command.
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;

use super::exit::write_stdout;
use super::exit::{EXIT_BLOCKED, Stop, exit_code, usage};
use super::gate::{
    RunFlags, approve, dispatcher, progress_printer, refuse, report_interrupted, run_operation,
    unknown_acks,
};
use super::plan_report::{GuardLine, guard_lines, guards_table, indent};
use super::session::{check_mode, choose, connect, rollout_lease_read};
use super::status::columns;
use crate::cli::{EtcdArgs, EtcdVerb, GlobalArgs, OutputFormat};
use crate::etcd_maintenance::{
    EtcdPlan, EtcdRequest, MemberSpace, PlanError, QUOTA_BYTES, SNAPSHOT_MAX_BYTES, SnapshotLimits,
    member_space, plan_guards,
};
use crate::fleet::{ClusterStatus, EtcdAlarmReport};
use crate::guards::{Guard, blocking};
use crate::operation::etcd::EtcdOperation;
use crate::printable::bytes_text;

pub fn run(global: &GlobalArgs, args: &EtcdArgs) -> ExitCode {
    exit_code(run_inner(global, args))
}

fn run_inner(global: &GlobalArgs, args: &EtcdArgs) -> Result<ExitCode, Stop> {
    let request = request_of(args)?;
    let gate = RunFlags::of(&args.gate);
    if request.is_some() {
        check_mode(gate.plan, gate.yes, gate.confirm, "cluster")?;
    }
    let chosen = choose(global)?;
    let connected = connect(&chosen)?;
    let Some(request) = request else {
        return print_alarms(&connected.status, gate.output);
    };
    let plan = match EtcdPlan::new(&connected.status, &request) {
        Ok(plan) => plan,
        Err(PlanError::NothingToDo(message)) => {
            println!("{}", crate::printable::line(&message));
            return Ok(ExitCode::SUCCESS);
        }
        Err(e @ PlanError::Unknown(_)) => {
            return Err(usage(crate::printable::line(&e.to_string())));
        }
    };
    let roles = connected.observer.talos.roles().clone();
    let lease = connected
        .runtime
        .block_on(rollout_lease_read(&connected.observer));
    let guards = plan_guards(&plan, &connected.status, &roles, &lease);
    unknown_acks(&guards, gate.acks)?;
    if gate.plan {
        return print_plan(&plan, &guards, gate.acks, gate.output);
    }
    let dispatcher = dispatcher(global, &chosen.paths);
    report_interrupted(&dispatcher, &chosen.paths);
    let approved = approve(&dispatcher, plan.mutating_action(), gate.confirm)?;
    if blocking(&guards, gate.acks) {
        write_stdout(&PlanReport::new(&plan, &guards, gate.acks).table())?;
        return Err(refuse(&dispatcher, &approved, &guards, gate.acks));
    }
    let limits = SnapshotLimits {
        bound: Duration::from_secs(args.timeout),
        max_bytes: SNAPSHOT_MAX_BYTES,
    };
    let mut operation = EtcdOperation::new(plan, connected.observer.clone(), limits);
    let result = run_operation(
        &connected.runtime,
        (&dispatcher, &approved),
        (&chosen.paths, gate.acks),
        &mut operation,
        &progress_printer(gate.output),
    );
    let what = format!(
        "{} in {}",
        approved.action().describe(),
        operation.plan().cluster
    );
    result.map_err(|e| {
        let ended = if e.starts_with("cancelled") {
            ""
        } else {
            " failed"
        };
        Stop(EXIT_BLOCKED, format!("{what}{ended}: {e}"))
    })?;
    match gate.output {
        OutputFormat::Table => println!("{what}: done"),
        OutputFormat::Json => write_stdout(&json(operation.outcome())?)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The request the verb and its flags make; `None` for `alarms`, which only reads.
fn request_of(args: &EtcdArgs) -> Result<Option<EtcdRequest>, Stop> {
    let needs = |flag: Option<&String>, what: &str| {
        flag.cloned()
            .ok_or_else(|| usage(format!("etcd {what} needs --{}", flag_name(what))))
    };
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
            node: needs(args.node.as_ref(), "forfeit")?,
        },
        EtcdVerb::RemoveMember => EtcdRequest::RemoveMember {
            member: needs(args.member.as_ref(), "remove-member")?,
        },
    }))
}

fn flag_name(what: &str) -> &'static str {
    if what == "remove-member" {
        "member ID"
    } else {
        "node NODE"
    }
}

fn json<T: Serialize>(value: &T) -> Result<String, Stop> {
    serde_json::to_string_pretty(value)
        .map(|j| j + "\n")
        .map_err(|e| Stop(EXIT_BLOCKED, format!("cannot encode as JSON: {e}")))
}

/// `--plan`: the plan and every guard's verdict; exit 1 when a guard blocks.
fn print_plan(
    plan: &EtcdPlan,
    guards: &[Guard],
    acks: &[String],
    output: OutputFormat,
) -> Result<ExitCode, Stop> {
    let report = PlanReport::new(plan, guards, acks);
    let text = match output {
        // Hostnames and reasons come from the nodes: no raw control character on a terminal.
        OutputFormat::Table => crate::printable::lines(&report.table()),
        OutputFormat::Json => json(&report)?,
    };
    write_stdout(&text)?;
    Ok(if report.blocked {
        ExitCode::from(EXIT_BLOCKED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The plan and its guards: the `etcd ... --plan --output json` contract.
#[derive(Debug, Serialize)]
struct PlanReport<'a> {
    #[serde(flatten)]
    plan: &'a EtcdPlan,
    guards: Vec<GuardLine>,
    /// True when any guard blocks: the run would be refused.
    blocked: bool,
}

impl<'a> PlanReport<'a> {
    fn new(plan: &'a EtcdPlan, guards: &[Guard], acks: &[String]) -> PlanReport<'a> {
        let guards = guard_lines(guards, acks);
        PlanReport {
            plan,
            blocked: guards.iter().any(|g| g.blocks),
            guards,
        }
    }

    fn table(&self) -> String {
        let plan = self.plan;
        let mut out = format!(
            "{} in {}: {}\n",
            plan.action.as_str().to_uppercase(),
            plan.cluster,
            plan.target
        );
        out.push_str(&members_table(&plan.members, plan.quota));
        let mut rows = vec![["#", "NODE", "CALL"].map(String::from).to_vec()];
        for (i, step) in plan.steps.iter().enumerate() {
            rows.push(vec![
                (i + 1).to_string(),
                step.node.clone(),
                step.call.describe(&step.node),
            ]);
        }
        out.push_str("STEPS\n");
        out.push_str(&indent(&columns(&rows)));
        out.push_str(&guards_table(&self.guards, &plan.cluster));
        out
    }
}

/// MEMBERS: each member's database against the quota, its leader mark and alarm.
fn members_table(members: &[MemberSpace], quota: i64) -> String {
    let size = |b: Option<i64>| b.map_or("?".to_string(), bytes_text);
    let mut rows = vec![
        [
            "MEMBER", "ID", "LEADER", "HEALTHY", "DB SIZE", "IN USE", "ALARM",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for m in members {
        rows.push(vec![
            crate::printable::line(&m.hostname),
            m.id.clone(),
            if m.leader { "yes" } else { "-" }.to_string(),
            if m.healthy { "yes" } else { "no" }.to_string(),
            size(m.db_size),
            size(m.db_size_in_use),
            m.alarm.clone().unwrap_or_else(|| "-".to_string()),
        ]);
    }
    format!(
        "MEMBERS (quota {})\n{}",
        bytes_text(quota),
        indent(&columns(&rows))
    )
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
    let text = match output {
        OutputFormat::Json => json(&report)?,
        OutputFormat::Table => {
            let mut out = if report.alarms.is_empty() {
                format!("no etcd alarms on {}\n", status.name)
            } else {
                let listed: Vec<String> = report
                    .alarms
                    .iter()
                    .map(|a| {
                        let on = a.hostname.clone().unwrap_or_else(|| a.member_id.clone());
                        format!("{} on {}", a.alarm, crate::printable::line(&on))
                    })
                    .collect();
                format!("etcd alarms on {}: {}\n", status.name, listed.join(", "))
            };
            out.push_str(&members_table(&report.members, report.quota));
            out
        }
    };
    write_stdout(&text)?;
    Ok(if report.alarms.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_BLOCKED)
    })
}
