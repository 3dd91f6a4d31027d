//! The plan of a cluster's delete or a CAPI scale: what it does and to what (the VMs or
//! service, contexts and journals; the replicas and the Machines created or deleted, the table
//! `taloscope scale --plan` prints), or that it is still being read, or why it could not be;
//! then the guards worst first and whether Start is offered or which acknowledgement to type.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{Asked, ClusterPlanHolder, Planned};
use crate::capi_scale::PreparedScale;
use crate::printable::line as printable;
use crate::tui::Role;
use crate::views::Look;
use crate::views::plan_parts::{ChecksPane, NO_GUARDS_YET, SummaryPlan, capitalised};

pub(super) fn draw(
    holder: &ClusterPlanHolder,
    area: Rect,
    buf: &mut Buffer,
    readonly: bool,
    look: &Look,
) {
    // No guard yet: the reason Start is refused says what is still awaited (the plan's
    // read, its own error), never "no status" while there is one.
    let waiting = holder.start_refused();
    let plan = SummaryPlan {
        summary: summary(holder, look),
        subjects: None,
        checks: ChecksPane::of(holder, waiting.as_deref().unwrap_or(NO_GUARDS_YET)),
    };
    plan.render(look, readonly, area, buf);
}

fn summary(holder: &ClusterPlanHolder, look: &Look) -> Vec<Line<'static>> {
    let s = &look.styles;
    let styled = |text: &str, role: Role| Line::from(Span::styled(printable(text), s.get(role)));
    let title = capitalised(&holder.plan.title(&holder.cluster));
    let mut lines = vec![Line::from(Span::styled(title, s.get(Role::Title)))];
    let (reading, notes) = match &holder.plan.asked {
        Asked::Delete => (
            "reading the create journal, the provider and the rollout Lease...",
            None,
        ),
        Asked::Scale { target, .. } => (
            "reading the Cluster API tree, etcd over the Talos API and the rollout Lease...",
            target.note.as_deref(),
        ),
    };
    let table = (holder.plan.read.as_ref()).map(|read| {
        read.as_ref().map(|planned| match planned {
            Planned::Delete(plan, _) => plan.table(),
            Planned::Scale(prepared) => scale_table(prepared),
        })
    });
    let warnings = match &holder.plan.read {
        Some(Ok(Planned::Delete(_, warnings))) => warnings.as_slice(),
        _ => &[],
    };
    match table {
        None => lines.push(styled(reading, Role::Muted)),
        Some(Ok(table)) => lines.extend(table.lines().map(|l| styled(l, Role::Text))),
        Some(Err(e)) => lines.push(styled(e, Role::Error)),
    }
    let warned = warnings.iter().map(String::as_str).chain(notes);
    lines.extend(warned.map(|w| styled(w, Role::Warn)));
    lines
}

/// The table `taloscope scale --plan` prints, without its first line (the title's).
fn scale_table(prepared: &PreparedScale) -> String {
    let table = prepared.plan.table();
    let rows: Vec<&str> = table.lines().skip(1).map(str::trim).collect();
    rows.join("\n")
}
