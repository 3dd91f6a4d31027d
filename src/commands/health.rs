//! `taloscope health`: the cluster's health checks as `talosctl health` runs them, on the
//! server (`ClusterService/HealthCheck`, which the admin, operator and reader roles may call)
//! of the first control plane that answers, or client-side on the status `status` collects,
//! re-collected every few seconds (`fleet::health_check::route` picks, as in the console),
//! printed as a checklist that fills in as checks pass; a failing check names its nodes.
//! Exit 0 healthy, 1 not (or not asked), 2 usage.
use std::process::ExitCode;
use std::time::{Duration, Instant};

use super::exit::{EXIT_BLOCKED, Stop, json, write_stdout};
use super::session::read_cluster;
use crate::cli::{GlobalArgs, OutputFormat};
use crate::fleet::client_checks::client_side_checks;
use crate::fleet::health_check::{CheckPath, follow_health_check, route};
use crate::fleet::{CheckMark, ClusterStatus, HealthCheckRow, HealthChecklist};
use crate::talos::TalosClient;
use crate::upgrade::observe::ClusterObserver;

/// How often the client-side checks collect the cluster's status again.
const CLIENT_SIDE_ROUND: Duration = Duration::from_secs(3);

pub(super) fn run(
    global: &GlobalArgs,
    output: OutputFormat,
    timeout: Duration,
) -> Result<ExitCode, Stop> {
    // A table is printed live, each check as it passes.
    let live = output == OutputFormat::Table;
    let (chosen, (list, server)) = read_cluster(global, async |_, observer| {
        let status = observer.status().await;
        let asked = route(&status).map_err(|why| Stop(EXIT_BLOCKED, why))?;
        let mut list = HealthChecklist::new(&status);
        let asking = match &asked {
            CheckPath::Server(node) => format!("asking {} ({}): ", node.name, node.address),
            CheckPath::ClientSide { .. } => String::new(),
        };
        if live {
            write_stdout(&format!("{asking}{}\n", asked.why()))?;
        }
        match &asked {
            CheckPath::Server(node) => {
                follow_checks(&observer.talos, &node.address, timeout, &mut list, live).await?;
            }
            CheckPath::ClientSide { .. } => {
                watch_client_side(&observer, status, timeout, &mut list, live).await?;
            }
        }
        Ok::<_, Stop>((list, matches!(asked, CheckPath::Server(_))))
    })?;
    match output {
        OutputFormat::Json => {
            write_stdout(&json(&list)?)?;
        }
        OutputFormat::Table => {
            if let Some(failed) = list.first_failure() {
                write_stdout(&row_line(failed))?;
                if server {
                    write_stdout(&not_run_lines(&list))?;
                }
            }
        }
    }
    if list.healthy {
        return Ok(ExitCode::SUCCESS);
    }
    // The table printed the failing check's error just above: the verdict names the check.
    let why = match list.first_failure() {
        Some(c) if live => format!("{} failed (its error above)", c.name),
        _ => list.failure(),
    };
    Err(Stop(
        EXIT_BLOCKED,
        format!("cluster {} is not healthy: {why}", chosen.cluster.name),
    ))
}

/// Folds the node's stream into `list`; `live` prints each check when it passes.
async fn follow_checks(
    talos: &TalosClient,
    node: &str,
    timeout: Duration,
    list: &mut HealthChecklist,
    live: bool,
) -> Result<(), Stop> {
    let error = follow_health_check(talos, node, timeout, |progress| {
        let changed = list.apply(progress);
        match changed.map(|i| &list.checks[i]) {
            Some(row) if live && row.state == CheckMark::Ok => write_stdout(&row_line(row)),
            _ => Ok(()),
        }
    })
    .await?;
    list.finish(error);
    Ok(())
}

/// Evaluates the client-side checks on `status`, then on the status collected again every
/// few seconds, until every check passes or `timeout`; `live` prints each check when it
/// comes to pass.
async fn watch_client_side(
    observer: &ClusterObserver,
    mut status: ClusterStatus,
    timeout: Duration,
    list: &mut HealthChecklist,
    live: bool,
) -> Result<(), Stop> {
    let began = Instant::now();
    loop {
        let passed: Vec<String> = list.passed().map(|c| c.name.clone()).collect();
        for progress in client_side_checks(&status) {
            let changed = list.apply(progress).map(|i| &list.checks[i]);
            if let Some(row) = changed.filter(|r| r.state == CheckMark::Ok)
                && live
                && !passed.contains(&row.name)
            {
                write_stdout(&row_line(row))?;
            }
        }
        if let Some(end) = list.client_side_end(began.elapsed(), timeout) {
            list.finish(end);
            return Ok(());
        }
        let left = timeout.saturating_sub(began.elapsed());
        tokio::time::sleep(left.min(CLIENT_SIDE_ROUND)).await;
        status = observer.status().await;
    }
}

/// The server's checks after the failing one, which its HealthCheck never ran.
fn not_run_lines(list: &HealthChecklist) -> String {
    let later: Vec<&str> = list.not_reached().collect();
    if later.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "the server's HealthCheck stops at its first failing check; {} not run:\n",
        later.len()
    );
    for name in later {
        out.push_str(&format!("-     {name}\n"));
    }
    out
}

/// A checklist line: `OK    <check>` or `FAIL  <check>: <reason>`.
fn row_line(row: &HealthCheckRow) -> String {
    match row.state {
        CheckMark::Ok => format!("OK    {}\n", row.name),
        CheckMark::Fail => format!("FAIL  {}: {}\n", row.name, row.reason.trim()),
        CheckMark::Waiting => format!("...   {}\n", row.name),
    }
}
