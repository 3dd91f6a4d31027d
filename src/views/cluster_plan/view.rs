//! The plan of a cluster's delete or a CAPI scale: what it does and to what (the VMs or
//! service, contexts and journals; the replicas and the Machines created or deleted, the table
//! `taloscope scale --plan` prints), or that it is still being read, or why it could not be;
//! a CAPI-way upgrade's: through which management cluster, from what to what, each phase (the
//! TalosControlPlane, then each MachineDeployment) with its patch and the Machines it replaces
//! in the providers' order; then the guards worst first and whether Start is offered or which
//! acknowledgement to type.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget};

use super::{Asked, CapiPlanRequest, ClusterPlanHolder, Planned};
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col};
use crate::capi_scale::PreparedScale;
use crate::printable::line as printable;
use crate::tui::Role;
use crate::upgrade::capi::{CapiUpgradePlan, product_name};
use crate::views::Look;
use crate::views::plan_parts::{
    ChecksPane, NO_GUARDS_YET, SummaryPlan, capitalised, fitted, guards_keep_half,
};
use crate::views::progress_parts::{StepTable, render_step_pane};

pub(super) fn draw(
    holder: &ClusterPlanHolder,
    area: Rect,
    buf: &mut Buffer,
    readonly: bool,
    look: &Look,
) {
    if let Asked::Upgrade(request) = &holder.plan.asked {
        return draw_upgrade(holder, request, area, buf, readonly, look);
    }
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
    // An upgrade draws its own pane (`draw_upgrade`).
    let (reading, notes) = match &holder.plan.asked {
        Asked::Delete | Asked::Upgrade(_) => (
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
            Planned::Upgrade(..) => String::new(),
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

static PHASE_COLUMNS: &[Column] = &[
    col("#", Width::Content),
    col("OBJECT", Width::Content),
    col("REPLICAS", Width::Content),
    col("MACHINES REPLACED, IN ORDER", Width::Fill(1)),
];

fn phase_rows(plan: &CapiUpgradePlan) -> Vec<TableRow> {
    plan.phases
        .iter()
        .enumerate()
        .map(|(i, p)| TableRow {
            key: i.to_string(),
            cells: vec![
                TableCell::plain((i + 1).to_string()),
                TableCell::plain(printable(&p.label())),
                TableCell::plain(p.replicas.to_string()),
                if p.replace.is_empty() {
                    TableCell::new("none (on the target)", Tone::Muted)
                } else {
                    TableCell::plain(printable(&p.replace_text()))
                },
            ],
        })
        .collect()
}

/// An upgrade's title, what it does, and the selected phase's patch (too long for a column at
/// 80 wide).
fn upgrade_summary(
    holder: &ClusterPlanHolder,
    request: &CapiPlanRequest,
    look: &Look,
    width: usize,
) -> Vec<Line<'static>> {
    let plan = holder.plan.upgrade();
    let from = plan.map_or_else(|| "?".to_string(), |plan| printable(&plan.from));
    let patch = plan.and_then(|plan| {
        let p = plan.phases.get(holder.plan.phase)?;
        let patch = printable(&p.patch_text(&plan.version));
        Some(format!("{} gets: {patch}", printable(&p.label())))
    });
    let title = printable(&capitalised(&holder.plan.title(&holder.cluster)));
    let what = format!(
        "{} {from} -> {}: each object patched, its Machines replaced one at a time (maxSurge 1)",
        product_name(request.product),
        printable(&request.version)
    );
    let mut lines = vec![
        fitted(look, &title, Role::Title, width),
        fitted(look, &what, Role::Text, width),
    ];
    lines.extend(patch.map(|patch| fitted(look, &patch, Role::Muted, width)));
    lines
}

/// An upgrade's summary, its phases, its guards and the last line, from top to bottom.
fn draw_upgrade(
    holder: &ClusterPlanHolder,
    request: &CapiPlanRequest,
    area: Rect,
    buf: &mut Buffer,
    readonly: bool,
    look: &Look,
) {
    let inner_width = usize::from(area.width.saturating_sub(2));
    let top_lines = upgrade_summary(holder, request, look, inner_width);
    let phases = holder.plan.upgrade().map_or(1, |plan| plan.phases.len());
    let guards = holder.guards.shown.len();
    let [top, steps_area, guards_area, bottom] =
        guards_keep_half(area, top_lines.len(), phases, guards);
    Paragraph::new(top_lines)
        .block(Block::new().padding(Padding::horizontal(1)))
        .render(top, buf);
    let active = !holder.on_guards;
    let table = match (&holder.plan.read, holder.plan.upgrade()) {
        (_, Some(plan)) => Ok(StepTable {
            columns: PHASE_COLUMNS,
            rows: phase_rows(plan),
            total: plan.phases.len(),
            selected: Some(holder.plan.phase.to_string()),
            active,
            empty: "No phase.",
        }),
        (Some(Err(e)), _) => Err(e.as_str()),
        _ => Err("reading the plan from the management cluster..."),
    };
    let title = " Phases: the control plane first, then each MachineDeployment ".to_string();
    render_step_pane(look, title, active, table, steps_area, buf);
    let checks = ChecksPane::of(holder, NO_GUARDS_YET);
    checks.render(look, readonly, guards_area, bottom, buf);
}
