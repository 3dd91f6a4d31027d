//! The provision wizard: the request's fields (provider, role, template or
//! OneFlow service, count, name pattern) with the focused one marked, then
//! the plan as the headless command prints it (or why there is none), its
//! guards as `provision --plan` prints them, and a last line saying what
//! Start will do (or the acknowledgement it waits for).
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{Field, ProvisionScreen, SourceList, Wizard};
use crate::app::plan_screen::AskedPlan;
use crate::app::screens::Shared;
use crate::provision::plan::vm_names;
use crate::tui::{Look, Role};
use crate::views::plan::{ChecksPane, NO_GUARDS_YET, WizardPlan};
use crate::views::plan_parts::field_line;
use crate::views::table::pane_block;

/// Draws the wizard of `screen`.
pub(super) fn draw(
    screen: &ProvisionScreen,
    area: Rect,
    buf: &mut Buffer,
    shared: &Shared,
    look: &Look,
) {
    let view = WizardView { shared, look };
    let s = &look.styles;
    let Some(w) = screen.wizard.as_ref() else {
        Paragraph::new("No provision wizard open. p opens it from a cluster.")
            .style(s.get(Role::Muted))
            .render(area, buf);
        return;
    };
    view.render(w, area, buf);
}

struct WizardView<'a> {
    shared: &'a Shared<'a>,
    look: &'a Look,
}

impl WizardView<'_> {
    /// The value shown for `field`, and its role.
    fn value(&self, w: &Wizard, field: Field) -> (String, Role) {
        match field {
            Field::Provider => match w.provider() {
                Some(p) => {
                    let default = self
                        .shared
                        .config
                        .clusters
                        .get(&w.key)
                        .and_then(|e| e.provider.as_deref());
                    let mark = if default == Some(p.name.as_str()) {
                        ", the cluster's"
                    } else {
                        ""
                    };
                    let kind = p.kind;
                    (
                        format!(
                            "{} ({kind}{mark})  [{} of {}]",
                            p.name,
                            w.provider + 1,
                            w.providers.len()
                        ),
                        Role::Text,
                    )
                }
                None => ("none configured".into(), Role::Error),
            },
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

    fn fields(&self, w: &Wizard, width: usize) -> Vec<Line<'static>> {
        Field::ALL
            .iter()
            .map(|f| {
                let focused = *f == w.field;
                let title = match f {
                    Field::Source => w.source_title(),
                    other => other.title(),
                };
                let (value, role) = self.value(w, *f);
                field_line(
                    self.look,
                    focused,
                    &format!("{title:<9}"),
                    (&value, role),
                    width,
                )
            })
            .collect()
    }

    /// The plan's lines, and the last line with its role.
    fn plan(&self, w: &Wizard) -> (Vec<Line<'static>>, (String, Role)) {
        let s = &self.look.styles;
        match &w.plan {
            AskedPlan::None => (
                vec![Line::from(Span::styled(
                    "No plan yet: Enter asks the provider and checks the machine config.",
                    s.get(Role::Muted),
                ))],
                ("Enter makes the plan".into(), Role::Muted),
            ),
            AskedPlan::Planning(_) => (
                vec![Line::from(Span::styled(
                    "Asking the provider for the plan...",
                    s.get(Role::Muted),
                ))],
                ("planning".into(), Role::Muted),
            ),
            AskedPlan::Failed(e) => (
                vec![Line::from(Span::styled(e.clone(), s.get(Role::Error)))],
                (
                    format!(
                        "{} no plan: fix the above, then Enter",
                        self.look.glyphs.error
                    ),
                    Role::Error,
                ),
            ),
            AskedPlan::Ready(plan) => (
                plan.table()
                    .lines()
                    .map(|l| Line::from(Span::styled(l.to_string(), s.get(Role::Text))))
                    .collect(),
                // Not drawn: a ready plan's last line is the guards' verdict.
                (String::new(), Role::Ok),
            ),
        }
    }
    fn render(&self, w: &Wizard, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let ready = matches!(w.plan, AskedPlan::Ready(_));
        let guard_rows = if ready {
            w.guards.shown.len().max(1)
        } else {
            0
        };
        let [head, fields_area, plan_area, guards_area, last] = area.layout(&Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(Field::ALL.len() as u16 + 2),
            Constraint::Min(3),
            // Borders and the column header around the rows.
            Constraint::Length(if ready { guard_rows as u16 + 3 } else { 0 }),
            Constraint::Length(1),
        ]));
        let block = pane_block(
            self.look,
            vec![Span::styled(" Request ", s.get(Role::Title))],
            !w.guards_focused,
        );
        let inner = block.inner(fields_area);
        block.render(fields_area, buf);
        Paragraph::new(self.fields(w, usize::from(inner.width))).render(inner, buf);

        let (lines, status) = self.plan(w);
        let checks = if ready {
            Ok(ChecksPane::of(w, NO_GUARDS_YET))
        } else {
            Err(status)
        };
        let plan = WizardPlan {
            title: format!(
                "Provision new nodes for {} (config key {})",
                w.cluster, w.key
            ),
            lines,
            checks,
        };
        let areas = [head, plan_area, guards_area, last];
        plan.render(self.look, self.shared.readonly, areas, buf);
    }
}
