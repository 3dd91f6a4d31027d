//! The create screen drawn by stage: the wizard (the new cluster's request with the focused
//! field marked and what an empty field means, a note when a killed run's journal filled it
//! in, and a last line saying what Enter does), or its plan (`plan`).
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget, Wrap};

use super::{CreateField, CreateWizard, NewCluster};
use crate::app::plan_screen::PlanHolder;
use crate::app::screens::Shared;
use crate::cluster_lifecycle::Delivery;
use crate::cluster_lifecycle::planner::versions;
use crate::tui::Role;
use crate::views::form::{FormField, provider_value, render_request};
use crate::views::wizard::WizardKind;
use crate::views::{Look, fit};

/// The plan while its guards have the keys, else the request.
pub(super) fn draw(
    h: &PlanHolder<CreateWizard>,
    area: Rect,
    buf: &mut Buffer,
    shared: &Shared,
    look: &Look,
) {
    match h.on_guards {
        true => super::plan::draw(h, shared.readonly, look, area, buf),
        false => draw_form(h, look, area, buf),
    }
}

/// The value shown for `field`, and its role.
fn value(w: &CreateWizard, field: CreateField) -> (String, Role) {
    let muted = |s: &str| (s.to_string(), Role::Muted);
    match field {
        CreateField::Name if w.name.is_empty() => muted("(e to type it)"),
        CreateField::Name => (w.name.clone(), Role::Text),
        CreateField::Provider => provider_value(&w.providers, w.provider, None),
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

/// What the operator should know below the fields.
fn notes(w: &CreateWizard, look: &Look) -> Vec<Line<'static>> {
    let s = &look.styles;
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
            Delivery::Maintenance => {
                "maintenance: each VM boots without its config; you confirm its certificate fingerprint, then the config is applied over the Talos API."
            }
            Delivery::UserData => {
                "user-data: the config goes in each VM's CONTEXT; anyone who can read the VM can read its secrets. Needs an endpoint."
            }
        },
        s.get(Role::Muted),
    )));
    lines
}

/// The wizard: its request, what the operator should know, and what Enter does.
fn draw_form(w: &CreateWizard, look: &Look, area: Rect, buf: &mut Buffer) {
    let s = &look.styles;
    let fields = NewCluster::FIELDS;
    let [head, fields_area, notes_area, last] = area.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(fields.len() as u16 + 2),
        Constraint::Min(1),
        Constraint::Length(1),
    ]));
    let pad = Block::new().padding(Padding::horizontal(1));
    let width = usize::from(area.width.saturating_sub(2));
    Paragraph::new(Span::styled("Create a new cluster", s.get(Role::Title)))
        .block(pad.clone())
        .render(head, buf);
    let row = |f: &FormField<CreateField, NewCluster>| (f.title, value(w, f.field));
    render_request(look, (fields, w.form.field), row, true, fields_area, buf);
    Paragraph::new(notes(w, look))
        .block(pad.clone())
        .wrap(Wrap { trim: true })
        .render(notes_area, buf);
    let last_line = "Enter makes the plan; nothing is created before you confirm";
    Paragraph::new(Span::styled(
        fit(last_line, width, look.glyphs.ellipsis),
        s.get(Role::Muted),
    ))
    .block(pad)
    .render(last, buf);
}
