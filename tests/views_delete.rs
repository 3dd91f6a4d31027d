//! Snapshots of a cluster's deletion (`D`) at 80x24 and 200x50 in default, NO_COLOR and ASCII
//! modes: the plan of a cluster taloscope created (VMs, contexts, journal; the acknowledgement
//! to type), the refusal for one it did not create (naming `taloscope delete --adopt`), and the
//! delete's progress as the console's runner reports it.
mod view_support;

use crossterm::event::KeyCode;
use taloscope::app::screen::Screen;
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::approval::{AuditLog, Dispatcher, Gate, Verdict};
use taloscope::cluster_lifecycle::{DeletePlan, KnownVm, VmsKnownBy};
use taloscope::operation::progress::ProgressEvent;
use taloscope::views::cluster_plan::{Asked, ClusterPlanNews, ClusterPlanTask, NAME, Planned};
use view_support::scenarios;
use view_support::{all_renders_default_styles, press, screen_text_at};

/// The running operation's events, as the console's runner tells them.
fn progress(s: &mut AppState, events: Vec<ProgressEvent>) {
    for e in events {
        update(
            s,
            Action::Event(taloscope::app::action::progress(
                taloscope::operation::OperationKind::Delete,
                e,
            )),
        );
    }
}

fn event(s: &mut AppState, news: ClusterPlanNews) {
    update(
        s,
        Action::Event(AppEvent::Screen(ScreenNews::new(NAME, news))),
    );
}

/// What `prepare_delete` reads for `healthy` had taloscope created it: five VMs, both
/// contexts, its create journal.
fn created() -> DeletePlan {
    let vm = |id, name: &str| KnownVm {
        id,
        name: name.into(),
    };
    DeletePlan {
        cluster: "healthy".into(),
        provider: Some("sim-opennebula".into()),
        provider_endpoint: Some("http://127.0.0.1:2633/RPC2".into()),
        known_by: VmsKnownBy::CreateJournal,
        service: None,
        vms: vec![
            vm(12, "healthy-controlplane-1"),
            vm(13, "healthy-controlplane-2"),
            vm(14, "healthy-controlplane-3"),
            vm(15, "healthy-worker-1"),
            vm(16, "healthy-worker-2"),
        ],
        talos_context: Some("healthy".into()),
        kube_context: Some("admin@healthy".into()),
        merged: None,
        secrets_bundle: None,
        journals: vec!["/home/op/.local/state/taloscope/clusters/healthy.json".into()],
        lease_holder: None,
        lease_unread: None,
    }
}

/// `D` on the fleet's `healthy` row, its plan read.
fn delete_plan(plan: DeletePlan) -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    press(&mut s, KeyCode::Char('D'));
    assert_eq!(s.screen, Screen::Module(NAME), "{:?}", s.message);
    event(
        &mut s,
        ClusterPlanNews {
            task: ClusterPlanTask {
                cluster: "healthy".into(),
                asked: Asked::Delete,
            },
            read: Ok(Planned::Delete(plan, Vec::new())),
        },
    );
    s
}

#[test]
fn delete_plan_of_a_cluster_taloscope_created() {
    let s = delete_plan(created());
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("Delete cluster healthy: terminate 5 VM(s)"),
        "{text}"
    );
    assert!(text.contains("healthy-worker-2 (16)"), "{text}");
    assert!(text.contains("admin@healthy"), "{text}");
    assert!(text.contains("destroys data"), "{text}");
    assert!(
        text.contains("then type: this destroys the cluster and its data"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn delete_plan_of_a_cluster_taloscope_did_not_create_is_refused() {
    let mut plan = created();
    plan.known_by = VmsKnownBy::Unknown;
    plan.vms.clear();
    plan.journals.clear();
    let s = delete_plan(plan);
    let text = screen_text_at(&s, 200, 50);
    assert!(text.contains("--adopt VMID"), "{text}");
    assert!(
        text.contains("Start refused: guard failing: known VMs"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn delete_progress_until_done() {
    let mut s = delete_plan(created());
    press(&mut s, KeyCode::Char('a'));
    for c in "this destroys the cluster and its data".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = d.request(created().action()) else {
        panic!("expected a confirmation")
    };
    let Verdict::Proceed(approved) = d.answer(
        pending,
        taloscope::approval::Answer::Typed("healthy".into()),
    ) else {
        panic!("the typed name matched")
    };
    update(&mut s, Action::Approved(approved));
    assert_eq!(s.screen, Screen::Module("progress"));
    for line in [
        "terminate asked for 5 VM(s)",
        "VM healthy-controlplane-1 (12) is gone",
        "VM healthy-controlplane-2 (13) is gone",
        "VM healthy-controlplane-3 (14) is gone",
        "2 VM(s) not gone yet",
        "VM healthy-worker-1 (15) is gone",
        "VM healthy-worker-2 (16) is gone",
        "every VM is gone",
        "context healthy removed: /home/op/.talos/config (backup /home/op/.talos/config.taloscope-backup-20261201T230000Z), /home/op/.kube/config (backup /home/op/.kube/config.taloscope-backup-20261201T230000Z)",
        "removed /home/op/.local/state/taloscope/clusters/healthy.json",
    ] {
        progress(&mut s, vec![ProgressEvent::Line(line.into())]);
    }
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("running"), "{text}");
    let done = "cluster healthy deleted: no VM, context or journal of it left";
    progress(&mut s, vec![ProgressEvent::Finished(Ok(done.into()))]);
    let text = screen_text_at(&s, 200, 50);
    assert!(text.contains(": done"), "{text}");
    assert!(text.contains("config.taloscope-backup-"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}
