//! The CAPI screen of the cluster in use (`:capi`), its state: the selected object, and the
//! text of its full conditions Enter shows. Pure; the tree shown and its rows
//! (`capi::tree_rows`, the ones `taloscope capi status` prints) are read by `queries`, the keys
//! are `update_capi`'s.
use crate::capi::{TreeRow, condition_age};

/// Where the operator is on the CAPI screen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapiScreen {
    /// The selected row's object (`Machine/…`), kept across reads.
    pub selected: Option<String>,
}

/// `type status (severity) reason, since age` then the message indented, per condition.
pub fn conditions_text(row: &TreeRow, now: u64) -> String {
    if row.conditions.is_empty() {
        return "No conditions reported.".to_string();
    }
    let mut text = String::new();
    for c in &row.conditions {
        let mut head = format!("{} {}", c.kind, c.status);
        if !c.severity.is_empty() {
            head.push_str(&format!(" ({})", c.severity));
        }
        if !c.reason.is_empty() {
            head.push_str(&format!(" {}", c.reason));
        }
        if let Some(age) = condition_age(c, now).filter(|_| now > 0) {
            head.push_str(&format!(
                ", since {} ago",
                crate::fleet::summary::age_text(age)
            ));
        }
        text.push_str(&crate::printable::line(&head));
        text.push('\n');
        for line in c.message.lines() {
            text.push_str(&format!("  {}\n", crate::printable::line(line)));
        }
    }
    text.trim_end().to_string()
}
