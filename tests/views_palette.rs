//! With TERM=xterm or screen (16 colours, as `taloscope info` reports) the
//! console writes the 16-colour codes only (issue 16, item 9): every built-in
//! theme, rendered for 16 colours, leaves no colour beyond the 16 in the
//! frame and no 256-colour escape (`38;5;N`) in what reaches the terminal.
mod view_support;

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::{Terminal, TerminalOptions, Viewport};
use taloscope::app::binding::Move;
use taloscope::app::state::AppState;
use taloscope::app::{Action, update};
use taloscope::tui::palette::PaletteWriter;
use taloscope::tui::{Caps, ColorDepth, Theme};
use taloscope::views::{self, Look};
use view_support::scenarios;

const THEMES: [&str; 4] = ["default", "high-contrast", "light", "mono"];

fn caps_of(term: &str) -> Caps {
    let env = |name: &str| match name {
        "TERM" => Some(term.to_string()),
        "LANG" => Some("C.UTF-8".to_string()),
        _ => None,
    };
    Caps::detect(&env, taloscope::tui::ColorMode::Auto, false)
}

/// The bytes written, kept where the test can read them after the draw.
#[derive(Clone, Default)]
struct Written(Rc<RefCell<Vec<u8>>>);

impl Write for Written {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What the console writes to the terminal for one frame of `state`.
fn terminal_bytes(state: &AppState, look: &Look) -> Vec<u8> {
    let written = Written::default();
    let writer = PaletteWriter::new(written.clone(), look.depth);
    let viewport = Viewport::Fixed(Rect::new(0, 0, 80, 24));
    let mut terminal =
        Terminal::with_options(CrosstermBackend::new(writer), TerminalOptions { viewport })
            .expect("terminal");
    let frame = terminal
        .draw(|f| views::draw(f, state, look))
        .expect("draw");
    for cell in frame.buffer.content() {
        for color in [cell.fg, cell.bg] {
            assert!(
                !matches!(color, Color::Indexed(16..) | Color::Rgb(..)),
                "{color:?} in a 16-colour frame"
            );
        }
    }
    drop(terminal);
    written.0.borrow().clone()
}

#[test]
fn xterm_and_screen_get_the_16_colour_codes_only() {
    let mut state = scenarios::state(&["healthy", "cp2-down"]);
    update(&mut state, Action::Move(Move::Down));
    for term in ["xterm", "screen"] {
        let caps = caps_of(term);
        assert_eq!(caps.color, ColorDepth::Ansi16, "{term}");
        for name in THEMES {
            let (theme, error) = Theme::load(Some(name), std::path::Path::new("/nonexistent"));
            assert!(error.is_none(), "{name}: {error:?}");
            let bytes = terminal_bytes(&state, &Look::new(&theme, &caps));
            let text = String::from_utf8_lossy(&bytes);
            for escape in ["38;5;", "48;5;", "58;5;", "38;2;", "48;2;"] {
                assert!(
                    !text.contains(escape),
                    "{term} {name}: {escape} in {text:?}"
                );
            }
            assert!(text.contains("\x1b["), "{term} {name}: no escapes at all");
        }
    }
    // A 256-colour terminal keeps crossterm's escapes: the writer is only
    // in the way where it must be.
    let look = Look::new(&Theme::default_theme(), &caps_of("xterm-256color"));
    let text = String::from_utf8_lossy(&terminal_bytes(&state, &look)).to_string();
    assert!(text.contains("38;5;"), "{text:?}");
}
