//! The cluster health checklist as it fills in: the checks a node's `HealthCheck` stream
//! reports, in order, each waiting, passed or failing, with node addresses in the reasons
//! named after the cluster's model. Pure: the command and the console fold the same stream.
use serde::Serialize;

use super::status::ClusterStatus;
use crate::talos::{CheckState, HealthProgress};

/// Where a check of the list stands (`waiting`, `ok`, `fail` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckMark {
    Waiting,
    Ok,
    Fail,
}

/// One check of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HealthCheckRow {
    pub name: String,
    pub state: CheckMark,
    /// Why it fails, addresses named (`127.10.0.2 (cp-2)`); empty unless failing.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// The checklist of one cluster.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HealthChecklist {
    /// The node addresses the checks ask, named.
    pub nodes: Vec<String>,
    pub checks: Vec<HealthCheckRow>,
    /// Every check passed and the stream ended.
    pub healthy: bool,
    /// How the stream ended, if not with every check passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Address → node name, from the cluster's model.
    #[serde(skip)]
    names: Vec<(String, String)>,
}

impl HealthChecklist {
    /// An empty list whose reasons will name the nodes of `status`.
    pub fn new(status: &ClusterStatus) -> HealthChecklist {
        let names = status
            .nodes
            .iter()
            .filter(|n| !n.address.is_empty() && n.name != n.address)
            .map(|n| (n.address.clone(), n.name.clone()))
            .collect();
        HealthChecklist {
            names,
            ..HealthChecklist::default()
        }
    }

    /// `text` with each known address followed by its node's name.
    pub fn named(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (address, name) in &self.names {
            out = replace_address(&out, address, &format!("{address} ({name})"));
        }
        out
    }

    /// Folds one progress message in; returns the index of the row it changed, if any.
    pub fn apply(&mut self, progress: HealthProgress) -> Option<usize> {
        match progress {
            HealthProgress::Discovered(nodes) => {
                self.nodes = nodes.iter().map(|n| self.named(n)).collect();
                None
            }
            HealthProgress::Check { name, state } => {
                let (state, reason) = match state {
                    CheckState::Waiting => (CheckMark::Waiting, String::new()),
                    CheckState::Passed => (CheckMark::Ok, String::new()),
                    CheckState::Failing(why) => (CheckMark::Fail, self.named(&one_line(&why))),
                };
                let row = HealthCheckRow {
                    name,
                    state,
                    reason,
                };
                match self.checks.iter().position(|c| c.name == row.name) {
                    Some(i) => {
                        self.checks[i] = row;
                        Some(i)
                    }
                    None => {
                        self.checks.push(row);
                        Some(self.checks.len() - 1)
                    }
                }
            }
            HealthProgress::Note(_) => None,
        }
    }

    /// The stream ended: healthy when it ended cleanly with every check passed; otherwise a
    /// check still waiting becomes failing, with the stream's error as its reason.
    pub fn finish(&mut self, error: Option<String>) {
        let all_passed =
            !self.checks.is_empty() && self.checks.iter().all(|c| c.state == CheckMark::Ok);
        self.healthy = error.is_none() && all_passed;
        if let Some(error) = &error {
            for c in self
                .checks
                .iter_mut()
                .filter(|c| c.state == CheckMark::Waiting)
            {
                c.state = CheckMark::Fail;
                c.reason = error.clone();
            }
        }
        self.error = error;
    }

    /// The first failing check, if any.
    pub fn first_failure(&self) -> Option<&HealthCheckRow> {
        self.checks.iter().find(|c| c.state == CheckMark::Fail)
    }
}

/// A multi-line reason (hashicorp's multierror lists) as one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` with `address` replaced where it stands alone (not inside a longer address).
fn replace_address(text: &str, address: &str, with: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(address) {
        let end = at + address.len();
        let before = rest[..at].chars().next_back();
        let after = rest[end..].chars().next();
        let part_of_more = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit() || c == '.');
        out.push_str(&rest[..at]);
        if part_of_more(before) || part_of_more(after) {
            out.push_str(address);
        } else {
            out.push_str(with);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> HealthChecklist {
        HealthChecklist {
            names: vec![("10.5.0.3".into(), "cp-2".into())],
            ..HealthChecklist::default()
        }
    }

    #[test]
    fn failing_reasons_name_the_node() {
        let mut l = list();
        l.apply(HealthProgress::Check {
            name: "etcd to be healthy".into(),
            state: CheckState::Failing("* 10.5.0.3: service is not healthy; 10.5.0.30: ok".into()),
        });
        assert_eq!(
            l.checks[0].reason,
            "* 10.5.0.3 (cp-2): service is not healthy; 10.5.0.30: ok"
        );
        l.finish(Some("deadline".into()));
        assert!(!l.healthy);
        assert_eq!(
            l.first_failure().map(|c| c.name.as_str()),
            Some("etcd to be healthy")
        );
    }

    #[test]
    fn a_check_updates_its_row_and_all_passed_is_healthy() {
        let mut l = list();
        let check = |state| HealthProgress::Check {
            name: "apid to be ready".into(),
            state,
        };
        assert_eq!(l.apply(check(CheckState::Waiting)), Some(0));
        assert_eq!(l.apply(check(CheckState::Passed)), Some(0));
        assert_eq!(l.checks.len(), 1);
        l.finish(None);
        assert!(l.healthy);
    }

    #[test]
    fn a_check_still_waiting_at_the_deadline_fails() {
        let mut l = list();
        l.apply(HealthProgress::Check {
            name: "apid to be ready".into(),
            state: CheckState::Waiting,
        });
        l.finish(Some("timed out".into()));
        assert_eq!(l.checks[0].state, CheckMark::Fail);
        assert_eq!(l.checks[0].reason, "timed out");
    }
}
