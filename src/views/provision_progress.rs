//! The provision progress pane of the cluster in use: what runs and how far
//! (VMs joined of those asked for), each VM's id, name, state by name (the
//! LCM_STATE of an ACTIVE VM, as Sunstone shows it; both when wide), IP, stage and elapsed time, the selected VM's reason (with the
//! terminate key when it failed), and the tail of the notes.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget, Wrap};

use super::Look;
use super::progress_parts::{
    StepTable, elapsed_between, gauge, head_line, render_log, render_step_pane,
};
use crate::app::provision::{ProvisionView, VmRow};
use crate::app::state::AppState;
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col, wide};
use crate::provision::ProvisionStage;
use crate::tui::Role;

static VM_COLUMNS: &[Column] = &[
    col("ID", Width::Content),
    col("NAME", Width::Fill(1)),
    col("STATE", Width::Content),
    wide("STATE/LCM_STATE", Width::Content),
    col("IP", Width::Content),
    col("STAGE", Width::Content),
    wide("ROLE", Width::Content),
    col("ELAPSED", Width::Content),
];

pub struct ProvisionPane<'a> {
    state: &'a AppState,
    look: &'a Look,
}

fn stage_tone(stage: ProvisionStage) -> Tone {
    match stage {
        ProvisionStage::Joined => Tone::Ok,
        ProvisionStage::Failed => Tone::Error,
        ProvisionStage::Terminated => Tone::Muted,
        ProvisionStage::Creating
        | ProvisionStage::Booting
        | ProvisionStage::Running
        | ProvisionStage::Apid => Tone::Warn,
    }
}

impl<'a> ProvisionPane<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> ProvisionPane<'a> {
        ProvisionPane { state, look }
    }

    /// Since this console first saw the VM, until it reached a final stage
    /// (or the run ended).
    fn vm_elapsed(&self, view: &ProvisionView, vm: &VmRow) -> Option<String> {
        let clock = self.state.wall_clock.filter(|_| view.running);
        elapsed_between(vm.seen_unix, vm.final_unix, clock)
    }

    fn rows(&self, view: &ProvisionView) -> Vec<TableRow> {
        view.vms
            .iter()
            .map(|vm| {
                let p = &vm.progress;
                let id = p.id.map(|i| i.to_string());
                let failing = p.lcm_state.contains("FAILURE");
                let tone = if failing { Tone::Error } else { Tone::Plain };
                // As Sunstone shows it: ACTIVE VMs by their LCM state.
                let shown = if p.state == "ACTIVE" || p.state.is_empty() {
                    p.lcm_state.as_str()
                } else {
                    p.state.as_str()
                };
                let both = format!("{}/{}", p.state, p.lcm_state);
                TableRow {
                    key: p.name.clone(),
                    cells: vec![
                        TableCell::maybe(id.as_deref()),
                        TableCell::plain(&p.name),
                        TableCell::new(shown, tone),
                        TableCell::new(both, tone),
                        TableCell::maybe(p.ip.as_deref()),
                        TableCell::new(p.stage.as_str(), stage_tone(p.stage)),
                        TableCell::plain(&vm.role),
                        TableCell::maybe(self.vm_elapsed(view, vm).as_deref()),
                    ],
                }
            })
            .collect()
    }

    fn status(view: &ProvisionView) -> (String, Role) {
        match (view.running, view.succeeded) {
            (true, _) => ("running".into(), Role::Accent),
            (false, Some(true)) => ("done".into(), Role::Ok),
            (false, Some(false)) => ("ended: NOT ALL JOINED".into(), Role::Error),
            (false, None) => ("not running".into(), Role::Muted),
        }
    }

    /// `[=====.....] 1 of 2 joined`, ASCII in every mode.
    fn gauge(&self, view: &ProvisionView, width: usize) -> Line<'static> {
        let total = view.total();
        let done = view.joined();
        gauge(
            self.look,
            done,
            total,
            format!(" {done} of {total} joined"),
            width,
        )
    }

    /// The selected VM's reason; a failed one offers terminate.
    fn detail(&self, view: &ProvisionView) -> Option<Line<'static>> {
        let s = &self.look.styles;
        let vm = view.selected_vm()?;
        let p = &vm.progress;
        let failed = p.stage == ProvisionStage::Failed;
        let reason = p.reason.clone().or_else(|| failed.then(String::new))?;
        let role = s.get(if failed { Role::Error } else { Role::Muted });
        let mut spans = vec![Span::styled(p.name.clone(), role)];
        // The key first, so a long reason never pushes it out of sight.
        if failed && p.id.is_some() {
            spans.push(Span::styled(
                " (x terminates it)".to_string(),
                s.get(Role::Key),
            ));
        }
        spans.push(Span::styled(format!(": {reason}"), role));
        Some(Line::from(spans))
    }
}

impl Widget for &ProvisionPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let cluster = self.state.current.clone().unwrap_or_default();
        let Some(view) = self.state.provision.views.get(&cluster) else {
            Paragraph::new(format!(
                "No provision of {cluster} from this console. p opens the wizard."
            ))
            .style(s.get(Role::Muted))
            .render(area, buf);
            return;
        };
        let width = usize::from(area.width.saturating_sub(2));
        let (status, role) = ProvisionPane::status(view);
        let what = format!("Provision of {cluster}, {}: ", view.what);
        let head = head_line(self.look, &what, status, role, width);
        let mut top = vec![head, self.gauge(view, width)];
        let mut top_rows = 2;
        if let Some(outcome) = &view.outcome {
            let glyph = match view.succeeded {
                Some(true) => self.look.glyphs.ok,
                _ => self.look.glyphs.error,
            };
            let line = Line::from(Span::styled(
                format!("{glyph} {outcome}"),
                s.get(if view.succeeded == Some(true) {
                    Role::Ok
                } else {
                    Role::Error
                }),
            ));
            top_rows += line.width().div_ceil(width.max(1)).clamp(1, 2);
            top.push(line);
        }
        let detail = self.detail(view);
        let detail_rows = detail
            .as_ref()
            .map_or(0, |l| l.width().div_ceil(width.max(1)).clamp(1, 3));
        let rows = view.vms.len().max(1) as u16;
        let [top_area, vms_area, detail_area, notes_area] = area.layout(&Layout::vertical([
            Constraint::Length(top_rows as u16),
            Constraint::Length(rows + 3),
            Constraint::Length(detail_rows as u16),
            Constraint::Min(3),
        ]));
        let pad = Block::new().padding(Padding::horizontal(1));
        Paragraph::new(top)
            .block(pad.clone())
            .wrap(Wrap { trim: true })
            .render(top_area, buf);

        let table = StepTable {
            columns: VM_COLUMNS,
            rows: self.rows(view),
            total: view.vms.len(),
            selected: view.selected.clone(),
            active: !view.notes_focus,
            empty: "No VM reported yet.",
        };
        let vms_active = !view.notes_focus;
        render_step_pane(
            self.look,
            " VMs ".into(),
            vms_active,
            Ok(table),
            vms_area,
            buf,
        );

        if let Some(line) = detail {
            Paragraph::new(line)
                .block(pad)
                .wrap(Wrap { trim: true })
                .render(detail_area, buf);
        }

        render_log(
            self.look,
            " Notes ",
            &view.notes,
            (&view.notes_scroll, view.notes_focus),
            notes_area,
            buf,
        );
    }
}
