//! The config screen's patch wizard (`p`): the patch file, the nodes it targets (the node on
//! screen to begin with, a role, or every node) and the mode (auto, no-reboot, staged, try
//! with its timeout), then its plan on the one plan holder. The console reads the file and
//! the plan with `plan_config_patch`, as `taloscope config patch --plan` does (a dry run on
//! every target node); the guards are `config_patch_guards` over live status; the wizard is the
//! one plan screen (`views::plan`) over the patch, a screen the config screen opens by name;
//! Start goes through the one gate and the approved plan runs as `ConfigPatchRollout` on the
//! one runner.
//! Pure: the reads are asked as screen tasks and answered as news.
use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::{Binding, Key, bind};
use crate::app::message::Message;
use crate::app::plan_screen::{GuardReading, PlanHolder, PlanSubject, roles_of};
use crate::app::screens::{Opening, ScreenName, ScreenNews, ScreenTask, Shared, Step};
use crate::approval::MutatingAction;
use crate::fleet::NodeRole;
use crate::guards::Guard;
use crate::operation::config_patch::{ConfigPatchPlan, config_patch_guards, mode_name};
use crate::talos::ApplyMode;
use crate::tui::Look;
use crate::views::form::cycled_in;
use crate::views::plan::{PlanOperation, PlanScreen};

/// The wizard's screen name: its news and tasks are addressed to it, the config screen's `p`
/// opens it with the cluster and the node (`config-patch CLUSTER NODE`).
pub const PATCH: ScreenName = "config-patch";

/// The modes a patch is applied in, as `--mode` offers them.
const MODES: [ApplyMode; 4] = [
    ApplyMode::Auto,
    ApplyMode::NoReboot,
    ApplyMode::Staged,
    ApplyMode::Try,
];

/// The try timeouts offered, in seconds (`--try-timeout`'s default first).
const TRY_TIMEOUTS: [u64; 6] = [60, 120, 300, 600, 1800, 3600];

/// Which nodes the patch is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Targets {
    /// The nodes named on the form (`--nodes`).
    Named,
    /// Every node of a role (`--role`).
    Role(NodeRole),
    /// Every node of the cluster.
    Every,
}

const TARGETS: [Targets; 4] = [
    Targets::Named,
    Targets::Role(NodeRole::Worker),
    Targets::Role(NodeRole::Controlplane),
    Targets::Every,
];

/// A field of the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    File,
    Targets,
    Nodes,
    Mode,
    TryTimeout,
}

/// The wizard's form as typed and chosen, and how many plans it asked (only the latest's news
/// is kept): what the wizard keeps beside its plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchForm {
    pub cluster: String,
    /// The patch file's path as typed; read when the plan is asked.
    pub file: String,
    pub targets: Targets,
    /// Node names or addresses, comma-separated.
    pub nodes: String,
    pub mode: ApplyMode,
    pub try_timeout: Duration,
    pub field: Field,
    pub asked: u64,
}

impl PatchForm {
    /// The form of a patch for `node` of `cluster`, in `auto` mode.
    pub fn new(cluster: &str, node: &str) -> PatchForm {
        PatchForm {
            cluster: cluster.to_string(),
            file: String::new(),
            targets: Targets::Named,
            nodes: node.to_string(),
            mode: ApplyMode::Auto,
            try_timeout: Duration::from_secs(TRY_TIMEOUTS[0]),
            field: Field::File,
            asked: 0,
        }
    }

    /// The fields shown: the nodes only when named, the try timeout only in try mode.
    pub fn fields(&self) -> Vec<Field> {
        let mut fields = vec![Field::File, Field::Targets];
        if self.targets == Targets::Named {
            fields.push(Field::Nodes);
        }
        fields.push(Field::Mode);
        if self.mode == ApplyMode::Try {
            fields.push(Field::TryTimeout);
        }
        fields
    }

    /// Whether the field on the cursor is a choice (Left and Right go through it).
    fn on_choice(&self) -> bool {
        matches!(self.field, Field::Targets | Field::Mode | Field::TryTimeout)
    }

    /// The cursor on the next (or previous) field, wrapping around.
    fn step_field(&mut self, forward: bool) {
        if let Some(field) = cycled_in(&self.fields(), &self.field, forward) {
            self.field = *field;
        }
    }

    /// The choice on the cursor moved on (or back), wrapping around.
    fn choose(&mut self, forward: bool) {
        match self.field {
            Field::Targets => self.targets = *next(&TARGETS, &self.targets, forward),
            Field::Mode => self.mode = *next(&MODES, &self.mode, forward),
            Field::TryTimeout => {
                let secs = *next(&TRY_TIMEOUTS, &self.try_timeout.as_secs(), forward);
                self.try_timeout = Duration::from_secs(secs);
            }
            Field::File | Field::Nodes => {}
        }
    }

    /// The text field on the cursor, if it is one.
    fn text_mut(&mut self) -> Option<&mut String> {
        match self.field {
            Field::File => Some(&mut self.file),
            Field::Nodes => Some(&mut self.nodes),
            _ => None,
        }
    }

    /// The plan's request as the console reads it, or why the form is not complete.
    fn task(&self, asked: u64) -> Result<PatchTask, String> {
        let file = self.file.trim();
        if file.is_empty() {
            return Err("type the patch file's path first".into());
        }
        let nodes: Vec<String> = self
            .nodes
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect();
        let (role, nodes) = match self.targets {
            Targets::Named if nodes.is_empty() => {
                return Err("name a node (or choose a role) first".into());
            }
            Targets::Named => (None, nodes),
            Targets::Role(role) => (Some(role), Vec::new()),
            Targets::Every => (None, Vec::new()),
        };
        Ok(PatchTask {
            asked,
            cluster: self.cluster.clone(),
            file: file.to_string(),
            role,
            nodes,
            mode: self.mode,
            try_timeout: self.try_timeout,
        })
    }
}

/// The choice after (or before) `now` among `all`, which is never empty.
fn next<'a, T: PartialEq>(all: &'a [T], now: &T, forward: bool) -> &'a T {
    cycled_in(all, now, forward).unwrap_or(&all[0])
}

/// The targets in the command line's words.
pub fn targets_name(targets: Targets) -> &'static str {
    match targets {
        Targets::Named => "the nodes named",
        Targets::Role(NodeRole::Worker) => "every worker",
        Targets::Role(NodeRole::Controlplane) => "every control plane",
        Targets::Role(NodeRole::Unknown) => "every node of no known role",
        Targets::Every => "every node",
    }
}

/// What the wizard asks of the console: the patch file read and validated, then the plan of
/// it from each target node's dry run (`plan_config_patch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchTask {
    /// Which ask: news of an earlier one is dropped.
    pub asked: u64,
    pub cluster: String,
    pub file: String,
    pub role: Option<NodeRole>,
    pub nodes: Vec<String>,
    pub mode: ApplyMode,
    pub try_timeout: Duration,
}

/// The plan the console read, or why not (the error names the file or the node).
#[derive(Debug, Clone)]
pub struct PatchNews {
    pub asked: u64,
    pub read: Result<ConfigPatchPlan, String>,
}

/// The plan on screen: what was asked, and the plan read (`None` until it came).
#[derive(Debug, Clone)]
pub struct PatchPlan {
    pub asked: PatchTask,
    pub read: Option<Result<ConfigPatchPlan, String>>,
}

impl PatchPlan {
    pub fn planned(&self) -> Option<&ConfigPatchPlan> {
        self.read.as_ref()?.as_ref().ok()
    }
}

impl PlanSubject for PatchPlan {
    fn unready(&self) -> Option<String> {
        match &self.read {
            None => Some("reading the patch file and each target node's dry run first".into()),
            Some(Err(why)) => Some(why.clone()),
            Some(Ok(_)) => None,
        }
    }

    /// The guards `taloscope config patch` evaluates, over the live status, the rollout
    /// Lease and the Cluster API owner as the console knows them.
    fn evaluate(&mut self, _cluster: &str, reading: &GuardReading<'_>, _: &[String]) -> Vec<Guard> {
        let (Some(plan), Some(live)) = (self.planned(), reading.live) else {
            return Vec::new();
        };
        let status = &live.status;
        let (roles, lease) = (roles_of(status), &reading.other_rollout);
        config_patch_guards(plan, None, status, &roles, lease, reading.capi_owner)
    }

    fn approval(&self, _: &str) -> Option<MutatingAction> {
        self.planned().map(ConfigPatchPlan::action)
    }
}

/// The wizard: its form, then the plan of what it asked on the one plan screen (drawn over the
/// config screen, which hands it its keys and news).
pub type PatchWizard = PlanScreen<PatchPlan>;

/// The form's key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormKey {
    Field(bool),
    Choose(bool),
    Erase,
    MakePlan,
    Cancel,
}

#[rustfmt::skip]
static FORM: &[Binding<FormKey, PatchWizard>] = &[
    bind(&[Key::TAB, Key::DOWN], FormKey::Field(true), "the next field").footer("next field"),
    bind(&[Key::UP], FormKey::Field(false), "the previous field"),
    bind(&[Key::RIGHT], FormKey::Choose(true), "the next choice (targets, mode, try timeout)").footer("choose").offered(on_choice),
    bind(&[Key::LEFT], FormKey::Choose(false), "the previous choice"),
    bind(&[Key::BACKSPACE], FormKey::Erase, "erase the last character typed"),
    bind(&[Key::ENTER], FormKey::MakePlan, "read the patch file and plan it: a dry run on every target node (nothing changes)").footer("plan"),
    bind(&[Key::ESC], FormKey::Cancel, "cancel: nothing is patched").footer("cancel"),
];

fn on_choice(wizard: &PatchWizard) -> bool {
    wizard.kept.on_choice()
}

impl Default for PatchForm {
    fn default() -> Self {
        PatchForm::new("", "")
    }
}

impl PlanOperation for PatchPlan {
    const NAME: ScreenName = PATCH;
    const TITLE: &'static str = "Config patch (p on the config screen)";
    type Kept = PatchForm;
    type Key = FormKey;

    /// The form's keys while no plan shows.
    fn own_keys(wizard: &PatchWizard) -> &'static [Binding<FormKey, PatchWizard>] {
        if wizard.plan.is_none() { FORM } else { &[] }
    }

    fn before_plan(wizard: &PatchWizard) -> bool {
        wizard.plan.is_none()
    }

    /// The config screen's `p` opens it on its node, a fresh form in `auto` mode.
    fn open(wizard: &mut PatchWizard, opening: &Opening, _: &Shared) -> Result<Step, Message> {
        let [_, cluster, node] = opening.words.as_slice() else {
            return Err(Message::warn(
                "p on the config screen opens the patch wizard",
            ));
        };
        *wizard = PatchWizard::default();
        wizard.kept = PatchForm::new(cluster, node);
        Ok(Step::default())
    }

    fn on_key(wizard: &mut PatchWizard, key: FormKey, _: &Shared) -> Step {
        let form = &mut wizard.kept;
        match key {
            FormKey::Field(forward) => form.step_field(forward),
            FormKey::Choose(forward) => form.choose(forward),
            FormKey::Erase => {
                if let Some(text) = form.text_mut() {
                    text.pop();
                }
            }
            FormKey::MakePlan => return wizard.ask_plan(),
            FormKey::Cancel => return Step::close(),
        }
        Step::default()
    }

    fn on_news(wizard: &mut PatchWizard, news: &ScreenNews, shared: &Shared) -> bool {
        news.get::<PatchNews>()
            .is_some_and(|news| wizard.planned(news, shared))
    }

    fn typing(wizard: &PatchWizard) -> Option<(&'static str, &'static str)> {
        let help = "the patch file's path, the node names (comma-separated)";
        wizard.plan.is_none().then_some(("text", help))
    }

    fn on_char(wizard: &mut PatchWizard, c: char) -> Step {
        if let Some(text) = wizard.kept.text_mut() {
            text.push(c);
        }
        Step::default()
    }

    /// `r`: the file and the dry runs read again.
    fn refresh(wizard: &mut PatchWizard, _: &Shared) -> Step {
        wizard.ask_plan()
    }

    /// Esc on the plan: back to the form, nothing patched.
    fn back(wizard: &mut PatchWizard) -> Step {
        wizard.plan = None;
        Step::default()
    }

    fn run(holder: &PlanHolder<PatchPlan>, _: &Shared) -> Result<ActionRun, String> {
        let planned = holder
            .plan
            .planned()
            .ok_or("the plan is still being read")?;
        Ok(ActionRun::ConfigPatch(Box::new(planned.clone())))
    }

    fn draw(wizard: &PatchWizard, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        super::patch_view::draw(wizard, area, buf, shared.readonly, look);
    }
}

impl PatchWizard {
    /// The plan of the form asked of the console; the form says what it lacks.
    fn ask_plan(&mut self) -> Step {
        let task = match self.kept.task(self.kept.asked + 1) {
            Ok(task) => task,
            Err(why) => return Step::message(Message::warn(why)),
        };
        self.kept.asked = task.asked;
        let plan = PatchPlan {
            asked: task.clone(),
            read: None,
        };
        self.plan = Some(PlanHolder::new(&self.kept.cluster, plan));
        Step::effects(vec![Effect::Screen(ScreenTask::new(PATCH, task))])
    }

    /// The plan the console read, with its guards; dropped unless it answers the latest ask.
    fn planned(&mut self, news: &PatchNews, shared: &Shared) -> bool {
        let Some(holder) = self.plan.as_mut() else {
            return false;
        };
        if news.asked != holder.plan.asked.asked {
            return false;
        }
        holder.plan.read = Some(news.read.clone());
        holder.evaluate_guards(&shared.guards.guard_reading(&holder.cluster));
        true
    }
}

/// The mode in the command line's words, with what it does.
pub fn mode_words(mode: ApplyMode) -> (&'static str, &'static str) {
    let what = match mode {
        ApplyMode::Auto => "the node reboots when the change needs it",
        ApplyMode::NoReboot => "refused by a node where the change needs a reboot",
        ApplyMode::Staged => "applied at the node's next reboot",
        ApplyMode::Try => "the node reverts it by itself unless it is confirmed in time",
    };
    (mode_name(mode), what)
}

#[cfg(test)]
#[path = "patch_tests.rs"]
mod tests;
