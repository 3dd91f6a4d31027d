//! The CAPI-way upgrade plan pane: through which management cluster, from what to what; each
//! phase (the TalosControlPlane, then each MachineDeployment) with its patch and the Machines it
//! replaces in the providers' order; the guards worst first; whether Start is offered.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Padding, Paragraph, Widget};

use super::{CapiUpgradeScreen, CapiWay};
use crate::app::screens::Shared;
use crate::app::tables::{Column, TableCell, TableRow, Width, col};
use crate::printable::line as printable;
use crate::tui::Role;
use crate::upgrade::capi::{CapiUpgradePlan, product_name};
use crate::views::Look;
use crate::views::plan_parts::{ChecksPane, NO_GUARDS_YET, fitted, guards_keep_half};
use crate::views::progress_parts::{StepTable, render_step_pane};

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
                    TableCell::new("none (on the target)", crate::app::tables::Tone::Muted)
                } else {
                    TableCell::plain(printable(&p.replace_text()))
                },
            ],
        })
        .collect()
}

fn summary(way: &CapiWay, look: &Look, width: usize) -> Vec<Line<'static>> {
    let request = &way.request;
    let product = product_name(request.product);
    let from = match way.plan() {
        Some(Ok(plan)) => printable(&plan.from),
        _ => "?".to_string(),
    };
    // The selected phase's patch: too long for a column at 80 wide.
    let patch = match way.plan() {
        Some(Ok(plan)) => plan.phases.get(way.phase).map(|p| {
            format!(
                "{} gets: {}",
                printable(&p.label()),
                printable(&p.patch_text(&plan.version))
            )
        }),
        _ => None,
    };
    let title = format!(
        "Upgrade {} the Cluster API way through {}",
        printable(&request.cluster),
        printable(&request.owner.to_string())
    );
    let what = format!(
        "{product} {from} -> {}: each object patched, its Machines replaced one at a time (maxSurge 1)",
        printable(&request.version)
    );
    let mut lines = vec![
        fitted(look, &title, Role::Title, width),
        fitted(look, &what, Role::Text, width),
    ];
    if let Some(patch) = patch {
        lines.push(fitted(look, &patch, Role::Muted, width));
    }
    lines
}

/// The plan's summary, its phases, its guards and the last line, from top to bottom.
pub(super) fn draw(
    screen: &CapiUpgradeScreen,
    area: Rect,
    buf: &mut Buffer,
    shared: &Shared,
    look: &Look,
) {
    let s = &look.styles;
    let Some(holder) = screen.plan.as_ref() else {
        Paragraph::new("No CAPI-way plan open: u or U on a cluster Cluster API owns.")
            .style(s.get(Role::Muted))
            .render(area, buf);
        return;
    };
    let way = &holder.plan;
    let inner_width = usize::from(area.width.saturating_sub(2));
    let top_lines = summary(way, look, inner_width);
    let phases = match way.plan() {
        Some(Ok(plan)) => plan.phases.len(),
        _ => 1,
    };
    let guards = holder.guards.shown.len();
    let [top, steps_area, guards_area, bottom] =
        guards_keep_half(area, top_lines.len(), phases, guards);
    Paragraph::new(top_lines)
        .block(Block::new().padding(Padding::horizontal(1)))
        .render(top, buf);
    let active = !holder.on_guards;
    let table = match way.plan() {
        Some(Ok(plan)) => Ok(StepTable {
            columns: PHASE_COLUMNS,
            rows: phase_rows(plan),
            total: plan.phases.len(),
            selected: Some(way.phase.to_string()),
            active,
            empty: "No phase.",
        }),
        Some(Err(e)) => Err(e.as_str()),
        None => Err("reading the plan from the management cluster..."),
    };
    let title = " Phases: the control plane first, then each MachineDeployment ".to_string();
    render_step_pane(look, title, active, table, steps_area, buf);
    let checks = ChecksPane::of(holder, NO_GUARDS_YET);
    checks.render(look, shared.readonly, guards_area, bottom, buf);
}
