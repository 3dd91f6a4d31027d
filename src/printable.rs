//! Text another host or file wrote, made safe to print on a terminal: control
//! characters (ESC and so OSC/CSI sequences, BEL, CR, DEL, C1) and the
//! invisible bidi overrides become `?`. The one function for tables and panes; byte
//! counts and flags as people read them; and the one column layout of every text table.

/// `text` with every character a terminal would act on replaced by `?`, so a
/// hostname or an error message cannot move the cursor, retitle the window or
/// hide what follows. Line breaks become spaces: one value, one line.
pub fn line(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\t' => ' ',
            c if acts_on_terminal(c) => '?',
            c => c,
        })
        .collect()
}

/// A whole printed text (a table, a message): each line as [`line`] makes
/// it, the line breaks kept.
pub fn lines(text: &str) -> String {
    text.split('\n').map(line).collect::<Vec<_>>().join("\n")
}

/// Control characters (C0, DEL, C1) and the format characters that reorder
/// or hide text.
fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// A flag as every table says it: `yes` or `no`.
pub fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// `23.4 MiB`.
pub fn bytes_text(bytes: i64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Left-aligned columns, two spaces apart, each as wide on a terminal as its widest cell; the
/// last column is not padded: how every command's text table is laid out.
pub fn columns<R: AsRef<[String]>>(rows: &[R]) -> String {
    use unicode_width::UnicodeWidthStr;
    let mut widths: Vec<usize> = Vec::new();
    for row in rows {
        for (i, cell) in row.as_ref().iter().enumerate() {
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(cell.width()),
                None => widths.push(cell.width()),
            }
        }
    }
    let mut out = String::new();
    for row in rows {
        let row = row.as_ref();
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                line.push_str(&" ".repeat(widths[i] - cell.width() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `header` over `rows`, in [`columns`].
pub fn table(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let header = header.iter().map(|h| h.to_string()).collect();
    columns(&std::iter::once(header).chain(rows).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_by_the_widest_cell_and_leave_the_last_unpadded() {
        let text = table(
            &["NAME", "ROLE", "NOTE"],
            [
                vec!["cp-1".into(), "controlplane".into(), String::new()],
                vec!["wörker-é".into(), "worker".into(), "new".into()],
            ],
        );
        assert_eq!(
            text,
            "NAME      ROLE          NOTE\ncp-1      controlplane\nwörker-é  worker        new\n"
        );
    }

    #[test]
    fn bytes_read_like_an_operator_expects() {
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(bytes_text(3 * 1024 * 1024), "3.0 MiB");
    }

    #[test]
    fn escape_sequences_and_controls_are_neutralised() {
        assert_eq!(line("cp-1\x1b]0;owned\x07"), "cp-1?]0;owned?");
        assert_eq!(line("a\x1b[2Jb\rc\x7f\u{9b}d"), "a?[2Jb?c??d");
        assert_eq!(line("two\nlines\tand tab"), "two lines and tab");
        assert_eq!(line("evil\u{202E}txt.exe"), "evil?txt.exe");
    }

    #[test]
    fn a_table_keeps_its_lines() {
        assert_eq!(lines("A  B\ncp\x1b[1m  x\n"), "A  B\ncp?[1m  x\n");
    }

    #[test]
    fn ordinary_text_is_kept() {
        assert_eq!(
            line("node cp-1: “timeout” — 3 s"),
            "node cp-1: “timeout” — 3 s"
        );
    }
}
