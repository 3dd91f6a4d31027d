//! The provision wizard: the request's fields (provider, role, template or
//! OneFlow service, count, name pattern) with the focused one marked, then
//! the plan as the headless command prints it (or why there is none), its
//! guards as `provision --plan` prints them, and a last line saying what
//! Start will do (or the acknowledgement it waits for).
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};

use super::{Field, NewNodes, SourceList, Wizard};
use crate::app::plan_screen::PlanHolder;
use crate::app::screens::Shared;
use crate::config::Config;
use crate::provision::ProvisionPlan;
use crate::provision::plan::vm_names;
use crate::tui::{Look, Role};
use crate::views::form::{FormField, provider_value, render_request};
use crate::views::plan::{NoPlanYet, WizardPlan};
use crate::views::wizard::WizardKind;

/// What the plan pane says while there is no plan to show.
const NO_PLAN: NoPlanYet = NoPlanYet {
    none: "No plan yet: Enter asks the provider and checks the machine config.",
    none_last: "Enter makes the plan",
    failed_last: "no plan: fix the above, then Enter",
};

/// Draws the wizard `w`: its request over its plan.
pub(super) fn draw(
    w: &PlanHolder<Wizard>,
    area: Rect,
    buf: &mut Buffer,
    shared: &Shared,
    look: &Look,
) {
    let title = format!(
        "Provision new nodes for {} (config key {})",
        w.cluster, w.key
    );
    let rows = |plan: &ProvisionPlan| plan.table().lines().map(String::from).collect();
    let plan = WizardPlan::of(title, &w.form.plan, w, &NO_PLAN, rows, look);
    let fields = NewNodes::FIELDS;
    let guard_rows = match plan.checks {
        // Borders and the column header around the rows.
        Ok(_) => w.guards.shown.len().max(1) as u16 + 3,
        Err(_) => 0,
    };
    let [head, fields_area, plan_area, guards_area, last] = area.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(fields.len() as u16 + 2),
        Constraint::Min(3),
        Constraint::Length(guard_rows),
        Constraint::Length(1),
    ]));
    let row = |f: &FormField<Field, NewNodes>| match f.field {
        Field::Source => (w.source_title(), value(w, shared.config, f.field)),
        field => (f.title, value(w, shared.config, field)),
    };
    let (form, active) = ((fields, w.form.field), !w.on_guards);
    render_request(look, form, row, active, fields_area, buf);
    let areas = [head, plan_area, guards_area, last];
    plan.render(look, shared.readonly, areas, buf);
}

/// The value shown for `field`, and its role.
fn value(w: &Wizard, config: &Config, field: Field) -> (String, Role) {
    match field {
        Field::Provider => {
            let own = config
                .clusters
                .get(&w.key)
                .and_then(|e| e.provider.as_deref());
            provider_value(&w.providers, w.provider, own)
        }
        Field::Role => (w.role.as_str().to_string(), Role::Text),
        Field::Source => match &w.sources {
            SourceList::Loading => ("asking the provider...".into(), Role::Muted),
            SourceList::Failed(e) => (e.clone(), Role::Error),
            SourceList::Ready(list) if list.is_empty() => {
                ("the provider lists none".into(), Role::Warn)
            }
            SourceList::Ready(list) => match list.get(w.source) {
                Some(c) => (
                    format!("{}  [{} of {}]", c.label(), w.source + 1, list.len()),
                    Role::Text,
                ),
                None => ("none".into(), Role::Warn),
            },
        },
        Field::Count => (format!("{} VM(s)", w.count), Role::Text),
        Field::Names => {
            let first = vm_names(&w.pattern, &w.key, w.role, 1, &Default::default());
            let example = first.first().cloned().unwrap_or_default();
            (format!("{}  (e.g. {example})", w.pattern), Role::Text)
        }
    }
}
