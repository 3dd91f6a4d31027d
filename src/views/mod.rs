//! Views: functions of state that draw a frame and change nothing. `render`
//! lays out header, main pane, input line and footer, then any overlay;
//! below 80x24 it draws the too-small screen instead.
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::Color;
use ratatui::widgets::Widget;

use crate::app::screen::{Screen, TableKind};
use crate::app::screens::Screens;
use crate::app::state::{AppState, Overlay};
pub use crate::tui::Look;

pub mod actions;
pub mod capi;
pub mod certs;
pub mod cluster;
pub mod cluster_plan;
pub mod config;
pub mod create;
mod cut;
pub mod errors;
pub mod etcd;
pub mod explain;
pub mod fleet;
pub mod footer;
pub mod form;
pub mod header;
pub mod health;
pub mod help;
pub mod logs;
pub mod message_line;
pub mod messages;
pub mod node_detail;
pub mod node_read;
pub mod plan;
mod plan_parts;
pub mod progress;
mod progress_parts;
pub mod provision;
pub mod resources;
pub mod table;
pub mod too_small;
pub mod upgrade_plan;
pub mod versions;
pub mod wizard;

/// Every screen module of the console, for `AppState::with_screens`.
pub fn screens() -> Screens {
    Screens::new(vec![
        // First: its section in `?` follows the shell's own, as it did when it was one.
        Box::new(progress::ProgressScreen::default()),
        Box::new(actions::ActionsScreen::default()),
        Box::new(capi::CapiScreen::default()),
        Box::new(certs::CertsScreen::default()),
        Box::new(cluster_plan::ClusterPlanScreen::default()),
        Box::new(config::ConfigScreen::default()),
        Box::new(config::PatchWizard::default()),
        Box::new(create::CreateScreen::default()),
        Box::new(health::Checklist::default()),
        Box::new(upgrade_plan::KubePlanModule::default()),
        Box::new(logs::LogsScreen::default()),
        Box::new(provision::ProvisionScreen::default()),
        Box::new(resources::ResourcesScreen::default()),
        Box::new(upgrade_plan::TalosPlanModule::default()),
    ])
}

/// The smallest terminal the console lays out for (the keymap knows it too).
pub use crate::app::state::{MIN_HEIGHT, MIN_WIDTH};
pub use cut::{fit_apart, shared_prefixes};

/// Draws the whole console for `state`.
pub fn draw(frame: &mut Frame, state: &AppState, look: &Look) {
    let area = frame.area();
    if let Some(cursor) = render(area, frame.buffer_mut(), state, look) {
        frame.set_cursor_position(cursor);
    }
}

/// Renders the whole console into `buf`; returns where the text cursor goes
/// (none: hidden). The loop renders off screen and writes to the terminal
/// only when this differs from the last frame.
pub fn render(area: Rect, buf: &mut Buffer, state: &AppState, look: &Look) -> Option<Position> {
    let cursor = if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small::render(state.quit_question.as_deref(), look, area, buf);
        None
    } else {
        render_console(buf, state, look, area)
    };
    if !look.colors {
        strip_colors(buf);
    }
    cursor
}

fn render_console(buf: &mut Buffer, state: &AppState, look: &Look, area: Rect) -> Option<Position> {
    let [top, body, input, hints] = area.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(message_line::input_rows(state, look, area.width)),
        Constraint::Length(1),
    ]));
    header::render(state, look, top, buf);
    // A module that pops up over a screen: that screen first, the module over it.
    let under = match state.screen {
        Screen::Module(name) => state.screens.get(name).and_then(|m| m.drawn_over()),
        _ => None,
    };
    for screen in under.into_iter().chain([state.screen]) {
        match screen {
            Screen::Clusters => fleet::render(state, look, TableKind::Clusters, body, buf),
            Screen::Fleet => fleet::render(state, look, TableKind::Fleet, body, buf),
            Screen::Cluster(pane) => cluster::render(state, look, pane, body, buf),
            Screen::NodeDetail => node_detail::render(state, look, body, buf),
            Screen::Module(name) => {
                if let Some(module) = state.screens.get(name) {
                    module.draw(body, buf, &crate::app::shell::shared(state), look);
                }
            }
        }
    }
    let mut cursor = footer::render_input(state, look, input, buf);
    footer::render_hints(state, look, hints, buf);
    match &state.overlay {
        None => {}
        Some(Overlay::Help { scroll }) => help::render(state, look, *scroll, body, buf),
        Some(Overlay::Messages { scroll }) => {
            messages::render(&state.messages, look, *scroll, body, buf)
        }
        Some(Overlay::Errors { scroll }) => errors::render(&state.errors, look, *scroll, body, buf),
        Some(Overlay::Explain {
            title,
            text,
            scroll,
        }) => explain::render(title, text, *scroll, look, body, buf),
        Some(Overlay::Confirm(confirm)) => {
            let view = plan::confirm::ConfirmPopup::new(confirm, look);
            (&view).render(body, buf);
            if let Some(pos) = view.cursor(body) {
                cursor = Some(pos);
            }
        }
    }
    cursor
}

/// NO_COLOR: no colour leaves the frame, whatever a widget set; bold and
/// reverse stay.
pub fn strip_colors(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
        cell.underline_color = Color::Reset;
    }
}

/// A rectangle of `width` x `height` centred in `area`, clipped to it.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// `text` cut to `width` columns, ending in the ellipsis glyph when cut.
pub fn fit(text: &str, width: usize, ellipsis: &str) -> String {
    use unicode_width::UnicodeWidthStr;
    if text.width() <= width {
        return text.to_string();
    }
    let room = width.saturating_sub(ellipsis.width());
    let mut out = cut::take_width(text, room).to_string();
    if width >= ellipsis.width() {
        out.push_str(ellipsis);
    }
    out
}
