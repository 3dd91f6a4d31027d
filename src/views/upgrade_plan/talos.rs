//! The Talos OS upgrade as a kind of rollout plan: the options and installer image the
//! operator chose, the edits to the node order (replayed whenever the plan is rebuilt), the
//! target offered only when it is a known release, and `?` on a node (`upgrade::explain`); its keys
//! (the node order moved, left out, included; the image typed or reset; stage, preserve and
//! max-parallel making the plan again) and its news (the releases learned for each cluster at
//! run time: an open plan on its default target moves to theirs); its pane (target, image and
//! options on top, a summary of at most four lines over the node order as a table: role,
//! from -> to, API, forfeit, batch, state). Pure.
use std::collections::BTreeMap;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use super::keys::{RolloutKey, TALOS, TalosKey};
use super::view::{label, labelled, target_line};
use super::{PlanKind, RolloutPlan, RolloutPlanModule, RolloutPlanScreen, TALOS_PLAN, rebuilt};
use crate::app::binding::Binding;
use crate::app::message::Message;
use crate::app::plan_screen::{PlannedRollout, roles_of};
use crate::app::screen::Pane;
use crate::app::screens::{Ask, ScreenName, ScreenNews, Shared, Step};
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col, wide};
use crate::fleet::ClusterStatus;
use crate::tui::Role;
use crate::upgrade::{
    Direction, Guard, LearnedReleases, ReleasesLearned, RolloutInProgress, StepState, TalosOs,
    UpgradeApi, UpgradeOptions, UpgradePlan, chosen_talos_target, explain, plan_guards,
};
use crate::versions::{TalosVersion, Version};
use crate::views::plan::reread_guards;
use crate::views::plan_parts::fitted;
use crate::views::{Look, fit};

/// The Talos OS upgrade plan screen.
pub type PlanScreen = RolloutPlanScreen<TalosOs>;

/// One operator edit of the node order; replayed on every rebuild so a new
/// target or option keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanEdit {
    Move(String, Direction),
    LeaveOut(String),
    Include(String),
}

/// What the Talos plan screen keeps beyond every plan's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TalosSettings {
    pub options: UpgradeOptions,
    /// A custom or factory installer image; `None` uses the default.
    pub image: Option<String>,
    pub edits: Vec<PlanEdit>,
    /// Whether any node runs a Talos old enough for `preserve` to matter.
    pub preserve_applies: bool,
    /// The releases the targets were offered from (a registry's listing, else the table).
    pub releases: LearnedReleases,
}

impl RolloutPlan<TalosOs> {
    /// Edits the plan; the edit is kept for rebuilds when it applied.
    pub fn edit(&mut self, edit: PlanEdit) -> Result<(), String> {
        let Ok(plan) = &mut self.made else {
            return Err("there is no plan to edit".to_string());
        };
        apply_edit(plan, &edit).map_err(|e| e.to_string())?;
        self.edits.push(edit);
        Ok(())
    }
}

impl PlanKind for TalosOs {
    type Settings = TalosSettings;
    fn targets_among(
        status: &ClusterStatus,
        named: Option<&str>,
        learned: &LearnedReleases,
    ) -> Result<(Vec<Version>, Version), String> {
        chosen_talos_target(status, named, learned)
    }

    fn settings(status: &ClusterStatus, learned: &LearnedReleases) -> TalosSettings {
        let preserve_applies = status.nodes.iter().any(|n| {
            n.talos_version
                .as_deref()
                .and_then(|v| Version::parse(v).ok())
                .is_some_and(|v| UpgradeOptions::preserve_applies(&v))
        });
        TalosSettings {
            options: UpgradeOptions::default(),
            image: None,
            edits: Vec::new(),
            preserve_applies,
            releases: learned.clone(),
        }
    }

    /// Replays the operator's edits (an edit that no longer applies is dropped).
    fn make_plan(
        status: &ClusterStatus,
        target: &TalosVersion,
        settings: &mut TalosSettings,
    ) -> Result<UpgradePlan, String> {
        let options = settings.options.clone();
        let made = UpgradePlan::among(status, target.clone(), options, &settings.releases);
        made.map_err(|e| e.to_string()).and_then(|mut plan| {
            if let Some(image) = &settings.image {
                plan.set_image(image).map_err(|e| e.to_string())?;
            }
            settings
                .edits
                .retain(|edit| apply_edit(&mut plan, edit).is_ok());
            Ok(plan)
        })
    }

    fn guards(
        _: &RolloutPlan<TalosOs>,
        plan: &UpgradePlan,
        status: &ClusterStatus,
        other: Option<&RolloutInProgress>,
        _: &[String],
    ) -> Vec<Guard> {
        plan_guards(plan, status, &roles_of(status), other)
    }

    fn planned(plan: UpgradePlan) -> PlannedRollout {
        PlannedRollout::Talos(plan)
    }

    fn explain_step(plan: &UpgradePlan, index: usize) -> Option<(String, String)> {
        let step = plan.steps.get(index)?;
        Some((step.node.clone(), explain::node_step(plan, step)))
    }

    const NAME: ScreenName = TALOS_PLAN;
    const TITLE: &'static str = "Upgrade plan (u, :upgrade)";
    const HOME: Pane = Pane::Nodes;
    type Key = TalosKey;
    /// The Talos releases learned for each cluster; the built-in table until they arrive.
    type Kept = BTreeMap<String, LearnedReleases>;

    fn own_keys() -> &'static [Binding<RolloutKey<TalosKey>, RolloutPlanModule<Self>>] {
        TALOS
    }

    fn releases(learned: &Self::Kept, cluster: &str) -> LearnedReleases {
        let known = learned.get(cluster).cloned();
        known.unwrap_or_else(|| LearnedReleases::built_in("not learned yet"))
    }

    fn on_own_key(plan: &mut PlanScreen, key: TalosKey, shared: &Shared) -> Step {
        match key {
            TalosKey::EditImage => {
                let text = match &plan.made {
                    Ok(p) => p.image.clone(),
                    Err(_) => plan.image.clone().unwrap_or_default(),
                };
                let prompt = IMAGE_PROMPT;
                return Step::ask(Ask::Input { prompt, text });
            }
            TalosKey::ResetImage => plan.image = None,
            TalosKey::ToggleStage => plan.options.stage = !plan.options.stage,
            TalosKey::TogglePreserve if plan.preserve_applies => {
                plan.options.preserve = !plan.options.preserve
            }
            TalosKey::TogglePreserve => {
                return Step::message(Message::info(
                    "preserve only matters below Talos 1.8; every node here keeps EPHEMERAL",
                ));
            }
            TalosKey::MoreParallel => {
                plan.options.max_parallel = (plan.options.max_parallel + 1).min(MAX_PARALLEL)
            }
            TalosKey::LessParallel => {
                plan.options.max_parallel = plan.options.max_parallel.saturating_sub(1).max(1)
            }
            TalosKey::MoveStepUp | TalosKey::MoveStepDown => {
                let up = key == TalosKey::MoveStepUp;
                let direction = if up { Direction::Up } else { Direction::Down };
                let edit = plan
                    .step
                    .clone()
                    .map(|node| PlanEdit::Move(node, direction));
                return edited(plan, edit, shared);
            }
            TalosKey::ToggleStep => return toggled(plan, shared),
        }
        rebuilt(plan, shared)
    }

    /// The releases learned for a cluster: kept for its next plan; its open plan takes them,
    /// moved to their default target while it is still on the default it opened on.
    fn on_news(module: &mut RolloutPlanModule<Self>, news: &ScreenNews, shared: &Shared) -> bool {
        let Some(ReleasesLearned { cluster, learned }) = news.get::<ReleasesLearned>() else {
            return false;
        };
        module.kept.insert(cluster.clone(), learned.clone());
        let live = shared.fleet.cluster(cluster);
        let open = module.plan.as_mut().filter(|p| &p.cluster == cluster);
        let (Some(plan), Some(live)) = (open, live) else {
            return false;
        };
        let default = |learned| TalosOs::targets_among(&live.status, None, learned).ok();
        if default(&plan.releases).is_some_and(|(_, t)| t == plan.target)
            && let Some((targets, target)) = default(learned)
        {
            plan.targets = targets;
            plan.target = target;
        }
        plan.releases = learned.clone();
        plan.rebuild(&live.status);
        reread_guards(plan, shared);
        true
    }

    /// Enter on the image field: a custom image, or the default again; one the plan refuses is
    /// said and dropped.
    fn on_input(plan: &mut PlanScreen, text: &str, shared: &Shared) -> Step {
        let text = text.trim();
        let default = crate::upgrade::default_installer_image(&plan.target);
        plan.image = (text != default).then(|| text.to_string());
        let step = rebuilt(plan, shared);
        let Err(e) = &plan.made else {
            return step;
        };
        let refused = Message::error(e.clone());
        plan.image = None;
        Step {
            message: Some(refused),
            ..rebuilt(plan, shared)
        }
    }

    const NO_STEPS: &'static str = "No nodes.";
    const STEP_COLUMNS: &'static [Column] = &[
        col("NODE", Width::Fill(1)),
        wide("ADDRESS", Width::Content),
        col("ROLE", Width::Content),
        col("FROM -> TO", Width::Content),
        col("API", Width::Content),
        col("FORFEIT", Width::Content),
        col("BATCH", Width::Content),
        col("STATE", Width::Fill(1)),
    ];

    fn step_rows(plan: &UpgradePlan) -> Vec<TableRow> {
        plan.steps
            .iter()
            .map(|s| {
                let from = s.from.as_ref().map_or("?".to_string(), ToString::to_string);
                let (state, tone) = match s.state {
                    StepState::Upgrade => ("upgrade", Tone::Plain),
                    StepState::AlreadyOnTarget => ("on target", Tone::Muted),
                    StepState::LeftOut => ("left out", Tone::Warn),
                };
                let batch = s.batch.map(|b| b.to_string());
                TableRow {
                    key: s.node.clone(),
                    cells: vec![
                        TableCell::plain(&s.node),
                        TableCell::plain(&s.address),
                        TableCell::plain(crate::fleet::summary::role_word(s.role)),
                        TableCell::new(
                            format!("{from} -> {}", plan.target),
                            if s.is_skipped() {
                                Tone::Muted
                            } else {
                                Tone::Plain
                            },
                        ),
                        TableCell::plain(api_word(s.api)),
                        TableCell::maybe(s.forfeit_leadership.then_some("yes")),
                        TableCell::maybe(batch.as_deref()),
                        TableCell::new(state, tone),
                    ],
                }
            })
            .collect()
    }

    /// Target, image and options, then what the options mean here.
    fn summary(screen: &PlanScreen, look: &Look, width: usize) -> Vec<Line<'static>> {
        let s = &look.styles;
        let g = &look.glyphs;
        let mut lines = vec![target_line(look, screen, "  ", width)];
        let (image, note) = match (&screen.made, &screen.image) {
            (Ok(plan), None) => (plan.image.clone(), " (default; i edits)"),
            (Ok(plan), Some(_)) => (plan.image.clone(), " (custom; I resets)"),
            (Err(_), custom) => (custom.clone().unwrap_or_default(), ""),
        };
        lines.push(Line::from(vec![
            label(look, "Image"),
            Span::styled(
                fit(&image, width.saturating_sub(9 + note.len()), g.ellipsis),
                s.get(Role::Text),
            ),
            Span::styled(note, s.get(Role::Muted)),
        ]));
        let o = &screen.options;
        let on_off = |b: bool| if b { "on" } else { "off" };
        let preserve = if screen.preserve_applies {
            on_off(o.preserve)
        } else {
            "n/a"
        };
        let options = format!(
            "stage {} (S)  preserve {preserve} (P)  max-parallel {} (+/-)",
            on_off(o.stage),
            o.max_parallel
        );
        lines.push(labelled(look, "Options", (&options, Role::Text), width));
        if let Ok(plan) = &screen.made {
            for note in plan.option_notes() {
                let note = format!("{} {note}", g.warn);
                lines.push(fitted(look, &note, Role::Warn, width));
            }
        }
        lines
    }

    fn steps_title(screen: &PlanScreen) -> String {
        match &screen.made {
            Ok(plan) => {
                let upgrading = plan.nodes_to_upgrade().count();
                format!(
                    " Upgrade {} to {}: {upgrading} of {} nodes ",
                    screen.cluster,
                    plan.target,
                    plan.steps.len()
                )
            }
            Err(_) => format!(" Upgrade {}: no plan ", screen.cluster),
        }
    }

    fn layout(screen: &PlanScreen, summary_lines: usize, area: Rect) -> [Rect; 4] {
        let steps = screen.step_keys().len() as u16;
        let summary_height = (summary_lines as u16).min(4);
        area.layout(&Layout::vertical([
            Constraint::Length(summary_height),
            Constraint::Length((steps + 3).max(4)),
            Constraint::Min(4),
            Constraint::Length(1),
        ]))
    }
}

fn apply_edit(plan: &mut UpgradePlan, edit: &PlanEdit) -> Result<(), crate::upgrade::PlanError> {
    match edit {
        PlanEdit::Move(node, direction) => plan.move_node(node, *direction),
        PlanEdit::LeaveOut(node) => plan.leave_out(node),
        PlanEdit::Include(node) => plan.include(node),
    }
}

/// `legacy` or `lifecycle`: the API column.
pub fn api_word(api: Option<UpgradeApi>) -> &'static str {
    match api {
        Some(UpgradeApi::MachineUpgrade) => "legacy",
        Some(UpgradeApi::Lifecycle) => "lifecycle",
        None => "?",
    }
}

/// Most workers upgraded at once that the plan screen offers.
const MAX_PARALLEL: usize = 10;

/// What the installer image field says while it is typed.
const IMAGE_PROMPT: &str = "image> ";

/// The node order edited (its guards read again); an edit that does not apply is said.
fn edited(plan: &mut PlanScreen, edit: Option<PlanEdit>, shared: &Shared) -> Step {
    let refused = edit.and_then(|edit| plan.edit(edit).err());
    reread_guards(plan, shared);
    refused.map_or_else(Step::default, |e| Step::message(Message::warn(e)))
}

/// `x`: the selected node left out, or included again; a node already on the target is
/// skipped either way.
fn toggled(plan: &mut PlanScreen, shared: &Shared) -> Step {
    let made = plan.made.as_ref().ok();
    let Some(step) = made.and_then(|p| p.steps.get(plan.step_index())).cloned() else {
        return Step::default();
    };
    let edit = match step.state {
        StepState::LeftOut => PlanEdit::Include(step.node),
        StepState::Upgrade => PlanEdit::LeaveOut(step.node),
        StepState::AlreadyOnTarget => {
            return Step::message(Message::info(format!(
                "{} already runs the target; it is skipped either way",
                step.node
            )));
        }
    };
    edited(plan, Some(edit), shared)
}
