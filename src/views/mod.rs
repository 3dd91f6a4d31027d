//! Views: functions of state that draw a frame and change nothing. `draw` lays
//! out header, main pane, input line and footer, then any overlay; below
//! 80x24 it draws the too-small screen instead.
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;

use crate::app::state::{AppState, Overlay, Screen};
use crate::tui::{Caps, Glyphs, Styles, Theme};

pub mod clusters;
pub mod confirm;
pub mod errors;
pub mod footer;
pub mod header;
pub mod help;
pub mod too_small;

/// The smallest terminal the console lays out for.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

/// How things look on this terminal: styles resolved for its capabilities,
/// its glyph set, and whether colour may reach the frame at all.
#[derive(Debug, Clone)]
pub struct Look {
    pub styles: Styles,
    pub glyphs: Glyphs,
    pub colors: bool,
}

impl Look {
    pub fn new(theme: &Theme, caps: &Caps) -> Look {
        Look {
            styles: theme.resolve(caps),
            glyphs: Glyphs::for_utf8(caps.utf8),
            colors: caps.colors(),
        }
    }
}

/// Draws the whole console for `state`.
pub fn draw(frame: &mut Frame, state: &AppState, look: &Look) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        frame.render_widget(
            &too_small::TooSmall::new(area.width, area.height, look),
            area,
        );
    } else {
        draw_console(frame, state, look, area);
    }
    if !look.colors {
        strip_colors(frame.buffer_mut());
    }
}

fn draw_console(frame: &mut Frame, state: &AppState, look: &Look, area: Rect) {
    let [top, body, input, hints] = area.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ]));
    frame.render_widget(&header::Header::new(state, look), top);
    match state.screen {
        Screen::Clusters => frame.render_widget(&clusters::ClusterList::new(state, look), body),
    }
    let bottom = footer::InputLineView::new(state, look);
    frame.render_widget(&bottom, input);
    if let Some(x) = bottom.cursor_x(input) {
        frame.set_cursor_position((x, input.y));
    }
    frame.render_widget(&footer::Footer::new(state, look), hints);
    match &state.overlay {
        None => {}
        Some(Overlay::Help { scroll }) => {
            frame.render_widget(&help::Help::new(look, *scroll), body)
        }
        Some(Overlay::Errors { scroll }) => {
            frame.render_widget(&errors::ErrorList::new(&state.errors, look, *scroll), body)
        }
        Some(Overlay::Confirm(confirm)) => {
            let view = confirm::ConfirmPopup::new(confirm, look);
            frame.render_widget(&view, body);
            if let Some(pos) = view.cursor(body) {
                frame.set_cursor_position(pos);
            }
        }
    }
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
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        out.push(c);
    }
    if width >= ellipsis.width() {
        out.push_str(ellipsis);
    }
    out
}
