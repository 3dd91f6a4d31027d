//! Glyphs and border sets for UTF-8 and ASCII terminals. Views take every
//! symbol from here, so ASCII mode never leaks a box-drawing character.
use ratatui::symbols::border;

/// Pure ASCII borders: `+`, `-`, `|` (ratatui's `PLAIN` set is box-drawing).
pub const ASCII_BORDER: border::Set<'static> = border::Set {
    top_left: "+",
    top_right: "+",
    bottom_left: "+",
    bottom_right: "+",
    vertical_left: "|",
    vertical_right: "|",
    horizontal_top: "-",
    horizontal_bottom: "-",
};

/// The symbols a view may draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Glyphs {
    pub border: border::Set<'static>,
    /// Marks the selected row.
    pub selected: &'static str,
    pub ok: &'static str,
    pub warn: &'static str,
    pub error: &'static str,
    /// Stands for an empty cell.
    pub none: &'static str,
    pub ellipsis: &'static str,
    pub separator: &'static str,
    /// After the title of the column a table is sorted by.
    pub sort_up: &'static str,
    pub sort_down: &'static str,
}

impl Glyphs {
    pub const UNICODE: Glyphs = Glyphs {
        border: border::ROUNDED,
        selected: "▶",
        ok: "✓",
        warn: "▲",
        error: "✗",
        none: "–",
        ellipsis: "…",
        separator: "│",
        sort_up: "↑",
        sort_down: "↓",
    };

    pub const ASCII: Glyphs = Glyphs {
        border: ASCII_BORDER,
        selected: ">",
        ok: "ok",
        warn: "!",
        error: "x",
        none: "-",
        ellipsis: "...",
        separator: "|",
        sort_up: "^",
        sort_down: "v",
    };

    /// The widest of the verdict marks (ok, warn, error, none), for a column of them: in ASCII
    /// "ok" is two wide where the others are one.
    pub fn mark_width(&self) -> usize {
        [self.ok, self.warn, self.error, self.none]
            .iter()
            .map(|m| m.chars().count())
            .max()
            .unwrap_or(1)
    }

    pub fn for_utf8(utf8: bool) -> Glyphs {
        if utf8 { Glyphs::UNICODE } else { Glyphs::ASCII }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_glyphs_are_ascii() {
        let g = Glyphs::ASCII;
        let b = g.border;
        let all = [
            b.top_left,
            b.top_right,
            b.bottom_left,
            b.bottom_right,
            b.vertical_left,
            b.vertical_right,
            b.horizontal_top,
            b.horizontal_bottom,
            g.selected,
            g.ok,
            g.warn,
            g.error,
            g.none,
            g.ellipsis,
            g.separator,
            g.sort_up,
            g.sort_down,
        ];
        for s in all {
            assert!(s.is_ascii(), "{s:?} is not ASCII");
        }
    }
}
