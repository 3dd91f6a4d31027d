//! The create screen drawn by stage: the wizard (the new cluster's request with the focused
//! field marked and what an empty field means, a note when a killed run's journal filled it
//! in, and a last line saying what Enter does), or its plan (`plan`).
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget, Wrap};

use super::plan::CreatePlanView;
use super::{CreateField, CreateScreen, CreateStage, CreateWizard};
use crate::app::screens::Shared;
use crate::cluster_lifecycle::planner::versions;
use crate::config::Config;
use crate::tui::Role;
use crate::views::plan_parts::field_line;
use crate::views::table::pane_block;
use crate::views::{Look, fit};

/// The screen of its stage.
pub(super) fn draw(
    screen: &CreateScreen,
    area: Rect,
    buf: &mut Buffer,
    shared: &Shared,
    look: &Look,
) {
    let wizard = screen.wizard.as_ref();
    match screen.stage {
        CreateStage::Form => {
            let config = shared.config;
            (&CreateWizardView {
                wizard,
                config,
                look,
            })
                .render(area, buf);
        }
        CreateStage::Plan => {
            (&CreatePlanView::new(wizard, shared.readonly, look)).render(area, buf);
        }
    }
}

struct CreateWizardView<'a> {
    wizard: Option<&'a CreateWizard>,
    config: &'a Config,
    look: &'a Look,
}

impl CreateWizardView<'_> {
    /// The value shown for `field`, and its role.
    fn value(&self, w: &CreateWizard, field: CreateField) -> (String, Role) {
        let muted = |s: &str| (s.to_string(), Role::Muted);
        match field {
            CreateField::Name if w.name.is_empty() => muted("(e to type it)"),
            CreateField::Name => (w.name.clone(), Role::Text),
            CreateField::Provider => match w.provider() {
                Some(name) => {
                    let kind = self
                        .config
                        .providers
                        .get(name)
                        .map(|p| p.kind.to_string())
                        .unwrap_or_default();
                    let (at, of) = (w.provider + 1, w.providers.len());
                    (format!("{name} ({kind})  [{at} of {of}]"), Role::Text)
                }
                None => ("none configured".into(), Role::Error),
            },
            CreateField::ControlPlanes => {
                let even = w.controlplanes.is_multiple_of(2);
                let role = if even { Role::Warn } else { Role::Text };
                (w.controlplanes.to_string(), role)
            }
            CreateField::Workers => (w.workers.to_string(), Role::Text),
            CreateField::Talos => (w.talos.clone(), Role::Text),
            CreateField::Kubernetes if w.kubernetes.is_empty() => match versions(&w.talos, None) {
                Ok((_, k, _)) => muted(&format!("default: {k}, talosctl's for this Talos")),
                Err(e) => (e, Role::Warn),
            },
            CreateField::Kubernetes => (w.kubernetes.clone(), Role::Text),
            CreateField::Endpoint if w.endpoint.is_empty() => {
                muted("default: the gateway role's, else the first control plane's")
            }
            CreateField::Endpoint => (w.endpoint.clone(), Role::Text),
            CreateField::Delivery => (w.delivery.as_str().to_string(), Role::Text),
            CreateField::Patches if w.patches.is_empty() => {
                muted("none (FILE, cp:FILE, worker:FILE; comma-separated)")
            }
            CreateField::Patches => (w.patches.clone(), Role::Text),
        }
    }

    fn fields(&self, w: &CreateWizard, width: usize) -> Vec<Line<'static>> {
        CreateField::ALL
            .iter()
            .map(|f| {
                let (value, role) = self.value(w, *f);
                let title = format!("{:<15}", f.title());
                field_line(self.look, *f == w.field, &title, (&value, role), width)
            })
            .collect()
    }

    /// What the operator should know below the fields.
    fn notes(&self, w: &CreateWizard) -> Vec<Line<'static>> {
        let s = &self.look.styles;
        let mut lines = Vec::new();
        if let Some(u) = &w.resuming {
            let reached = u
                .reached
                .map_or("none".to_string(), |p| p.title().to_string());
            lines.push(Line::from(Span::styled(
                format!(
                    "A create of {} was stopped (last phase done: {reached}). Its request is filled in: Enter plans it again and its run resumes from the journal, without a second set of VMs.",
                    u.cluster
                ),
                s.get(Role::Warn),
            )));
        }
        let others: Vec<&str> = w
            .unfinished
            .iter()
            .map(|u| u.cluster.as_str())
            .filter(|c| w.resuming.as_ref().is_none_or(|r| r.cluster != *c))
            .collect();
        if !others.is_empty() {
            lines.push(Line::from(Span::styled(
                format!(
                    "Other stopped creates (type the name to resume one): {}",
                    others.join(", ")
                ),
                s.get(Role::Muted),
            )));
        }
        lines.push(Line::from(Span::styled(
            match w.delivery {
                crate::cluster_lifecycle::Delivery::Maintenance => {
                    "maintenance: each VM boots without its config; you confirm its certificate fingerprint, then the config is applied over the Talos API."
                }
                crate::cluster_lifecycle::Delivery::UserData => {
                    "user-data: the config goes in each VM's CONTEXT; anyone who can read the VM can read its secrets. Needs an endpoint."
                }
            },
            s.get(Role::Muted),
        )));
        lines
    }
}

impl Widget for &CreateWizardView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let Some(w) = self.wizard else {
            Paragraph::new("No create wizard open. n on the fleet opens it.")
                .style(s.get(Role::Muted))
                .render(area, buf);
            return;
        };
        let [head, fields_area, notes_area, last] = area.layout(&Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(CreateField::ALL.len() as u16 + 2),
            Constraint::Min(1),
            Constraint::Length(1),
        ]));
        let pad = Block::new().padding(Padding::horizontal(1));
        let width = usize::from(area.width.saturating_sub(2));
        Paragraph::new(Span::styled("Create a new cluster", s.get(Role::Title)))
            .block(pad.clone())
            .render(head, buf);
        let block = pane_block(
            self.look,
            vec![Span::styled(" Request ", s.get(Role::Title))],
            true,
        );
        let inner = block.inner(fields_area);
        block.render(fields_area, buf);
        Paragraph::new(self.fields(w, usize::from(inner.width))).render(inner, buf);
        Paragraph::new(self.notes(w))
            .block(pad.clone())
            .wrap(Wrap { trim: true })
            .render(notes_area, buf);
        let last_line = "Enter makes the plan; nothing is created before you confirm";
        Paragraph::new(Span::styled(
            fit(last_line, width, self.look.glyphs.ellipsis),
            s.get(Role::Muted),
        ))
        .block(pad)
        .render(last, buf);
    }
}
