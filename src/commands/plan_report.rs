//! The one plan report of every mutating command's `--plan`: the command's own part (its
//! subjects and steps, flattened into the JSON), every guard with its verdict, reason and the
//! `--ack` it asks for, whether the run would be refused, and the confirmation word it needs.
use serde::Serialize;

use super::exit::{Stop, json};
use crate::cli::OutputFormat;
use crate::guards::{Guard, GuardId, Verdict};
use crate::printable::{columns, table};

/// What only one command's plan shows: its fields (the JSON's, beside `guards` and `blocked`)
/// and its table above the GUARDS section.
pub(super) trait PlanText: Serialize {
    fn table(&self) -> String;
}

/// A command's plan with its guards: the `--plan` table and the `--plan --output json`
/// contract (the plan's own fields, then `guards` and `blocked`).
#[derive(Debug, Serialize)]
pub(super) struct PlanReport<P> {
    #[serde(flatten)]
    pub plan: P,
    guards: Vec<GuardLine>,
    /// True when any guard blocks: the run would be refused.
    pub blocked: bool,
}

impl<P: Serialize> PlanReport<P> {
    pub fn new(plan: P, guards: &[Guard], acks: &[String]) -> PlanReport<P> {
        let guards = guard_lines(guards, acks);
        PlanReport {
            plan,
            blocked: guards.iter().any(|g| g.blocks),
            guards,
        }
    }
}

impl<P: PlanText> PlanReport<P> {
    /// The command's table, then its GUARDS section ending with how to run it: `--confirm`
    /// takes `confirm`, the cluster's or the node's name.
    pub fn table(&self, confirm: &str) -> String {
        self.plan.table() + &guards_table(&self.guards, confirm)
    }

    /// The report as `output` says; the table carries names and reasons read from the nodes,
    /// so it is printed without anything a terminal would act on.
    pub fn text(&self, output: OutputFormat, confirm: &str) -> Result<String, Stop> {
        match output {
            OutputFormat::Table => Ok(crate::printable::lines(&self.table(confirm))),
            OutputFormat::Json => json(self),
        }
    }
}

/// The domain's plans whose table their domain writes.
macro_rules! plan_text {
    ($($plan:ty),*) => {$(
        impl PlanText for &$plan {
            fn table(&self) -> String {
                <$plan>::table(self)
            }
        }
    )*};
}
plan_text!(
    crate::provision::ProvisionPlan,
    crate::cluster_lifecycle::CreatePlan,
    crate::cluster_lifecycle::DeletePlan,
    crate::capi_scale::ScalePlan,
    crate::operation::config_patch::ConfigPatchPlan
);

/// One guard as printed.
#[derive(Debug, Serialize)]
struct GuardLine {
    pub id: GuardId,
    pub title: &'static str,
    pub verdict: Verdict,
    pub reason: String,
    pub needs_ack: Option<String>,
    /// Whether it stops the rollout, given the acknowledgements passed.
    pub blocks: bool,
}

/// Every guard as printed, given the acknowledgements passed.
fn guard_lines(guards: &[Guard], acks: &[String]) -> Vec<GuardLine> {
    guards
        .iter()
        .map(|g| GuardLine {
            id: g.id,
            title: g.id.title(),
            verdict: g.verdict,
            reason: g.reason.clone(),
            needs_ack: g.needs_ack.clone(),
            blocks: g.blocks(acks),
        })
        .collect()
}

/// The GUARDS section of a plan and its last line (ready, or blocked by N guards).
fn guards_table(guards: &[GuardLine], cluster: &str) -> String {
    let mut out = String::from("GUARDS\n");
    let rows: Vec<Vec<String>> = guards
        .iter()
        .map(|g| {
            let verdict = match (g.verdict, g.blocks) {
                (Verdict::Pass, _) => "pass",
                (Verdict::Warn, false) => "warn",
                (Verdict::Warn, true) => "WARN",
                (Verdict::Fail, _) => "FAIL",
            };
            let mut reason = g.reason.clone();
            if let (true, Some(ack)) = (g.blocks, &g.needs_ack) {
                reason.push_str(&format!(" (needs --ack \"{ack}\")"));
            }
            vec![verdict.to_string(), g.title.to_string(), reason]
        })
        .collect();
    out.push_str(&indent(&columns(&rows)));
    let blocking = guards.iter().filter(|g| g.blocks).count();
    if blocking == 0 {
        out.push_str(&format!("ready: run it with --yes --confirm {cluster}\n"));
    } else {
        out.push_str(&format!("blocked by {blocking} guard(s)\n"));
    }
    out
}

/// A plan's steps: `rows` numbered under `header` ("#" first), in columns, indented.
pub fn steps_table(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let numbered = rows.into_iter().enumerate().map(|(i, mut row)| {
        row.insert(0, (i + 1).to_string());
        row
    });
    indent(&table(&[&["#"], header].concat(), numbered))
}

pub fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command's own part: what it names beside its guards.
    #[derive(Serialize)]
    struct Reboot {
        node: &'static str,
        pods: Vec<&'static str>,
    }

    impl PlanText for Reboot {
        fn table(&self) -> String {
            format!("REBOOT {}\n  evicts {}\n", self.node, self.pods.join(", "))
        }
    }

    fn report(acks: &[String]) -> PlanReport<Reboot> {
        let plan = Reboot {
            node: "cp-1",
            pods: vec!["web-1", "web-2"],
        };
        let guards = [
            Guard::pass(GuardId::ClientRole, "os:admin"),
            Guard::warn(GuardId::NoOtherRollout, "the Lease cannot be read")
                .acked_by("no other rollout"),
        ];
        PlanReport::new(plan, &guards, acks)
    }

    #[test]
    fn the_commands_part_sits_beside_the_guards_and_blocked_in_the_json() {
        let json = serde_json::to_value(report(&[])).expect("JSON");
        assert_eq!(json["node"], "cp-1");
        assert_eq!(json["pods"][1], "web-2");
        assert_eq!(json["guards"][1]["needs_ack"], "no other rollout");
        assert_eq!(json["guards"][1]["blocks"], true);
        assert_eq!(json["blocked"], true);
        let acked = report(&["no other rollout".to_string()]);
        assert!(!acked.blocked);
    }

    #[test]
    fn the_table_ends_with_the_ack_asked_for_or_the_confirmation_word() {
        let blocked = report(&[]).table("cp-1");
        assert!(blocked.starts_with("REBOOT cp-1\n  evicts web-1, web-2\nGUARDS\n"));
        assert!(
            blocked.contains("(needs --ack \"no other rollout\")"),
            "{blocked}"
        );
        assert!(blocked.ends_with("blocked by 1 guard(s)\n"), "{blocked}");
        let ready = report(&["no other rollout".to_string()]).table("cp-1");
        assert!(
            ready.ends_with("ready: run it with --yes --confirm cp-1\n"),
            "{ready}"
        );
    }
}
