//! Entering and leaving the console's terminal mode: raw mode, alternate
//! screen, bracketed paste, mouse off, hidden cursor. Restoring is idempotent
//! and runs on normal exit, on error, on panic (hook) and on SIGHUP/SIGTERM.
use std::io::{self, Stdout, Write, stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::cursor::{Hide, Show};
use crossterm::event::{DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use super::ColorDepth;
use super::palette::PaletteWriter;

pub type ConsoleTerminal = Terminal<CrosstermBackend<PaletteWriter<Stdout>>>;

/// Set while the terminal is in console mode, so a second restore is a no-op.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static PANIC_HOOK: Once = Once::new();

/// Puts the terminal into console mode; frames reach it in the colours of
/// `depth`. On failure whatever was switched on is switched off again before
/// the error is returned.
pub fn enter(depth: ColorDepth) -> io::Result<ConsoleTerminal> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = stdout();
    let entered = execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        DisableMouseCapture,
        Hide
    )
    .and_then(|()| Terminal::new(CrosstermBackend::new(PaletteWriter::new(stdout(), depth))));
    if entered.is_err() {
        let _ = restore();
    }
    entered
}

/// Leaves console mode: bracketed paste off, main screen back, cursor shown,
/// raw mode off. Safe to call more than once and from the panic hook.
pub fn restore() -> io::Result<()> {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return Ok(());
    }
    let mut out = stdout();
    let screen = execute!(out, DisableBracketedPaste, LeaveAlternateScreen, Show);
    let flushed = out.flush();
    let raw = disable_raw_mode();
    screen.and(flushed).and(raw)
}

/// Restores the terminal before the default panic message is printed, so the
/// message lands on the main screen and the shell is usable afterwards. A
/// panic while the console runs ends the process (exit 101) whatever thread
/// it was on: tokio would otherwise catch a worker's panic and leave the
/// console running on a terminal that is no longer in console mode.
pub fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let console_was_up = ACTIVE.load(Ordering::SeqCst);
            let _ = restore();
            previous(info);
            if console_was_up {
                std::process::exit(101);
            }
        }));
    });
}
