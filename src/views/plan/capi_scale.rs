//! What a CAPI scale's plan shows above its guards on the action screen: the object, its
//! `spec.replicas` from -> to and the Machines created or deleted (the table `taloscope scale
//! --plan` prints), or that both sides are still being read, or why no plan was made.
use ratatui::text::{Line, Span};

use crate::app::capi_scale::CapiScalePlan;
use crate::printable::line as printable;
use crate::tui::Role;
use crate::views::Look;

/// The summary lines of `plan`.
pub fn summary_lines(look: &Look, plan: &CapiScalePlan) -> Vec<Line<'static>> {
    let s = &look.styles;
    let mut lines = Vec::new();
    match &plan.read {
        None => lines.push(Line::from(Span::styled(
            "reading the Cluster API tree, etcd over the Talos API and the rollout Lease...",
            s.get(Role::Muted),
        ))),
        Some(Ok(prepared)) => lines.extend(
            prepared
                .plan
                .table()
                .lines()
                .skip(1)
                .map(|l| Line::from(Span::styled(printable(l.trim()), s.get(Role::Text)))),
        ),
        Some(Err(e)) => lines.push(Line::from(Span::styled(printable(e), s.get(Role::Error)))),
    }
    if let Some(note) = &plan.target.note {
        lines.push(Line::from(Span::styled(printable(note), s.get(Role::Warn))));
    }
    lines
}
