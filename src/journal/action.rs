//! The journal of the actions run on a cluster (node and etcd actions, the CAPI doctor's fixes,
//! a CAPI scale, a CAPI-way upgrade, a delete), `<state dir>/actions/<cluster>.json`: which action runs
//! (or ran last) on the cluster, who runs it, its last step, and what it left behind that a
//! later run must know (a Kubernetes node it cordoned and has not uncordoned yet). Written
//! before each step returns; claimed by one run at a time, so two actions never run on one
//! cluster from this host. A record without an outcome whose run is gone was interrupted: the
//! next start reports it and offers what it left behind as a guarded action.
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{ACTIONS, Journal, JournalError};
use crate::run_holder::{RunHolder, holder_described};

/// One action on a cluster, as kept on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionRecord {
    pub cluster: String,
    /// The action in the operator's words ("reboot node w-1").
    pub action: String,
    /// The Talos node the action is about, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The run (`user@host/pid-start`).
    pub holder: String,
    /// When it started (RFC 3339 UTC).
    pub started: String,
    /// The last step it reported.
    #[serde(default)]
    pub step: String,
    /// The Kubernetes node this action cordoned and has not uncordoned yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_cordoned: Option<String>,
    /// How it ended (`finished`, `failed: …`, `cancelled: …`, `interrupted`); none while it
    /// runs, or when its run was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

/// The journal of the action this run is carrying out.
pub type ActionJournal = Journal<ActionRecord>;

/// Begins the journal of `action` on `cluster` for this run: refused while another run holds
/// it. A record an interrupted run left is replaced: [`interrupted_actions`] reported it first.
pub fn begin_action(
    state_dir: &Path,
    cluster: &str,
    action: &str,
    node: Option<&str>,
) -> Result<ActionJournal, JournalError> {
    let path = ACTIONS.path_for(state_dir, cluster);
    Journal::claim(ACTIONS, path, |_previous: Option<ActionRecord>| {
        Ok::<_, JournalError>(ActionRecord {
            cluster: cluster.to_string(),
            action: action.to_string(),
            node: node.map(str::to_string),
            holder: RunHolder::this_process().to_string(),
            started: crate::clock::utc_timestamp(std::time::SystemTime::now()),
            step: String::new(),
            left_cordoned: None,
            outcome: None,
        })
    })
}

/// An [`ActionJournal`] shared by a runner's steps and its caller: each change is written at
/// once; a write that fails is logged (the action itself goes on: it was approved, and the
/// journal only helps a later run).
#[derive(Debug)]
pub struct RunningAction(std::sync::Mutex<ActionJournal>);

impl RunningAction {
    pub fn new(journal: ActionJournal) -> RunningAction {
        RunningAction(std::sync::Mutex::new(journal))
    }

    /// Changes the record and writes it.
    pub fn record(&self, change: impl FnOnce(&mut ActionRecord)) {
        let mut journal = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Err(e) = journal.update(change) {
            tracing::warn!("{e}");
        }
    }

    /// Records how the run ended: `finished`, a cancel in its own words (they start with
    /// "cancelled" and say what the run leaves), or `failed: …`.
    pub fn end<T>(&self, result: &Result<T, String>) {
        let outcome = match result {
            Ok(_) => "finished".to_string(),
            Err(e) if e.starts_with("cancelled") => e.clone(),
            Err(e) => format!("failed: {e}"),
        };
        self.record(|r| r.outcome = Some(outcome));
    }

    /// The record as it stands.
    pub fn snapshot(&self) -> ActionRecord {
        let journal = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        journal.record().clone()
    }
}

/// An action whose run ended before it did (killed, or the console quit mid-action).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterruptedAction {
    pub record: ActionRecord,
    pub path: PathBuf,
}

impl InterruptedAction {
    /// What happened, in the operator's words, with what it left behind.
    pub fn describe(&self) -> String {
        let r = &self.record;
        let mut text = format!(
            "{} in {} was interrupted (started {} by {}; last step: {})",
            r.action,
            r.cluster,
            r.started,
            holder_described(&r.holder),
            if r.step.is_empty() { "none" } else { &r.step }
        );
        if let Some(node) = &r.left_cordoned {
            text.push_str(&format!("; it left {node} cordoned: uncordon it?"));
        }
        text
    }

    /// Marks the record reported (outcome `interrupted`), so it is told once; what it left
    /// behind stays recorded until an action clears it.
    pub fn mark_reported(&self) -> Result<(), JournalError> {
        let mut record = self.record.clone();
        record.outcome = Some("interrupted".into());
        ACTIONS.save(&self.path, &record)
    }
}

/// The actions left unfinished in the state dir by runs that are gone (their journal's lock is
/// free and no outcome was written); unreadable journals are named in the errors.
pub fn interrupted_actions(state_dir: &Path) -> (Vec<InterruptedAction>, Vec<String>) {
    let dir = state_dir.join(ACTIONS.dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match ACTIONS.load::<ActionRecord>(&path) {
            Ok(Some(record)) if record.outcome.is_none() => {
                // Free to claim: its run is gone. Held: it still runs (another console).
                if ACTIONS.claim(&path).is_ok() {
                    found.push(InterruptedAction { record, path });
                }
            }
            Ok(_) => {}
            Err(e) => errors.push(e.to_string()),
        }
    }
    (found, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_runs_action_is_reported_once_with_what_it_left_cordoned() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = begin_action(dir.path(), "prod", "reboot node w-1", Some("w-1")).unwrap();
        journal
            .update(|r| {
                r.left_cordoned = Some("w-1".into());
                r.step = "w-1: reboot requested".into();
            })
            .unwrap();
        assert!(
            interrupted_actions(dir.path()).0.is_empty(),
            "a run that still holds it is not interrupted"
        );
        assert!(begin_action(dir.path(), "prod", "drain node w-2", None).is_err());
        drop(journal);
        let (found, errors) = interrupted_actions(dir.path());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(found.len(), 1);
        let text = found[0].describe();
        assert!(
            text.starts_with("reboot node w-1 in prod was interrupted")
                && text.contains("last step: w-1: reboot requested")
                && text.ends_with("it left w-1 cordoned: uncordon it?"),
            "{text}"
        );
        found[0].mark_reported().unwrap();
        assert!(interrupted_actions(dir.path()).0.is_empty(), "told once");
        let record: ActionRecord = ACTIONS
            .load(&ACTIONS.path_for(dir.path(), "prod"))
            .unwrap()
            .expect("still recorded");
        assert_eq!(record.left_cordoned.as_deref(), Some("w-1"));
    }

    #[test]
    fn an_end_is_recorded_finished_failed_or_in_the_cancels_own_words() {
        let dir = tempfile::tempdir().unwrap();
        let journal = RunningAction::new(begin_action(dir.path(), "prod", "drain", None).unwrap());
        let ended = |result: Result<(), String>| {
            journal.end(&result);
            journal.snapshot().outcome.unwrap()
        };
        assert_eq!(ended(Ok(())), "finished");
        assert_eq!(
            ended(Err("w-1: timed out".into())),
            "failed: w-1: timed out"
        );
        let cancel = "cancelled before cordoning w-1; no node was left cordoned";
        assert_eq!(ended(Err(cancel.into())), cancel);
    }

    #[test]
    fn a_finished_action_is_not_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = begin_action(dir.path(), "prod", "cordon node w-1", None).unwrap();
        journal
            .update(|r| r.outcome = Some("finished".into()))
            .unwrap();
        drop(journal);
        assert!(interrupted_actions(dir.path()).0.is_empty());
    }
}
