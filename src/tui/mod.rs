//! The terminal shell: entering and restoring the terminal, capability
//! detection (colour, NO_COLOR, UTF-8), glyph sets and themes, how things
//! look on one terminal (`Look`), and the
//! output rewritten to the 16-colour codes where only those show.
pub mod caps;
pub mod glyphs;
pub mod look;
pub mod palette;
pub mod terminal;
pub mod theme;

pub use caps::{Caps, ColorDepth, ColorMode};
pub use glyphs::Glyphs;
pub use look::Look;
pub use theme::{Role, Styles, Theme, ThemeError, ThemeSource};
