//! Whether this run may start or resume a cluster's rollout, from the run named in its
//! unfinished journal: a run still alive on this host is refused (naming it), one whose process
//! is gone is resumed, one of another host waits for its Lease to expire; an explicit take-over
//! names the holder it replaces.
use crate::run_holder::{Liveness, RunHolder, holder_described, host_of};

use super::journal::RolloutJournal;

/// The holder whose rollout Lease this run may take over even while it is live (its process is
/// gone, or the operator named it to take over); `None`: only an expired Lease is taken.
pub type Displaces = Option<String>;

/// Decides for a run about to start or resume on the cluster whose unfinished journal is
/// `journal` (none: nothing to resume). `take_over` is the holder the operator typed to take
/// over a run that is still alive; it must be the holder exactly.
pub fn claim_run(
    journal: Option<&RolloutJournal>,
    take_over: Option<&str>,
) -> Result<Displaces, String> {
    let Some(journal) = journal else {
        return Ok(take_over.map(str::to_string));
    };
    let holder = journal.holder.as_str();
    if let Some(named) = take_over {
        if named != holder {
            return Err(format!(
                "refused: the take-over names {named}, but the {} of {} is held by {}; type the holder exactly",
                journal.kind.describe(),
                journal.cluster,
                holder_described(holder),
            ));
        }
        return Ok(Some(holder.to_string()));
    }
    let this_host = RunHolder::this_process();
    let liveness = match RunHolder::parse(holder) {
        Some(run) => run.liveness(),
        // An older taloscope's `user@host`: its process cannot be checked; on this host it is
        // resumed as before, from another host its Lease must expire first.
        None if host_of(holder) == this_host.host() => Liveness::Gone,
        None => Liveness::Elsewhere,
    };
    match liveness {
        Liveness::Ours | Liveness::Gone => Ok(Some(holder.to_string())),
        Liveness::Elsewhere => Ok(None),
        Liveness::Running => Err(still_running(journal)),
    }
}

fn still_running(journal: &RolloutJournal) -> String {
    format!(
        "refused: the {} of {} to {} is running in {}; wait for it to end, or take it over with --take-over {}",
        journal.kind.describe(),
        journal.cluster,
        journal.target,
        holder_described(&journal.holder),
        journal.holder,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::RolloutKind;

    fn journal(holder: &str) -> RolloutJournal {
        RolloutJournal::begun("lab", RolloutKind::TalosUpgrade, "v1.12.0", holder)
    }

    #[test]
    fn a_live_run_on_this_host_is_refused_by_name_and_a_gone_one_resumed() {
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("sleep runs");
        let live = RunHolder::of_local_process(child.id())
            .expect("a live child")
            .to_string();
        let err = claim_run(Some(&journal(&live)), None).unwrap_err();
        assert!(
            err.starts_with("refused: the upgrade of lab to v1.12.0 is running in "),
            "{err}"
        );
        assert!(err.contains(&format!("pid {} on ", child.id())), "{err}");
        assert!(err.contains("running since "), "{err}");
        assert!(err.ends_with(&format!("--take-over {live}")), "{err}");
        assert_eq!(
            claim_run(Some(&journal(&live)), Some(&live)),
            Ok(Some(live.clone())),
            "the typed holder takes it over"
        );
        let wrong = claim_run(Some(&journal(&live)), Some("alice@ops1/1-2")).unwrap_err();
        assert!(wrong.contains("type the holder exactly"), "{wrong}");
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(claim_run(Some(&journal(&live)), None), Ok(Some(live)));
    }

    #[test]
    fn another_hosts_run_waits_for_its_lease_and_a_fresh_run_displaces_nobody() {
        let theirs = "bob@jump2/77-1796052057";
        assert_eq!(claim_run(Some(&journal(theirs)), None), Ok(None));
        assert_eq!(claim_run(Some(&journal("bob@jump2")), None), Ok(None));
        let ours_old = RunHolder::this_process().who;
        assert_eq!(
            claim_run(Some(&journal(&ours_old)), None),
            Ok(Some(ours_old.clone()))
        );
        assert_eq!(claim_run(None, None), Ok(None));
        assert_eq!(claim_run(None, Some(theirs)), Ok(Some(theirs.to_string())));
    }
}
