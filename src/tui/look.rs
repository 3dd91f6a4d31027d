//! How things look on one terminal: the theme's styles resolved for its capabilities, its
//! glyph set, and whether colour may reach the frame; every view and screen draws with it.
use super::{Caps, ColorDepth, Glyphs, Styles, Theme};

/// How things look on this terminal: styles resolved for its capabilities,
/// its glyph set, and whether colour may reach the frame at all.
#[derive(Debug, Clone)]
pub struct Look {
    pub styles: Styles,
    pub glyphs: Glyphs,
    pub colors: bool,
    /// The colours the terminal shows (the output is written for them).
    pub depth: ColorDepth,
}

impl Look {
    pub fn new(theme: &Theme, caps: &Caps) -> Look {
        Look {
            styles: theme.resolve(caps),
            glyphs: Glyphs::for_utf8(caps.utf8),
            colors: caps.colors(),
            depth: caps.color,
        }
    }
}
