//! The console's tables as plain data: columns, rows of cell text with a tone
//! (so state is a word first and a colour second), filtered over the visible
//! cells and sorted by the chosen column. Update uses it to move the
//! selection by row identity; views draw it.
use std::cmp::Ordering;

use super::rows;
use super::state::{AppState, TableKind, TableView};

/// What a cell means; views turn it into a style. `Unknown` cells have no
/// data yet and show the placeholder glyph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
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
}

impl TableCell {
    pub fn new(text: impl Into<String>, tone: Tone) -> TableCell {
        TableCell {
            text: text.into(),
            tone,
        }
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

/// How a column takes its width: a fixed number of cells, or a share of
/// what is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    Fixed(u16),
    Fill(u16),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub title: &'static str,
    pub width: Width,
    /// Its width when the table is wide.
    pub wide_width: Width,
    /// Shown on a narrow table too; other columns only when there is room
    /// (what they say is repeated elsewhere on the screen).
    pub narrow: bool,
}

pub const fn col(title: &'static str, width: Width) -> Column {
    Column {
        title,
        width,
        wide_width: width,
        narrow: true,
    }
}

/// A column shown only when the table is wide.
pub const fn wide(title: &'static str, width: Width) -> Column {
    Column {
        title,
        width,
        wide_width: width,
        narrow: false,
    }
}

impl Column {
    /// The same column, taking `width` when the table is wide.
    pub const fn wider(self, width: Width) -> Column {
        Column {
            wide_width: width,
            ..self
        }
    }
}

/// A table ready to draw: every row that passes the filter, in sort order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableData {
    pub kind: TableKind,
    pub columns: &'static [Column],
    pub rows: Vec<TableRow>,
    /// Rows before filtering.
    pub total: usize,
}

impl TableData {
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
    let (columns, rows) = match kind {
        TableKind::Fleet => (rows::FLEET_COLUMNS, rows::fleet_rows(state)),
        TableKind::Nodes => (rows::NODE_COLUMNS, rows::node_rows(state)),
        TableKind::Etcd => (rows::ETCD_COLUMNS, rows::etcd_rows(state)),
        TableKind::Versions => (rows::VERSION_COLUMNS, rows::version_rows(state)),
    };
    let view = state.tables.get(kind);
    shape(kind, columns, rows, view)
}

/// Filters and sorts `rows` as `view` says.
pub fn shape(
    kind: TableKind,
    columns: &'static [Column],
    rows: Vec<TableRow>,
    view: &TableView,
) -> TableData {
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
    rows.sort_by(|a, b| {
        let by_column = match (a.cells.get(sort), b.cells.get(sort)) {
            (Some(x), Some(y)) => natural_cmp(&x.text, &y.text),
            _ => Ordering::Equal,
        };
        let order = by_column.then_with(|| natural_cmp(&a.key, &b.key));
        if view.reverse { order.reverse() } else { order }
    });
    TableData {
        kind,
        columns,
        rows,
        total,
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

    const COLS: &[Column] = &[col("A", Width::Fill(1)), col("B", Width::Fixed(4))];

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
        let t = shape(TableKind::Nodes, COLS, rows, &view);
        let keys: Vec<&str> = t.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, vec!["3", "1"]);
        assert_eq!(t.total, 3);
        assert_eq!(t.selected_index(&view), 1);
    }
}
