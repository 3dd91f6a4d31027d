use super::*;
use crate::rollout::RolloutKind;

fn journal(phases: &[StepPhase]) -> RolloutJournal {
    let mut journal = RolloutJournal::begun("lab", RolloutKind::TalosUpgrade, "v1.12.0", "op@h");
    journal.steps = phases
        .iter()
        .enumerate()
        .map(|(i, phase)| {
            let mut step = StepProgress::pending(&format!("n-{i}"), "upgrade to v1.12.0");
            step.phase = *phase;
            step
        })
        .collect();
    journal
}

#[test]
fn a_resumed_run_settles_what_the_killed_one_left_started_and_its_next_batch() {
    use StepPhase as P;
    let batches = vec![vec![0], vec![1], vec![2, 3], vec![4]];
    let left = journal(&[P::Done, P::Skipped, P::Pending, P::Pending, P::Pending]);
    assert_eq!(
        starts(&left, &batches, true),
        [
            StepStart::Done,
            StepStart::Done,
            StepStart::Unsettled,
            StepStart::Unsettled,
            StepStart::ToRun,
        ],
        "the next batch may have been started before the journal said so"
    );
    assert_eq!(
        starts(&left, &batches, false)[2..],
        [StepStart::ToRun, StepStart::ToRun, StepStart::ToRun],
        "a new run settles nothing"
    );
    let rebooting = journal(&[P::Done, P::Rebooting, P::Pending, P::Pending, P::Pending]);
    assert_eq!(
        starts(&rebooting, &batches, true)[1..3],
        [StepStart::Unsettled, StepStart::ToRun]
    );
}

#[test]
fn a_steps_updates_are_journalled_told_and_a_failure_names_the_node() {
    let dir = tempfile::tempdir().unwrap();
    let (events, mut rx) = unbounded_channel();
    let mut record = Record {
        journal: journal(&[StepPhase::Pending]),
        path: ROLLOUTS.path_for(dir.path(), "lab"),
        events,
        broken: None,
    };
    record.apply(
        0,
        StepUpdate::Phase(StepPhase::Rebooting, "kexec".into()),
        None,
    );
    // The same phase and detail again changes nothing and tells nothing.
    record.apply(
        0,
        StepUpdate::Phase(StepPhase::Rebooting, "kexec".into()),
        None,
    );
    let ended = record.ended(0, Err(StepError::TimedOut), Duration::from_secs(900));
    assert_eq!(
        ended,
        Err(StepError::Failed(
            "n-0: timed out after 15m; the rollout stops here and nothing else is touched".into()
        ))
    );
    let on_disk = RolloutJournal::load(&record.path)
        .unwrap()
        .expect("written");
    assert_eq!(on_disk.steps[0].phase, StepPhase::Failed);
    assert!(on_disk.steps[0].started_unix.is_some() && on_disk.steps[0].finished_unix.is_some());
    let mut phases = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let RolloutEvent::Step { progress, .. } = event {
            phases.push(progress.phase);
        }
    }
    assert_eq!(phases, [StepPhase::Rebooting, StepPhase::Failed]);
}

#[test]
fn durations_read_like_an_operator_writes_them() {
    assert_eq!(humanize(Duration::from_secs(900)), "15m");
    assert_eq!(humanize(Duration::from_secs(90)), "1m30s");
    assert_eq!(humanize(Duration::from_secs(5400)), "1h30m");
    assert_eq!(humanize(Duration::from_secs(3)), "3s");
}
