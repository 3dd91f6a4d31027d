//! The patch wizard drawn: its form (the field on the cursor highlighted, each choice with
//! what it does), then the plan as `taloscope config patch --plan` prints it (per node the
//! node's own word on a reboot and its mode_details, each path changed, warnings, refusals)
//! above the guards and whether Start is offered.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::patch::{Field, PatchWizard, Targets, mode_words, targets_name};
use crate::app::plan_screen::PlanHolder;
use crate::printable::line as printable;
use crate::tui::{Look, Role};
use crate::views::plan_parts::{ChecksPane, NO_GUARDS_YET, SummaryPlan};
use crate::views::table::titled;

pub(super) fn draw(
    wizard: &PatchWizard,
    area: Rect,
    buf: &mut Buffer,
    readonly: bool,
    look: &Look,
) {
    match &wizard.plan {
        Some(plan) => draw_plan(plan, area, buf, readonly, look),
        None => draw_form(wizard, area, buf, look),
    }
}

fn draw_form(wizard: &PatchWizard, area: Rect, buf: &mut Buffer, look: &Look) {
    let s = &look.styles;
    let form = &wizard.kept;
    let title = format!(
        " Patch the machine configuration of {} ",
        printable(&form.cluster)
    );
    let inner = titled(look, title, true, area, buf);
    let (mode, mode_what) = mode_words(form.mode);
    let timeout = crate::clock::short_duration(form.try_timeout.as_secs());
    let row = |field: Field| -> (&'static str, String, &'static str) {
        match field {
            Field::File => ("Patch file", form.file.clone(), "read when Enter plans it"),
            Field::Targets => ("Targets", format!("< {} >", targets_name(form.targets)), ""),
            Field::Nodes => (
                "Nodes",
                form.nodes.clone(),
                "names or addresses, comma-separated",
            ),
            Field::Mode => ("Mode", format!("< {mode} >"), mode_what),
            Field::TryTimeout => (
                "Try timeout",
                format!("< {timeout} >"),
                "then the node reverts it",
            ),
        }
    };
    let mut lines = Vec::new();
    for field in form.fields() {
        let (label, value, note) = row(field);
        let on = field == form.field;
        let value_role = if on { Role::Selection } else { Role::Input };
        let mut spans = vec![
            Span::styled(format!("{label:>12}: "), s.get(Role::Header)),
            Span::styled(printable(&value), s.get(value_role)),
        ];
        if !note.is_empty() {
            spans.push(Span::styled(format!("  ({note})"), s.get(Role::Muted)));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::default());
    let said = "Nothing changes until the plan's Start: Enter reads the file and asks every target node for a dry run.";
    lines.push(Line::from(Span::styled(said, s.get(Role::Muted))));
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(inner, buf);
}

fn draw_plan(
    holder: &PlanHolder<super::patch::PatchPlan>,
    area: Rect,
    buf: &mut Buffer,
    readonly: bool,
    look: &Look,
) {
    let s = &look.styles;
    let styled = |text: &str, role: Role| Line::from(Span::styled(printable(text), s.get(role)));
    let asked = &holder.plan.asked;
    let title = format!(
        "Patch {} of {} with {}, mode {}",
        match (asked.role, asked.nodes.is_empty()) {
            (Some(role), _) => targets_name(Targets::Role(role)).to_string(),
            (None, true) => targets_name(Targets::Every).to_string(),
            (None, false) => asked.nodes.join(", "),
        },
        holder.cluster,
        asked.file,
        mode_words(asked.mode).0
    );
    let mut summary = vec![styled(&title, Role::Title)];
    match &holder.plan.read {
        None => summary.push(styled(
            "reading the patch file and each target node's dry run...",
            Role::Muted,
        )),
        Some(Err(why)) => summary.push(styled(why, Role::Error)),
        Some(Ok(plan)) => {
            // The summary wraps trimmed: what the table indents under a node is marked.
            for line in plan.table().lines().skip(1) {
                let role = if line.contains("refused: ") {
                    Role::Error
                } else if line.contains("warning: ") {
                    Role::Warn
                } else {
                    Role::Text
                };
                let line = match line.strip_prefix("    ") {
                    Some(under) => format!("- {under}"),
                    None => line.trim().to_string(),
                };
                summary.push(styled(&line, role));
            }
        }
    }
    let waiting = holder.start_refused();
    let plan = SummaryPlan {
        summary,
        subjects: None,
        checks: ChecksPane::of(holder, waiting.as_deref().unwrap_or(NO_GUARDS_YET)),
    };
    plan.render(look, readonly, area, buf);
}
