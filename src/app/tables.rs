//! The console's tables as plain data: columns, rows of cell text with a tone
//! (so state is a word first and a colour second), filtered over the visible
//! cells and sorted by the chosen column. Update uses it to move the
//! selection by row identity; views draw it.
use std::cmp::Ordering;

use super::screen::{TableKind, TableView};
use super::state::AppState;

/// What a cell means; views turn it into a style. `Unknown` cells have no
/// data yet and show the placeholder glyph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    /// What stands out without being good or bad: the cluster in use.
    Accent,
    Ok,
    Warn,
    Error,
    Muted,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCell {
    pub text: String,
    pub tone: Tone,
    /// How bad what the cell says is, for problems-first sorting (`fleet::problems`'s
    /// `Severity::rank`; 0 for nothing wrong).
    pub rank: u8,
}

impl TableCell {
    pub fn new(text: impl Into<String>, tone: Tone) -> TableCell {
        TableCell {
            text: text.into(),
            tone,
            rank: 0,
        }
    }

    /// The same cell, ranked `rank` for problems-first sorting.
    pub fn ranked(self, rank: u8) -> TableCell {
        TableCell { rank, ..self }
    }

    pub fn plain(text: impl Into<String>) -> TableCell {
        TableCell::new(text, Tone::Plain)
    }

    /// Nothing known yet.
    pub fn unknown() -> TableCell {
        TableCell::new("", Tone::Unknown)
    }

    /// Text when known, else the placeholder.
    pub fn maybe(text: Option<&str>) -> TableCell {
        match text {
            Some(t) if !t.is_empty() => TableCell::plain(t),
            _ => TableCell::unknown(),
        }
    }
}

/// One row and the identity the selection keeps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRow {
    pub key: String,
    pub cells: Vec<TableCell>,
}

/// How a column takes its width. Both start from the column's content (its
/// widest cell, its title with the sort arrow); views lay them out with
/// `views::table::column_widths`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// Always as wide as its content, never cut: versions, ids, addresses,
    /// states, guard names.
    Content,
    /// As wide as its content when there is room, else a share (by this
    /// weight) of what the `Content` columns leave, cut with an ellipsis:
    /// names, issues, reasons.
    Fill(u16),
}

/// How a column sorts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// By the cell's text, numbers as numbers.
    Text,
    /// Problems first, as on-call wants: the rows whose cells rank worst
    /// first (`fleet::problems`' severity order), then the worst tone (errors,
    /// then warnings), then by the cell's number, highest first, then by name.
    WorstFirst,
    /// By the cell's number, highest first (the busiest node first), unknown last.
    HighestFirst,
    /// Not sorted: the rows as listed (the discovery list in discovery's order, as
    /// `taloscope contexts` prints it); the title names no sort.
    Listed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub title: &'static str,
    pub width: Width,
    /// Shown on a narrow table too; other columns only when there is room
    /// (what they say is repeated elsewhere on the screen).
    pub narrow: bool,
    pub order: Order,
    /// Names: when cut, cut in the middle keeping the part that tells the rows apart
    /// (`views::fit_apart`), and the selected row's full name is shown beside the table.
    pub names: bool,
    /// Shown only while a row has something to say in it (`TableData::shown_columns`).
    pub when_filled: bool,
}

pub const fn col(title: &'static str, width: Width) -> Column {
    Column {
        title,
        width,
        narrow: true,
        order: Order::Text,
        names: false,
        when_filled: false,
    }
}

/// A column shown only when the table is wide.
pub const fn wide(title: &'static str, width: Width) -> Column {
    Column {
        narrow: false,
        ..col(title, width)
    }
}

impl Column {
    /// The same column, holding names (see `names`).
    pub const fn names(self) -> Column {
        Column {
            names: true,
            ..self
        }
    }

    /// The same column, sorting its rows by `order`.
    pub const fn sorted(self, order: Order) -> Column {
        Column { order, ..self }
    }

    /// The same column, shown only while a row has something in it.
    pub const fn when_filled(self) -> Column {
        Column {
            when_filled: true,
            ..self
        }
    }
}

/// From this width (of the rows, inside the pane's border and padding) a
/// table shows all its columns.
pub const WIDE_TABLE: u16 = 90;

/// From this terminal width the cluster view shows its three panes at once:
/// nodes across the top, etcd and versions side by side below.
pub const SIDE_BY_SIDE: u16 = 160;

/// How wide the rows of table `kind` are on a terminal `size` wide: the
/// pane minus its border and padding (4 cells); etcd and versions get half
/// the width when the cluster view shows its panes side by side.
pub fn table_width(size: (u16, u16), kind: TableKind) -> u16 {
    let halved = matches!(kind, TableKind::Etcd | TableKind::Versions) && size.0 >= SIDE_BY_SIDE;
    let pane = if halved { size.0 / 2 } else { size.0 };
    pane.saturating_sub(4)
}

/// The column after `current` that table `data` shows `width` cells wide (`s` cycles
/// through what is on screen only).
pub fn next_shown_column(data: &TableData, width: u16, current: usize) -> usize {
    let shown = data.shown_columns(width);
    shown
        .iter()
        .copied()
        .find(|i| *i > current)
        .or_else(|| shown.first().copied())
        .unwrap_or(0)
}

/// A table ready to draw: every row that passes the filter, in sort order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableData {
    pub columns: &'static [Column],
    pub rows: Vec<TableRow>,
    /// Rows before filtering.
    pub total: usize,
    /// Each column's widest cell over the rows, measured once as the data is made rather
    /// than on every frame (a pane may hold thousands of rows).
    pub widths: Vec<ContentWidth>,
}

/// How wide a column's cells are: the widest known text, and whether a cell is not known yet
/// (drawn as the placeholder glyph).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContentWidth {
    pub known: u16,
    pub any_unknown: bool,
}

impl TableData {
    /// The table of `rows` (of `total` before filtering), its columns' widths measured.
    pub fn new(columns: &'static [Column], rows: Vec<TableRow>, total: usize) -> TableData {
        let mut widths = vec![ContentWidth::default(); columns.len()];
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(&row.cells) {
                match cell.tone {
                    Tone::Unknown => width.any_unknown = true,
                    _ => width.known = width.known.max(text_width(&cell.text)),
                }
            }
        }
        TableData {
            columns,
            rows,
            total,
            widths,
        }
    }

    /// The columns the table shows `width` cells wide, by index: the narrow ones only below
    /// [`WIDE_TABLE`], less the columns shown only when filled that no row fills.
    pub fn shown_columns(&self, width: u16) -> Vec<usize> {
        let wide = width >= WIDE_TABLE;
        let filled = |i: usize| self.widths.get(i).is_some_and(|w| w.known > 0);
        (0..self.columns.len())
            .filter(|i| wide || self.columns[*i].narrow)
            .filter(|i| !self.columns[*i].when_filled || filled(*i))
            .collect()
    }

    /// The column the rows are sorted by, if they are.
    pub fn sorted_by(&self, view: &TableView) -> Option<&Column> {
        (self.columns.get(view.sort)).filter(|c| c.order != Order::Listed)
    }

    /// Where the selection is: the selected row by identity, else the first.
    pub fn selected_index(&self, view: &TableView) -> usize {
        view.selected
            .as_deref()
            .and_then(|key| self.rows.iter().position(|r| r.key == key))
            .unwrap_or(0)
    }

    pub fn selected_key(&self, view: &TableView) -> Option<&str> {
        self.rows
            .get(self.selected_index(view))
            .map(|r| r.key.as_str())
    }
}

/// The rows of `kind` as `state` shows them.
pub fn table(state: &AppState, kind: TableKind) -> TableData {
    let spec = kind.spec();
    let rows = (spec.rows)(state);
    shape(spec.columns, rows, state.tables.get(kind))
}

/// The key of the row selected in table `kind` (its first row when none is), as prepared
/// for `state`.
pub fn selected_key(state: &AppState, kind: TableKind) -> Option<String> {
    let data = super::prepared::table(state, kind);
    data.selected_key(state.tables.get(kind)).map(String::from)
}

/// Filters and sorts `rows` as `view` says.
pub fn shape(columns: &'static [Column], rows: Vec<TableRow>, view: &TableView) -> TableData {
    let total = rows.len();
    let needle = view.filter.to_lowercase();
    let mut rows: Vec<TableRow> = rows
        .into_iter()
        .filter(|r| {
            needle.is_empty()
                || r.cells
                    .iter()
                    .any(|c| c.text.to_lowercase().contains(&needle))
        })
        .collect();
    let sort = view.sort.min(columns.len().saturating_sub(1));
    let order = columns.get(sort).map_or(Order::Text, |c| c.order);
    if order == Order::Listed {
        return TableData::new(columns, rows, total);
    }
    rows.sort_by(|a, b| {
        let by_column = match (a.cells.get(sort), b.cells.get(sort)) {
            (Some(x), Some(y)) if order == Order::WorstFirst => severity(b)
                .cmp(&severity(a))
                // Unknown still last; known numbers highest first.
                .then_with(|| x.text.is_empty().cmp(&y.text.is_empty()))
                .then_with(|| highest_first(&x.text, &y.text)),
            // Cells that are not numbers last.
            (Some(x), Some(y)) if order == Order::HighestFirst => (x.text.parse::<u64>().is_err())
                .cmp(&y.text.parse::<u64>().is_err())
                .then_with(|| highest_first(&x.text, &y.text)),
            (Some(x), Some(y)) => natural_cmp(&x.text, &y.text),
            _ => Ordering::Equal,
        };
        fn name(r: &TableRow) -> &str {
            r.cells.first().map_or("", |c| c.text.as_str())
        }
        let order = by_column
            .then_with(|| natural_cmp(name(a), name(b)))
            .then_with(|| natural_cmp(&a.key, &b.key));
        if view.reverse { order.reverse() } else { order }
    });
    TableData::new(columns, rows, total)
}

/// How many cells `text` takes on a terminal.
pub fn text_width(text: &str) -> u16 {
    u16::try_from(unicode_width::UnicodeWidthStr::width(text)).unwrap_or(u16::MAX)
}

/// How bad a row looks: its worst cell's rank, then its worst cell's tone
/// (2 error, 1 warning, 0 else).
fn severity(row: &TableRow) -> (u8, u8) {
    let rank = row.cells.iter().map(|c| c.rank).max().unwrap_or(0);
    let tone = (row.cells.iter())
        .map(|c| match c.tone {
            Tone::Error => 2,
            Tone::Warn => 1,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    (rank, tone)
}

/// Cells that are numbers, highest first; others do not order the rows.
fn highest_first(x: &str, y: &str) -> Ordering {
    match (x.parse::<u64>(), y.parse::<u64>()) {
        (Ok(x), Ok(y)) => y.cmp(&x),
        _ => Ordering::Equal,
    }
}

pub use crate::natural::natural_cmp;

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str, cells: &[&str]) -> TableRow {
        TableRow {
            key: key.into(),
            cells: cells.iter().map(|c| TableCell::plain(*c)).collect(),
        }
    }

    const COLS: &[Column] = &[col("A", Width::Fill(1)), col("B", Width::Content)];

    #[test]
    fn filter_is_case_insensitive_over_cells_and_sort_reverses() {
        let rows = vec![
            row("1", &["cp-1", "Ready"]),
            row("2", &["cp-2", "DOWN"]),
            row("3", &["w-1", "Ready"]),
        ];
        let view = TableView {
            filter: "ready".into(),
            sort: 0,
            reverse: true,
            selected: Some("1".into()),
        };
        let t = shape(COLS, rows, &view);
        let keys: Vec<&str> = t.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, vec!["3", "1"]);
        assert_eq!(t.total, 3);
        assert_eq!(t.selected_index(&view), 1);
    }

    #[test]
    fn worst_first_puts_errors_then_warnings_then_the_most_warnings_first() {
        const WORST: &[Column] = &[
            col("NAME", Width::Fill(1)),
            col("WARN", Width::Content).sorted(Order::WorstFirst),
        ];
        let tone = |key: &str, count: &str, tone: Tone| TableRow {
            key: key.into(),
            cells: vec![TableCell::plain(key), TableCell::new(count, tone)],
        };
        let rows = vec![
            tone("a-ok", "0", Tone::Muted),
            tone("b-warn", "1", Tone::Warn),
            tone("c-warn", "3", Tone::Warn),
            tone("d-down", "2", Tone::Error),
        ];
        let view = TableView {
            sort: 1,
            ..TableView::default()
        };
        let t = shape(WORST, rows, &view);
        let keys: Vec<&str> = t.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, vec!["d-down", "c-warn", "b-warn", "a-ok"]);
    }

    #[test]
    fn worst_first_ranks_by_severity_then_sorts_by_name() {
        const ISSUES: &[Column] = &[
            col("NAME", Width::Fill(1)),
            col("ISSUE", Width::Fill(1)).sorted(Order::WorstFirst),
        ];
        let issue = |key: &str, text: &str, rank: u8| TableRow {
            key: format!("127.0.0.{}", 9 - key.len()),
            cells: vec![
                TableCell::plain(key),
                TableCell::new(text, Tone::Warn).ranked(rank),
            ],
        };
        let rows = vec![
            issue("cp-1", "cordoned", 1),
            issue("cp-10", "", 0),
            issue("cp-2", "", 0),
            issue("w-2", "DOWN", 6),
            issue("cp-3", "NotReady", 4),
        ];
        let view = TableView {
            sort: 1,
            ..TableView::default()
        };
        let t = shape(ISSUES, rows, &view);
        let names: Vec<&str> = t.rows.iter().map(|r| r.cells[0].text.as_str()).collect();
        assert_eq!(names, vec!["w-2", "cp-3", "cp-1", "cp-2", "cp-10"]);
    }

    #[test]
    fn highest_first_puts_the_busiest_first_and_the_unknown_last() {
        const BUSY: &[Column] = &[
            col("NAME", Width::Fill(1)),
            col("CPU%", Width::Content).sorted(Order::HighestFirst),
        ];
        let rows = vec![
            row("a", &["a", "7"]),
            row("b", &[" b", ""]),
            row("c", &["c", "100"]),
            row("d", &["d", "?"]),
            row("e", &["e", "12"]),
        ];
        let view = TableView {
            sort: 1,
            ..TableView::default()
        };
        let t = shape(BUSY, rows, &view);
        let keys: Vec<&str> = t.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, vec!["c", "e", "a", "b", "d"]);
    }
}
