//! What `taloscope upgrade` prints: the plan with every guard's verdict (a table or JSON), and
//! one progress line per step change ("[2/5] cp-2: rebooting (phase kexec)").
use crate::clock::Zone;
use serde::Serialize;

use super::headless::PlanText;
use super::status::columns;
use crate::rollout::{RolloutOutcome, StepPhase, StepProgress};
use crate::upgrade::{
    Guard, GuardId, PlanStep, ReleasesOrigin, UpgradeOptions, UpgradePlan, Verdict,
};
use crate::versions::OfferedRelease;

/// One guard as printed.
#[derive(Debug, Serialize)]
pub struct GuardLine {
    pub id: GuardId,
    pub title: &'static str,
    pub verdict: Verdict,
    pub reason: String,
    pub needs_ack: Option<String>,
    /// Whether it stops the rollout, given the acknowledgements passed.
    pub blocks: bool,
}

/// The plan and its guards: the `--plan --output json` contract.
#[derive(Debug, Serialize)]
pub struct PlanReport<'a> {
    pub cluster: &'a str,
    pub target: String,
    pub image: &'a str,
    pub options: &'a UpgradeOptions,
    pub leader: Option<&'a str>,
    pub steps: &'a [PlanStep],
    /// The targets offered for this cluster, each with where it was learned.
    pub offered: &'a [OfferedRelease],
    /// Where the releases were learned (a registry and its listing's age, or the built-in
    /// table and why).
    pub releases: &'a ReleasesOrigin,
    pub notes: Vec<String>,
    pub guards: Vec<GuardLine>,
    /// True when any guard blocks: the run would be refused.
    pub blocked: bool,
}

/// Every guard as printed, given the acknowledgements passed.
pub fn guard_lines(guards: &[Guard], acks: &[String]) -> Vec<GuardLine> {
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

/// The GUARDS section of a plan and its last line (ready, or blocked by N guards); shared by
/// `upgrade` and `upgrade-k8s`.
pub fn guards_table(guards: &[GuardLine], cluster: &str) -> String {
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

impl<'a> PlanReport<'a> {
    pub fn new(plan: &'a UpgradePlan, guards: &[Guard], acks: &[String]) -> PlanReport<'a> {
        let guards = guard_lines(guards, acks);
        PlanReport {
            cluster: &plan.cluster,
            target: plan.target.to_string(),
            image: &plan.image,
            options: &plan.options,
            leader: plan.leader.as_deref(),
            steps: &plan.steps,
            offered: &plan.offered,
            releases: &plan.releases,
            notes: plan.option_notes(),
            blocked: guards.iter().any(|g| g.blocks),
            guards,
        }
    }
}

impl PlanText for PlanReport<'_> {
    fn table(&self) -> String {
        let o = self.options;
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        let mut out = format!(
            "UPGRADE {} to Talos {}\n  image {}\n  max-parallel {}, stage {}, preserve {}, allow-downgrade {}\n",
            self.cluster,
            self.target,
            self.image,
            o.max_parallel,
            yes_no(o.stage),
            yes_no(o.preserve),
            yes_no(o.allow_downgrade),
        );
        let mut rows = vec![
            ["#", "NODE", "ROLE", "FROM", "BATCH", "API / NOTE"]
                .map(String::from)
                .to_vec(),
        ];
        for (i, s) in self.steps.iter().enumerate() {
            let note = match (s.is_skipped(), s.api) {
                (true, _) => format!("skipped ({:?})", s.state).to_lowercase(),
                (false, Some(api)) => {
                    let mut note = api.calls().to_string();
                    if s.forfeit_leadership {
                        note.push_str("; etcd leader: hands leadership over first");
                    }
                    note
                }
                (false, None) => "version unknown".to_string(),
            };
            rows.push(vec![
                (i + 1).to_string(),
                s.node.clone(),
                s.role.as_str().to_string(),
                s.from.as_ref().map_or("?".to_string(), ToString::to_string),
                s.batch.map_or("-".to_string(), |b| b.to_string()),
                note,
            ]);
        }
        out.push_str(&indent(&columns(&rows)));
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        let offered: Vec<String> = self
            .offered
            .iter()
            .map(|o| format!("{} ({})", o.version, source_name(o)))
            .collect();
        out.push_str(&format!(
            "  offered: {}\n  {}\n",
            if offered.is_empty() {
                "none".to_string()
            } else {
                offered.join(", ")
            },
            self.releases.describe()
        ));
        out.push_str(&guards_table(&self.guards, self.cluster));
        out
    }
}

/// Where an offered target was learned, as the JSON names it.
pub fn source_name(offered: &OfferedRelease) -> &'static str {
    match offered.source {
        crate::versions::ReleaseSource::Registry => "registry",
        crate::versions::ReleaseSource::BuiltIn => "built-in",
    }
}

/// A plan with its guards, as JSON: every field of the plan, then the guards and whether they
/// block.
#[derive(Serialize)]
struct GuardedPlan<'a, P: Serialize> {
    #[serde(flatten)]
    plan: &'a P,
    guards: Vec<GuardLine>,
    blocked: bool,
}

/// A plan's table and its GUARDS section (the `upgrade --plan` form), or the plan and its
/// guards as JSON: what provision, create and delete print.
pub fn guarded_plan<P: Serialize>(
    plan: &P,
    table: &str,
    cluster: &str,
    guards: &[Guard],
    acks: &[String],
    json: bool,
) -> Result<String, String> {
    let lines = guard_lines(guards, acks);
    if !json {
        return Ok(format!("{table}\n{}", guards_table(&lines, cluster)));
    }
    serde_json::to_string_pretty(&GuardedPlan {
        plan,
        blocked: lines.iter().any(|g| g.blocks),
        guards: lines,
    })
    .map(|j| j + "\n")
    .map_err(|e| format!("cannot encode the plan as JSON: {e}"))
}

pub fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// A progress line as printed: its local time first, "15:20:57 [2/5] cp-2: rebooting".
pub fn stamped(zone: Zone, unix: u64, line: &str) -> String {
    format!("{} {line}", zone.time_of_day(unix))
}

/// "[2/5] cp-2: rebooting (phase kexec)"; a failure carries its reason.
pub fn progress_line(index: usize, total: usize, step: &StepProgress) -> String {
    let mut line = format!(
        "[{}/{total}] {}: {}",
        index + 1,
        step.node,
        step.phase.as_str()
    );
    if step.phase == StepPhase::Failed {
        if let Some(error) = &step.error {
            line.push_str(&format!(": {error}"));
        }
    } else if !step.detail.is_empty() {
        line.push_str(&format!(" ({})", step.detail));
    }
    line
}

/// "[3/17] cp-3 kube-apiserver v1.35.0: waiting for ready (...)": the step's label after the
/// node, for rollouts with several steps per node.
pub fn labelled_progress_line(index: usize, total: usize, step: &StepProgress) -> String {
    let mut named = step.clone();
    if !step.label.is_empty() {
        named.node = format!("{} {}", step.node, step.label);
    }
    progress_line(index, total, &named)
}

/// The last line of a run.
pub fn outcome_line(cluster: &str, target: &str, outcome: &RolloutOutcome) -> String {
    match outcome {
        RolloutOutcome::Completed => format!("upgrade of {cluster} to {target} completed"),
        RolloutOutcome::Aborted => format!("upgrade of {cluster} to {target} aborted"),
        RolloutOutcome::Halted(reason) => {
            format!("upgrade of {cluster} to {target} halted: {reason}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_start_with_their_local_time() {
        let line = "[2/5] talos-cp-2: rebooting";
        let t = 1_796_052_057; // 15:20:57 UTC
        assert_eq!(
            stamped(Zone::Fixed(3600), t, line),
            "16:20:57 [2/5] talos-cp-2: rebooting"
        );
        assert_eq!(
            stamped(Zone::Utc, t, line),
            "15:20:57 [2/5] talos-cp-2: rebooting"
        );
    }

    #[test]
    fn progress_lines_read_like_the_issue() {
        let mut s = StepProgress::pending("talos-cp-2", "upgrade to v1.12.0");
        s.phase = StepPhase::Rebooting;
        s.detail = "phase kexec".into();
        assert_eq!(
            progress_line(1, 5, &s),
            "[2/5] talos-cp-2: rebooting (phase kexec)"
        );
        s.phase = StepPhase::Failed;
        s.error = Some("timed out after 15m".into());
        assert_eq!(
            progress_line(1, 5, &s),
            "[2/5] talos-cp-2: failed: timed out after 15m"
        );
    }
}
