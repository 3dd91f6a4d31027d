//! The `?` help laid out for the screen: the keys of where you are first,
//! then every other key context and the commands, each entry's text wrapped
//! under itself (never cut), in two columns when the screen is wide. Built
//! from the keymap and the command list, so it says what keys really do; the
//! view styles the rows, update scrolls by their count. Pure.
use unicode_width::UnicodeWidthStr;

use super::command::COMMANDS;
use super::keymap::{KeyContext, shown};
use super::state::AppState;

/// One line of one column of the help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelpCell {
    /// A section's title; the first section is where you are.
    Title {
        text: String,
        here: bool,
    },
    /// Keys (empty on a wrapped line) and what they do.
    Entry {
        keys: String,
        text: String,
    },
    Blank,
}

/// The help at one size: its columns, the key column's width, and how wide
/// each column is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpLayout {
    pub columns: Vec<Vec<HelpCell>>,
    pub keys_width: usize,
    pub column_width: usize,
}

impl HelpLayout {
    /// Lines the columns take side by side.
    pub fn rows(&self) -> usize {
        self.columns.iter().map(Vec::len).max().unwrap_or(0)
    }
}

/// From this inner width the help shows two columns.
const TWO_COLUMNS: usize = 140;
/// Cells between the two columns.
pub const COLUMN_GAP: usize = 3;

/// The help popup on a terminal of `size`: the body (all but the header,
/// input and footer lines) less a two-cell margin each side.
pub fn help_box(size: (u16, u16)) -> (u16, u16) {
    (size.0.saturating_sub(4), size.1.saturating_sub(3))
}

/// The sections: `here` first, then the other key contexts and screen modules, each a
/// module's own keys and the shell's that reach past them; then the commands.
fn sections(here: KeyContext, state: &AppState) -> Vec<(String, Vec<(String, String)>)> {
    let modules = state.screens.iter().map(|m| KeyContext::Screen(m.name()));
    let others = KeyContext::all().chain(modules).filter(|c| *c != here);
    let mut out: Vec<(String, Vec<(String, String)>)> = std::iter::once(here)
        .chain(others)
        .map(|ctx| {
            let module = ctx.module(&state.screens);
            let own = module.into_iter().flat_map(|m| m.keys());
            let entries = (own.chain(shown(ctx, state)))
                .map(|line| (line.keys, line.help.to_string()))
                .collect();
            let title = module.map_or(ctx.title(), |m| m.title());
            (title.to_string(), entries)
        })
        .collect();
    let commands = COMMANDS
        .iter()
        .map(|c| {
            let usage = format!(":{} {}", c.name, c.arg);
            (usage.trim_end().to_string(), c.help.to_string())
        })
        .collect();
    out.push(("Commands".to_string(), commands));
    out
}

/// The help for where you are (`here`) in `width` x any cells.
pub fn layout(here: KeyContext, state: &AppState, width: usize) -> HelpLayout {
    let sections = sections(here, state);
    let keys_width = sections
        .iter()
        .flat_map(|(_, entries)| entries.iter().map(|(k, _)| k.width()))
        .max()
        .unwrap_or(0)
        .min(width / 3);
    let two = width >= TWO_COLUMNS;
    let column_width = if two { (width - COLUMN_GAP) / 2 } else { width };
    let text_width = column_width.saturating_sub(keys_width + 1).max(10);
    let mut blocks: Vec<Vec<HelpCell>> = Vec::new();
    for (i, (title, entries)) in sections.into_iter().enumerate() {
        let mut block = vec![HelpCell::Title {
            text: if i == 0 {
                format!("Here: {title}")
            } else {
                title
            },
            here: i == 0,
        }];
        for (keys, text) in entries {
            for (n, piece) in wrap_words(&text, text_width).into_iter().enumerate() {
                let keys = if n == 0 { keys.clone() } else { String::new() };
                block.push(HelpCell::Entry { keys, text: piece });
            }
        }
        block.push(HelpCell::Blank);
        blocks.push(block);
    }
    let columns = if two {
        split_in_two(blocks)
    } else {
        vec![blocks.concat()]
    };
    HelpLayout {
        columns,
        keys_width,
        column_width,
    }
}

/// Sections in order into two columns of about equal length; where you are
/// stays first in the left one.
fn split_in_two(blocks: Vec<Vec<HelpCell>>) -> Vec<Vec<HelpCell>> {
    let total: usize = blocks.iter().map(Vec::len).sum();
    let mut left = Vec::new();
    let mut right = Vec::new();
    for block in blocks {
        if right.is_empty() && left.len() + block.len() / 2 <= total / 2 {
            left.extend(block);
        } else {
            right.extend(block);
        }
    }
    vec![left, right]
}

/// `text` in lines of at most `width` cells, broken between words (a word
/// longer than the width is broken inside).
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        while word.width() > width {
            let cut: String = word
                .chars()
                .scan(0, |used, c| {
                    *used += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                    (*used <= width).then_some(c)
                })
                .collect();
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            word = word[cut.len()..].to_string();
            lines.push(cut);
        }
        let needed = if line.is_empty() {
            word.width()
        } else {
            line.width() + 1 + word.width()
        };
        if needed > width && !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The furthest the help scrolls on a terminal of `size`: its last line at
/// the popup's bottom.
pub fn max_scroll(here: KeyContext, state: &AppState) -> usize {
    // Inside the popup: border and one cell of padding each side.
    let (width, height) = help_box(state.size);
    let rows = layout(here, state, usize::from(width.saturating_sub(4))).rows();
    rows.saturating_sub(usize::from(height.saturating_sub(2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap_and_long_words_break() {
        assert_eq!(
            wrap_words("pause or resume live data", 10),
            vec!["pause or", "resume", "live data"]
        );
        assert_eq!(wrap_words("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap_words("", 4), vec![""]);
    }

    #[test]
    fn where_you_are_comes_first_and_nothing_is_cut() {
        let discovery = crate::discovery::Discovery::default();
        let mut state = AppState::new(discovery, false).with_screens(crate::views::screens());
        let help = layout(KeyContext::Screen("progress"), &state, 72);
        assert_eq!(help.columns.len(), 1);
        assert_eq!(
            help.columns[0][0],
            HelpCell::Title {
                text: "Here: Progress of the operation run here".into(),
                here: true
            }
        );
        for cell in &help.columns[0] {
            if let HelpCell::Entry { keys, text } = cell {
                assert!(keys.width() <= help.keys_width, "{keys}");
                assert!(text.width() + help.keys_width < 72, "{text}");
            }
        }
        state.screens = Default::default();
        let wide = layout(KeyContext::Screen("fleet"), &state, 190);
        assert_eq!(wide.columns.len(), 2);
        assert!(wide.rows() < help.rows());
    }
}
