//! The rollout journal: the plan, the acknowledgements, the holder and every step's progress,
//! written atomically (temp file + rename) to `<state dir>/rollouts/<cluster>.json` on every
//! change, so a console killed mid-rollout resumes from the first unfinished step.
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::journal::ROLLOUTS;

use super::progress::{RolloutKind, RolloutOutcome, RolloutSummary, StepProgress};

/// The journal format this build writes and reads.
pub const JOURNAL_FORMAT: u32 = 1;

pub use crate::journal::JournalError;

/// One cluster's rollout, as kept on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolloutJournal {
    pub format: u32,
    pub cluster: String,
    pub kind: RolloutKind,
    /// "v1.12.0" or "1.35.0".
    pub target: String,
    /// `user@host` that runs the rollout.
    pub holder: String,
    /// The typed acknowledgements (e.g. the single control plane one).
    pub acks: Vec<String>,
    /// The rollout's plan, as its runner serializes it (an upgrade plan for the OS upgrade).
    pub plan: serde_json::Value,
    /// The runner's options (timeouts), as it serializes them.
    #[serde(default)]
    pub options: serde_json::Value,
    pub steps: Vec<StepProgress>,
    pub paused: bool,
    /// Set when the rollout ended; a finished journal is not resumed.
    pub outcome: Option<RolloutOutcome>,
    /// Seconds since the Unix epoch of the last write.
    pub updated_unix: u64,
}

impl RolloutJournal {
    /// The journal of a rollout `holder` begins: no plan, acknowledgement or step yet.
    pub fn begun(cluster: &str, kind: RolloutKind, target: &str, holder: &str) -> RolloutJournal {
        RolloutJournal {
            format: JOURNAL_FORMAT,
            cluster: cluster.to_string(),
            kind,
            target: target.to_string(),
            holder: holder.to_string(),
            acks: Vec::new(),
            plan: serde_json::Value::Null,
            options: serde_json::Value::Null,
            steps: Vec::new(),
            paused: false,
            outcome: None,
            updated_unix: crate::clock::unix_now(),
        }
    }

    /// The rollout at a glance, as the progress pane shows it.
    pub fn summary(&self) -> RolloutSummary {
        RolloutSummary {
            cluster: self.cluster.clone(),
            kind: self.kind,
            target: self.target.clone(),
            holder: self.holder.clone(),
            steps: self.steps.clone(),
            paused: self.paused,
            outcome: self.outcome.clone(),
        }
    }

    /// Whether this journal describes a rollout that has not ended.
    pub fn is_unfinished(&self) -> bool {
        self.outcome.is_none()
    }

    /// Writes the journal atomically, owner-only, so a crash leaves either the old or the new
    /// journal, never half.
    pub fn save(&self, path: &Path) -> Result<(), JournalError> {
        ROLLOUTS.save(path, self)
    }

    /// Reads a journal; `Ok(None)` when there is none.
    pub fn load(path: &Path) -> Result<Option<RolloutJournal>, JournalError> {
        let Some(journal) = ROLLOUTS.load::<RolloutJournal>(path)? else {
            return Ok(None);
        };
        if journal.format != JOURNAL_FORMAT {
            return Err(ROLLOUTS.corrupt(
                path,
                format!(
                    "format {} is not the format {JOURNAL_FORMAT} this taloscope reads",
                    journal.format
                ),
            ));
        }
        Ok(Some(journal))
    }

    /// The unfinished rollout of `cluster` under `state_dir`, if one was left behind.
    pub fn load_unfinished(
        state_dir: &Path,
        cluster: &str,
    ) -> Result<Option<RolloutJournal>, JournalError> {
        let path = ROLLOUTS.path_for(state_dir, cluster);
        Ok(RolloutJournal::load(&path)?.filter(RolloutJournal::is_unfinished))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::StepPhase;

    fn journal() -> RolloutJournal {
        let mut done = StepProgress::pending("cp-1", "upgrade to v1.12.0");
        done.phase = StepPhase::Done;
        RolloutJournal {
            format: JOURNAL_FORMAT,
            cluster: "prod/eu".into(),
            kind: RolloutKind::TalosUpgrade,
            target: "v1.12.0".into(),
            holder: "alice@ops1".into(),
            acks: vec![],
            plan: serde_json::json!({"steps": []}),
            options: serde_json::Value::Null,
            steps: vec![done, StepProgress::pending("cp-2", "upgrade to v1.12.0")],
            paused: false,
            outcome: None,
            updated_unix: 1,
        }
    }

    #[test]
    fn saves_atomically_and_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = ROLLOUTS.path_for(dir.path(), "prod/eu");
        assert!(path.ends_with("rollouts/prod_eu.json"), "{path:?}");
        let j = journal();
        j.save(&path).unwrap();
        let mut second = j.clone();
        second.steps[1].phase = StepPhase::Rebooting;
        second.save(&path).unwrap();
        let back = RolloutJournal::load(&path).unwrap().expect("journal");
        assert_eq!(back, second);
        assert_eq!(back.summary().first_unfinished(), Some(1));
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "no temp files left: {leftovers:?}");
    }

    #[test]
    fn missing_is_none_and_finished_is_not_resumed() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            RolloutJournal::load_unfinished(dir.path(), "prod/eu")
                .unwrap()
                .is_none()
        );
        let mut j = journal();
        j.outcome = Some(RolloutOutcome::Completed);
        j.save(&ROLLOUTS.path_for(dir.path(), "prod/eu")).unwrap();
        assert!(
            RolloutJournal::load_unfinished(dir.path(), "prod/eu")
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn corrupt_file_is_a_clear_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = ROLLOUTS.path_for(dir.path(), "lab");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"format\": 1, \"cluster\": ").unwrap();
        let err = RolloutJournal::load(&path).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, JournalError::Corrupt { .. }), "{text}");
        assert!(
            text.contains("lab.json") && text.contains("corrupt"),
            "{text}"
        );
        let mut future = journal();
        future.format = 99;
        future.save(&path).unwrap();
        let text = RolloutJournal::load(&path).unwrap_err().to_string();
        assert!(text.contains("format 99"), "{text}");
    }

    #[test]
    fn odd_cluster_names_stay_inside_the_rollouts_dir() {
        let dir = Path::new("/state");
        for name in ["../etc", "", ".hidden", "a b"] {
            let p = ROLLOUTS.path_for(dir, name);
            assert_eq!(p.parent(), Some(Path::new("/state/rollouts")), "{name:?}");
        }
    }
}
