//! The CAPI screen (`:capi`, `C` on the cluster panes): the cluster in use as its Cluster API
//! management cluster sees it, grouped like `clusterctl describe cluster` (the rows `taloscope
//! capi status` prints, `capi::tree_rows`), and the CAPI doctor's findings. Enter explains the
//! selected object's conditions, `f` / `a` open the doctor's fixes (`views::actions`), `s` the
//! replica count of the object the row scales (`views::cluster_plan`). State, keys and update
//! step here, the drawing in `view`.
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::actions::fix_choices;
use crate::app::binding::{Binding, Key, KeyLine, MOVE_KEYS, bind, intent, lines_with_moves};
use crate::app::message::Message;
use crate::app::screens::{Ask, FleetChange, ScreenModule, ScreenName, Shared, Step};
use crate::capi::{ClusterTree, TreeRow, condition_age, condition_head, tree_rows};
use crate::capi_doctor::findings_of;
use crate::tui::Look;

mod view;

/// The screen module's name.
pub const NAME: ScreenName = "capi";

/// Where the operator is on the CAPI screen, and what its footer offers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapiScreen {
    /// The selected row's object (`Machine/…`), kept across reads.
    pub selected: Option<String>,
    /// Whether the doctor found a stuck state with a fix (`f` is offered).
    fixable: bool,
    /// Whether the tree has something to scale (`s` is offered).
    scalable: bool,
}

/// The screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CapiKey {
    Conditions,
    Fix,
    Scale,
    Back,
}

#[rustfmt::skip]
static KEYS: &[Binding<CapiKey, CapiScreen>] = &[
    bind(&[Key::ENTER], CapiKey::Conditions, "every condition of the selected object").footer("conditions"),
    bind(&[Key::char('f'), Key::char('a')], CapiKey::Fix, "fix a stuck state the doctor found (its plan and guards first)").footer("fix").offered(|s| s.fixable),
    bind(&[Key::char('s')], CapiKey::Scale, "scale the selected MachineDeployment (any other row: the TalosControlPlane): replicas, plan, guards").footer("scale").offered(|s| s.scalable),
    bind(&[Key::ESC], CapiKey::Back, "back to the cluster's panes").footer("back"),
];

/// The tree of the cluster in use, when a management cluster owns it.
fn shown_tree(shared: &Shared) -> Option<ClusterTree> {
    let (_, tree) = shared.fleet.capi.owned_tree(shared.current?)?;
    Some(tree)
}

impl CapiScreen {
    /// The rows on screen and the selected one's index.
    pub fn rows_and_selection(&self, shared: &Shared) -> (Vec<TreeRow>, usize) {
        let rows = shown_tree(shared)
            .map(|t| tree_rows(&t))
            .unwrap_or_default();
        let index = (self.selected.as_ref())
            .and_then(|s| rows.iter().position(|r| &r.object == s))
            .unwrap_or(0);
        (rows, index)
    }

    /// What the footer offers, read again from the model.
    fn offers(&mut self, shared: &Shared) {
        let cluster = shared.current.unwrap_or_default();
        self.fixable = !fix_choices(&findings_of(shared.fleet, cluster)).is_empty();
        self.scalable = shown_tree(shared).is_some_and(|t| crate::capi_scale::scalable(&t));
    }
}

impl ScreenModule for CapiScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        "Cluster API tree and doctor (C, :capi)"
    }

    fn keys(&self) -> Vec<KeyLine> {
        lines_with_moves(KEYS, self)
    }

    /// On the cluster in use, when a management cluster among the kube contexts owns it.
    fn open(&mut self, shared: &Shared) -> Result<Step, Message> {
        let cluster = shared.cluster_in_use()?;
        let capi = &shared.fleet.capi;
        if capi.owner(cluster).is_none() {
            let why = match capi.managements.len() {
                0 => "no management cluster among the kube contexts (yet)".to_string(),
                n => format!("none of the {n} management clusters owns it"),
            };
            let text = format!("{cluster} is not owned by Cluster API: {why}");
            return Err(Message::info(text));
        }
        self.selected = None;
        self.offers(shared);
        Ok(Step::default())
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        let (rows, index) = self.rows_and_selection(shared);
        let selected = rows.get(index).map(|r| r.object.clone());
        if let Some(step) = intent(MOVE_KEYS, event) {
            let page = usize::from(shared.size.1.saturating_sub(10)).max(1);
            let to = step.from(index, rows.len().saturating_sub(1), page);
            self.selected = rows.get(to).map(|r| r.object.clone());
            return Step::default();
        }
        match intent(KEYS, event) {
            Some(CapiKey::Conditions) => match rows.get(index) {
                Some(row) => Step::ask(Ask::Explain {
                    title: row.object.clone(),
                    text: conditions_text(row, shared.wall_clock.unwrap_or(0)),
                }),
                None => Step::default(),
            },
            Some(CapiKey::Fix) => Step::open("actions", vec!["fix".into()]),
            Some(CapiKey::Scale) => Step::open(
                "cluster-plan",
                vec!["scale".into(), selected.unwrap_or_default()],
            ),
            Some(CapiKey::Back) => Step::close(),
            None => Step::default(),
        }
    }

    /// The tree, the fleet's status under the doctor, or the footer's offers may change.
    fn on_fleet_change(&mut self, change: &FleetChange, shared: &Shared) -> bool {
        let shown = change.capi || shared.current == Some(change.cluster);
        if shown {
            self.offers(shared);
        }
        shown
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        view::render(self, shared, look, area, buf);
    }
}

/// `type status (severity) reason, since age` then the message indented, per condition.
pub fn conditions_text(row: &TreeRow, now: u64) -> String {
    if row.conditions.is_empty() {
        return "No conditions reported.".to_string();
    }
    let mut text = String::new();
    for c in &row.conditions {
        let mut head = condition_head(c);
        if let Some(age) = condition_age(c, now) {
            head.push_str(&format!(", since {age} ago"));
        }
        text.push_str(&crate::printable::line(&head));
        text.push('\n');
        for line in c.message.lines() {
            text.push_str(&format!("  {}\n", crate::printable::line(line)));
        }
    }
    text.trim_end().to_string()
}
