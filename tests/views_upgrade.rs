//! Snapshots of the upgrade plan screen (healthy; cp2-down with its failing
//! etcd guards; single-cp asking for the typed acknowledgement) and of the
//! upgrade on the progress screen (mid-rollout, paused, finished, halted), and of the Kubernetes plan
//! (healthy-112; removed-api asking for its acknowledgement), at 80x24 and 200x50 in
//! default, NO_COLOR and ASCII modes, each render checked for its mode.
mod view_support;

use crossterm::event::KeyCode;
use taloscope::app::screen::{Pane, Screen};
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, Effect, update};
use taloscope::approval::{Answer, AuditLog, Dispatcher, Gate, Verdict};
use taloscope::kube::removed_apis::RemovedApiCount;
use taloscope::operation::{OperationKind, runner_events};
use taloscope::rollout::{
    RolloutEvent, RolloutKind, RolloutOutcome, RolloutSummary, StepPhase, StepProgress,
};
use taloscope::views::upgrade_plan::{KUBE_PLAN, KubePlanModule, RemovedApisCounted, TALOS_PLAN};
use view_support::scenarios;
use view_support::{all_renders_default_styles, screen_text_at};

/// The plan of `scenario`, opened with `u` from its nodes pane.
fn plan(scenario: &str) -> AppState {
    let mut s = scenarios::state(&[scenario]);
    update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    update(&mut s, Action::Open("upgrade-plan"));
    assert_eq!(s.screen, Screen::Module(TALOS_PLAN), "{:?}", s.message);
    s
}

#[test]
fn plan_healthy() {
    let s = plan("healthy");
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("guards pass"), "{text}");
    assert!(text.contains("cp-1"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

/// Read-only mode: the plan says up front that starting is refused, not
/// "guards pass: s starts".
#[test]
fn plan_readonly_says_start_is_refused_up_front() {
    let mut s = scenarios::state(&["healthy"]);
    s.readonly = true;
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::Open("upgrade-plan"));
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Start refused: read-only mode"), "{text}");
    assert!(!text.contains("guards pass"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn plan_cp2_down() {
    let s = plan("cp2-down");
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Start refused"), "{text}");
    assert!(text.contains("etcd healthy"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn plan_single_cp_asks_for_the_acknowledgement() {
    let mut s = plan("single-cp");
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("the Kubernetes API will be down"),
        "the prompt says what to type: {text}"
    );
    view_support::press(&mut s, KeyCode::Char('a'));
    for c in "the Kubernetes".chars() {
        update(&mut s, Action::Insert(c));
    }
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn plan_explains_the_selected_guard() {
    let mut s = plan("cp2-down");
    view_support::press(&mut s, KeyCode::Tab);
    view_support::press(&mut s, KeyCode::Char('?'));
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Why: "), "{text}");
    insta::assert_snapshot!(text);
}

fn step(
    node: &str,
    phase: StepPhase,
    detail: &str,
    times: (Option<u64>, Option<u64>),
) -> StepProgress {
    StepProgress {
        node: node.into(),
        label: "upgrade to v1.12.0".into(),
        phase,
        detail: detail.into(),
        started_unix: times.0,
        finished_unix: times.1,
        error: None,
    }
}

const T0: u64 = 1_796_052_000;

fn summary(steps: Vec<StepProgress>) -> RolloutSummary {
    RolloutSummary {
        cluster: "healthy".into(),
        kind: RolloutKind::TalosUpgrade,
        target: "v1.12.0".into(),
        holder: "op@jump1".into(),
        steps,
        paused: false,
        outcome: None,
    }
}

/// The healthy cluster's Talos upgrade started at `T0` through the dispatcher, on the progress
/// screen, after `events` (each told as the console's runner tells it, at its step's start
/// when it has one), the clock at `now`.
fn progress(events: Vec<RolloutEvent>, now: u64) -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::Event(AppEvent::Tick(T0)));
    update(&mut s, Action::Open("upgrade-plan"));
    let effects = view_support::press(&mut s, KeyCode::Char('s'));
    let [Effect::Gate(action)] = effects.as_slice() else {
        panic!("s asks the gate: {:?}", s.message);
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let dispatcher = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = dispatcher.request(action.clone()) else {
        panic!("a confirmation");
    };
    let Verdict::Proceed(approved) = dispatcher.answer(pending, Answer::Typed("healthy".into()))
    else {
        panic!("the typed name matched");
    };
    update(&mut s, Action::Approved(approved));
    for event in events {
        if let RolloutEvent::Step { progress, .. } = &event
            && let Some(at) = progress.started_unix
        {
            update(&mut s, Action::Event(AppEvent::Tick(at)));
        }
        for told in runner_events::rollout(&event) {
            let told = taloscope::app::action::progress(OperationKind::TalosUpgrade, told);
            update(&mut s, Action::Event(told));
        }
    }
    update(&mut s, Action::Event(AppEvent::Tick(now)));
    update(&mut s, Action::OpenWith("progress", "rollout".into()));
    assert_eq!(s.screen, Screen::Module("progress"), "{:?}", s.message);
    s
}

fn log(line: &str) -> RolloutEvent {
    RolloutEvent::Log {
        cluster: "healthy".into(),
        line: line.into(),
        unix: T0 + 96,
    }
}

fn mid_rollout_events() -> Vec<RolloutEvent> {
    let pending = |n: &str| step(n, StepPhase::Pending, "", (None, None));
    vec![
        RolloutEvent::Started(summary(vec![
            pending("cp-2"),
            pending("cp-3"),
            pending("cp-1"),
            pending("w-1"),
            pending("w-2"),
        ])),
        log("guards pass before cp-2"),
        RolloutEvent::Step {
            cluster: "healthy".into(),
            index: 0,
            progress: step(
                "cp-2",
                StepPhase::Done,
                "running, ready on v1.12.0",
                (Some(T0), Some(T0 + 95)),
            ),
        },
        log("cp-2: done in 1m35s"),
        log("guards pass before cp-3"),
        RolloutEvent::Step {
            cluster: "healthy".into(),
            index: 1,
            progress: step(
                "cp-3",
                StepPhase::Rebooting,
                "phase reboot: task stopEverything",
                (Some(T0 + 96), None),
            ),
        },
        log("cp-3: phase upgrade finished; rebooting"),
    ]
}

#[test]
fn progress_mid_rollout() {
    let s = progress(mid_rollout_events(), T0 + 130);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("rebooting") && text.contains("34s"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

/// Pause was taken while cp-3 still reboots: the screen says PAUSED and how to resume, and the
/// footer offers resume, not pause.
#[test]
fn progress_pausing_while_a_node_reboots() {
    let mut events = mid_rollout_events();
    events.push(RolloutEvent::Paused {
        cluster: "healthy".into(),
    });
    let s = progress(events, T0 + 130);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("PAUSED; r resumes"), "{text}");
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        footer.contains("r resume") && !footer.contains("pause"),
        "{footer}"
    );
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn progress_finished() {
    let mut events = vec![RolloutEvent::Started(summary(
        ["cp-2", "cp-3", "cp-1", "w-1", "w-2"]
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let start = T0 + 100 * i as u64;
                step(
                    n,
                    StepPhase::Done,
                    "running, ready on v1.12.0",
                    (Some(start), Some(start + 90)),
                )
            })
            .collect(),
    ))];
    events.push(log("w-2: done in 1m30s"));
    events.push(RolloutEvent::Finished {
        cluster: "healthy".into(),
        outcome: RolloutOutcome::Completed,
    });
    let s = progress(events, T0 + 600);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("completed"), "{text}");
    let footer = text.lines().last().unwrap_or_default();
    for gone in ["pause", "resume", "abort"] {
        assert!(
            !footer.contains(gone),
            "an ended rollout offers {gone}: {footer}"
        );
    }
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn progress_halted() {
    let mut events = mid_rollout_events();
    let mut failed = step(
        "cp-3",
        StepPhase::Failed,
        "",
        (Some(T0 + 96), Some(T0 + 996)),
    );
    failed.error = Some("cp-3 did not come back within 15m0s".into());
    events.push(RolloutEvent::Step {
        cluster: "healthy".into(),
        index: 1,
        progress: failed,
    });
    events.push(RolloutEvent::Finished {
        cluster: "healthy".into(),
        outcome: RolloutOutcome::Halted(
            "cp-3 did not come back within 15m0s; no other node touched".into(),
        ),
    });
    let s = progress(events, T0 + 1000);
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("halted: cp-3") && text.contains("each times out after 15m00s"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn a_long_halt_reason_wraps_instead_of_being_cut() {
    let reason = "cp-3: rpc error: code = FailedPrecondition desc = failed to validate: etcd member health check failed: 1 of 3 members unhealthy; no other node touched";
    let mut events = mid_rollout_events();
    events.push(RolloutEvent::Finished {
        cluster: "healthy".into(),
        outcome: RolloutOutcome::Halted(reason.into()),
    });
    let s = progress(events, T0 + 1000);
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("validate: etcd member") && text.contains("node touched"),
        "the whole reason shows: {text}"
    );
    assert!(text.contains("Nodes"), "{text}");
}

/// The Kubernetes plan of `scenario`, opened with `U` from its versions pane.
fn kube_plan(scenario: &str) -> AppState {
    let mut s = scenarios::state(&[scenario]);
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::Show(Screen::Cluster(Pane::Versions)));
    update(&mut s, Action::Open("kube-plan"));
    assert_eq!(s.screen, Screen::Module(KUBE_PLAN), "{:?}", s.message);
    s
}

/// The removed-API count arriving for the plan on screen.
fn counted(s: &mut AppState, counts: Vec<RemovedApiCount>) {
    let plan = s
        .screens
        .find::<KubePlanModule>()
        .and_then(|m| m.plan.as_ref())
        .and_then(|p| p.made.as_ref().ok())
        .cloned()
        .expect("a plan");
    let counted = RemovedApisCounted {
        cluster: plan.cluster.clone(),
        from: plan.from.to_string(),
        target: plan.target.to_string(),
        result: Ok(counts),
        flags: Ok(Vec::new()),
    };
    let news = ScreenNews::new(KUBE_PLAN, counted);
    update(s, Action::Event(AppEvent::Screen(news)));
}

#[test]
fn kube_plan_healthy_112() {
    let mut s = kube_plan(scenarios::HEALTHY_112);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("checking"), "until the count arrives: {text}");
    assert!(text.contains("kube-apiserver"), "{text}");
    counted(&mut s, vec![]);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("guards pass"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn kube_plan_removed_api_asks_for_the_acknowledgement() {
    let mut s = kube_plan(scenarios::REMOVED_API);
    let api = |name: &str, count| RemovedApiCount {
        api: format!("{name}.v1beta3.flowcontrol.apiserver.k8s.io"),
        removed_in: "1.32".into(),
        replacement: "flowcontrol.apiserver.k8s.io/v1".into(),
        count,
    };
    counted(
        &mut s,
        vec![api("flowschemas", 2), api("prioritylevelconfigurations", 1)],
    );
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("removed APIs"), "{text}");
    assert!(
        text.contains("objects in removed API versions become unreadable"),
        "the prompt says what to type: {text}"
    );
    insta::assert_snapshot!(all_renders_default_styles(&s));
}
