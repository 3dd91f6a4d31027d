//! Shared helpers for view tests: hand-made clusters on loopback addresses
//! and a renderer that writes the frame's text and its styles as a snapshot.
#![allow(dead_code)]
pub mod capi_fixture;
pub mod scenarios;

use std::path::PathBuf;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier, Style};
use taloscope::app::state::AppState;
use taloscope::discovery::{
    Cluster, Discovery, DiscoveryError, KubeContext, PairedBy, TalosContext,
};
use taloscope::tui::{Caps, ColorDepth, Theme};
use taloscope::views::{self, Look};

fn talos(name: &str, endpoints: &[&str]) -> TalosContext {
    TalosContext {
        name: name.to_string(),
        file: PathBuf::from("/home/op/.talos/config"),
        endpoints: endpoints.iter().map(|s| s.to_string()).collect(),
        nodes: endpoints.iter().map(|s| s.to_string()).collect(),
        ca_pem: String::new(),
        crt_pem: String::new(),
        key_pem: String::new(),
    }
}

fn kube(name: &str, cluster: &str, server: &str) -> KubeContext {
    KubeContext {
        name: name.to_string(),
        file: PathBuf::from("/home/op/.kube/config"),
        cluster: cluster.to_string(),
        user: format!("admin@{cluster}"),
        server: Some(server.to_string()),
    }
}

/// Five clusters, one of each kind of pairing, and two discovery errors.
pub fn discovery() -> Discovery {
    let clusters = vec![
        Cluster {
            name: "prod-eu".into(),
            talos: Some(talos(
                "prod-eu",
                &["127.0.0.11", "127.0.0.12", "127.0.0.13"],
            )),
            kube: Some(kube("admin@prod-eu", "prod-eu", "https://127.0.0.11:6443")),
            paired_by: Some(PairedBy::Name),
            ..Default::default()
        },
        Cluster {
            name: "prod-us-east-with-a-rather-long-name".into(),
            talos: Some(talos(
                "prod-us-east-with-a-rather-long-name",
                &["127.0.1.1"],
            )),
            kube: Some(kube("us-east", "us-east", "https://127.0.1.1:6443")),
            paired_by: Some(PairedBy::Config),
            ..Default::default()
        },
        Cluster {
            name: "lab".into(),
            talos: Some(talos("lab", &["127.0.2.1", "127.0.2.2"])),
            kube: Some(kube("lab-admin", "homelab", "https://127.0.2.1:6443")),
            paired_by: Some(PairedBy::Address),
            ..Default::default()
        },
        Cluster {
            name: "bare".into(),
            talos: Some(talos("bare", &["127.0.3.1"])),
            kube: None,
            paired_by: None,
            ..Default::default()
        },
        Cluster {
            name: "kind-dev".into(),
            talos: None,
            kube: Some(kube("kind-dev", "kind-dev", "https://127.0.0.1:41234")),
            paired_by: None,
            ..Default::default()
        },
    ];
    let errors = vec![
        DiscoveryError {
            file: PathBuf::from("/home/op/.talos/broken"),
            context: None,
            message: "YAML syntax error at line 3: did not find expected key".into(),
        },
        DiscoveryError {
            file: PathBuf::from("/home/op/.kube/config"),
            context: Some("ghost".into()),
            message: "current-context \"ghost\" does not exist".into(),
        },
    ];
    Discovery {
        clusters,
        errors,
        ..Discovery::default()
    }
}

/// The discovery list (`:contexts`) on the hand-made clusters.
pub fn state(readonly: bool) -> AppState {
    let mut state = AppState::new(discovery(), readonly).with_screens(taloscope::views::screens());
    state.screen = taloscope::app::screen::Screen::Clusters;
    state
}

/// The three looks the snapshots cover.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    Default,
    NoColor,
    Ascii,
}

/// A key pressed where `state` is: its action through the keymap, folded in.
pub fn press(state: &mut AppState, code: crossterm::event::KeyCode) -> Vec<taloscope::app::Effect> {
    let event = crossterm::event::KeyEvent::from(code);
    match taloscope::app::keymap::action_for(state, &event) {
        Some(action) => taloscope::app::update(state, action),
        None => Vec::new(),
    }
}

pub fn look(mode: Mode) -> Look {
    let caps = match mode {
        Mode::Default => Caps {
            color: ColorDepth::Ansi16,
            no_color_env: false,
            utf8: true,
        },
        Mode::NoColor => Caps {
            color: ColorDepth::None,
            no_color_env: true,
            utf8: true,
        },
        Mode::Ascii => Caps {
            color: ColorDepth::Ansi16,
            no_color_env: false,
            utf8: false,
        },
    };
    Look::new(&Theme::default_theme(), &caps)
}

pub fn render_buffer(state: &AppState, look: &Look, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal
        .draw(|frame| views::draw(frame, state, look))
        .expect("draw");
    terminal.backend().buffer().clone()
}

/// The frame as text, then one line per run of non-default style:
/// `row col..col: fg bg +MODIFIERS`.
pub fn snapshot(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            line.push_str(sym);
            skip = unicode_width::UnicodeWidthStr::width(sym).saturating_sub(1);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str("--- styles ---\n");
    for y in 0..area.height {
        let mut x = 0;
        while x < area.width {
            let style = cell_style(buf, x, y);
            let start = x;
            while x < area.width && cell_style(buf, x, y) == style {
                x += 1;
            }
            if style != Style::default() {
                out.push_str(&format!("{y:>2} {start}..{}: {}\n", x - 1, describe(style)));
            }
        }
    }
    out
}

fn cell_style(buf: &Buffer, x: u16, y: u16) -> Style {
    let c = &buf[(x, y)];
    let mut s = Style::default().add_modifier(c.modifier);
    if c.fg != Color::Reset {
        s = s.fg(c.fg);
    }
    if c.bg != Color::Reset {
        s = s.bg(c.bg);
    }
    s
}

fn describe(s: Style) -> String {
    let mut parts = Vec::new();
    if let Some(fg) = s.fg {
        parts.push(format!("fg={fg}"));
    }
    if let Some(bg) = s.bg {
        parts.push(format!("bg={bg}"));
    }
    if s.add_modifier != Modifier::empty() {
        parts.push(format!("+{:?}", s.add_modifier));
    }
    parts.join(" ")
}

/// Every cell's colours are the terminal's own.
pub fn assert_no_colors(buf: &Buffer) {
    for cell in buf.content() {
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset), "{cell:?}");
    }
}

pub fn assert_ascii(buf: &Buffer) {
    for cell in buf.content() {
        assert!(cell.symbol().is_ascii(), "non-ASCII {:?}", cell.symbol());
    }
}

/// The sizes and modes every pane snapshot is taken at.
pub const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];
pub const MODES: [(Mode, &str); 3] = [
    (Mode::Default, "default"),
    (Mode::NoColor, "no-color"),
    (Mode::Ascii, "ascii"),
];

/// Every size and mode of what `state` shows, each checked for its mode and
/// joined; styles only at 80x24.
pub fn all_renders(state: &AppState) -> String {
    renders(state, |w, _| w <= 80)
}

/// Every size and mode of what `state` shows, each checked for its mode and
/// joined; styles for the 80x24 default render only.
pub fn all_renders_default_styles(state: &AppState) -> String {
    renders(state, |w, mode| w == 80 && matches!(mode, Mode::Default))
}

fn renders(state: &AppState, keep_styles: impl Fn(u16, Mode) -> bool) -> String {
    let mut out = String::new();
    for (w, h) in SIZES {
        for (mode, name) in MODES {
            let buf = render_buffer(state, &look(mode), w, h);
            match mode {
                Mode::NoColor => assert_no_colors(&buf),
                Mode::Ascii => assert_ascii(&buf),
                Mode::Default => {}
            }
            let text = snapshot(&buf);
            let text = if keep_styles(w, mode) {
                text
            } else {
                without_styles(&text)
            };
            out.push_str(&format!("===== {w}x{h} {name} =====\n{text}"));
        }
    }
    out
}

/// A snapshot's screen text, its styles section cut off.
fn without_styles(text: &str) -> String {
    text.split("--- styles ---")
        .next()
        .unwrap_or("")
        .to_string()
}

/// The screen text of what `state` shows at `w`x`h` without colours, no styles.
pub fn screen_text_at(state: &AppState, w: u16, h: u16) -> String {
    without_styles(&text_at(state, w, h))
}

/// What `state` shows at `w`x`h` without colours.
pub fn text_at(state: &AppState, w: u16, h: u16) -> String {
    snapshot(&render_buffer(state, &look(Mode::NoColor), w, h))
}
