use std::sync::{Arc, Mutex};

use super::*;
use crate::approval::EtcdAction;

/// A defragment of three members, the leader (cp-1) last.
fn defragment_plan() -> EtcdPlan {
    let step = |node: &str| EtcdStep {
        node: node.into(),
        address: format!("127.0.0.{}", node.len()),
        call: EtcdCall::Defragment,
    };
    EtcdPlan {
        cluster: "prod".into(),
        action: EtcdAction::Defragment,
        target: "all members".into(),
        quota: super::super::QUOTA_BYTES,
        members: Vec::new(),
        steps: vec![step("cp-2"), step("cp-3"), step("cp-1")],
    }
}

#[tokio::test]
async fn a_cancel_between_steps_stops_before_the_next_and_says_what_was_done() {
    let plan = defragment_plan();
    let (set, cancel) = CancelSignal::new();
    let called = Arc::new(Mutex::new(Vec::<String>::new()));
    let calls = called.clone();
    let mut lines = Vec::new();
    let result = run_steps(
        &plan,
        &cancel,
        |i, total, line: &str| {
            lines.push(format!("[{}/{total}] {line}", i + 1));
            // The operator cancels while the first step's line is shown.
            set.send_replace(true);
        },
        move |step| {
            calls.lock().unwrap().push(step.node.clone());
            async {
                Ok(StepDone {
                    said: "2.0 GiB -> 1.0 GiB".into(),
                    snapshot: None,
                })
            }
        },
    )
    .await;
    assert_eq!(
        *called.lock().unwrap(),
        ["cp-2"],
        "no step after the cancel"
    );
    assert_eq!(lines, ["[1/3] cp-2: defragment: 2.0 GiB -> 1.0 GiB"]);
    let said = result.expect_err("a cancelled run is not done");
    assert_eq!(
        said,
        "cancelled before step 2 of 3 (cp-3: defragment); \
         done: cp-2: defragment: 2.0 GiB -> 1.0 GiB; \
         not run: cp-3: defragment, cp-1: defragment"
    );
}

#[tokio::test]
async fn a_cancel_before_the_first_step_changes_nothing_and_an_unset_signal_runs_every_step() {
    let plan = defragment_plan();
    let (set, cancel) = CancelSignal::new();
    set.send_replace(true);
    let ran = |_: EtcdStep| async { Ok(StepDone::default()) };
    let said = run_steps(&plan, &cancel, |_, _, _: &str| {}, ran)
        .await
        .expect_err("cancelled");
    assert!(
        said.starts_with(
            "cancelled before step 1 of 3 (cp-2: defragment); done: none: nothing was changed"
        ),
        "{said}"
    );
    let outcome = run_steps(&plan, &CancelSignal::never(), |_, _, _: &str| {}, ran)
        .await
        .expect("not cancelled");
    assert_eq!(outcome.steps.len(), 3);
}
