//! Snapshots of the create wizard (a fresh request; a killed run's journal filling it in), its
//! plan (an even control-plane count waiting for its acknowledgement) and the progress of a run
//! (phases done and waiting, a maintenance fingerprint asked), at 80x24 and 200x50 in default,
//! NO_COLOR and ASCII modes, each render checked for its mode.
mod view_support;

use std::path::Path;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent};
use taloscope::app::screen::Screen;
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::approval::{Answer, AuditLog, Dispatcher, Gate, Verdict};
use taloscope::cluster_lifecycle::{
    CreateFacts, CreatePhase, CreatePlan, CreateRequest, Delivery, EndpointChoice, LifecycleEvent,
    PatchFiles, PhaseState, PlannedVm, TemplateRef, UnfinishedCreate, VmSource, context_names,
    create_guards,
};
use taloscope::config::{Config, MachineRole, ProviderKind};
use taloscope::opennebula::quota::{
    Amount, HolderKind, Limit, QuotaHolder, QuotaLine, QuotaMetric, VmQuota,
};
use taloscope::operation::OperationKind;
use taloscope::operation::progress::ProgressEvent;
use taloscope::operation::runner_events;
use taloscope::provision::room::{ProviderRoom, QuotaReading, VmDemand};
use taloscope::views::create::{CreateField, CreateNews, CreateScreen, CreateWizard, NAME};
use view_support::scenarios;
use view_support::{all_renders_default_styles, screen_text_at};

const CONFIG: &str = "
providers:
  sim-opennebula:
    kind: opennebula
    endpoint: http://127.0.0.1:2633/RPC2
  sim-oneflow:
    kind: oneflow
    endpoint: http://127.0.0.1:2474
";

fn event(s: &mut AppState, news: CreateNews) {
    update(
        s,
        Action::Event(AppEvent::Screen(ScreenNews::new(NAME, news))),
    );
}

fn key(s: &mut AppState, code: KeyCode) {
    update(s, Action::ScreenKey(KeyEvent::from(code)));
}

fn wizard_of(s: &mut AppState) -> &mut CreateWizard {
    let screen: &mut CreateScreen = s.screens.find_mut().expect("the create screen");
    screen
        .plan
        .as_mut()
        .map(|h| &mut h.plan)
        .expect("the wizard")
}

/// The fleet of `healthy`, `n` pressed, the name typed, Talos v1.11.3 on sim-opennebula.
fn wizard() -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    s.provision.config =
        Arc::new(Config::parse(Path::new("/sim/taloscope.yaml"), CONFIG).expect("config"));
    update(&mut s, Action::Open(NAME));
    assert_eq!(s.screen, Screen::Module(NAME), "{:?}", s.message);
    let w = wizard_of(&mut s);
    w.name = "lab".into();
    w.talos = "v1.11.3".into();
    w.provider = w
        .providers
        .iter()
        .position(|p| p.name == "sim-opennebula")
        .unwrap();
    w.form.field = CreateField::Workers;
    s
}

fn plan(controlplanes: usize) -> CreatePlan {
    let t = |id, name: &str| TemplateRef {
        id,
        name: name.into(),
    };
    let vms = (1..=controlplanes)
        .map(|n| (n, MachineRole::Controlplane))
        .chain((1..=2).map(|n| (n, MachineRole::Worker)))
        .map(|(n, role)| PlannedVm {
            name: format!("lab-{role}-{n}"),
            role,
        })
        .collect();
    CreatePlan {
        cluster: "lab".into(),
        provider: "sim-opennebula".into(),
        provider_kind: ProviderKind::Opennebula,
        provider_endpoint: "http://127.0.0.1:2633/RPC2".into(),
        source: VmSource::Templates {
            controlplane: t(3, "talos-controlplane"),
            worker: t(4, "talos-worker"),
        },
        controlplanes,
        workers: 2,
        vms,
        talos: "v1.11.3".into(),
        kubernetes: "1.34.1".into(),
        kubernetes_defaulted: true,
        delivery: Delivery::Maintenance,
        endpoint: EndpointChoice::FirstControlPlane,
        patches: PatchFiles::default(),
        with_secrets: None,
        bundle_path: "/state/clusters/lab.secrets.yaml".into(),
        journal_path: "/state/clusters/lab.json".into(),
        room: room(controlplanes as u64 + 2),
    }
}

/// The provider's answer about room: user tenant's VM quota of 10 VMs, 2 in use.
fn room(vms: u64) -> ProviderRoom {
    let line = QuotaLine {
        metric: QuotaMetric::Vms,
        limit: Limit::At(Amount::whole(10)),
        used: Amount::whole(2),
    };
    let tenant = QuotaHolder {
        kind: HolderKind::User,
        id: 2,
        name: "tenant".into(),
        quota: Some(VmQuota { lines: vec![line] }),
        defaults: None,
    };
    let reading = QuotaReading {
        holders: vec![tenant],
        unreadable: Vec::new(),
    };
    let demand = VmDemand {
        vms,
        ..VmDemand::default()
    };
    ProviderRoom {
        roles: Vec::new(),
        quotas: Some((reading, demand)),
    }
}

/// The plan of `controlplanes` made, with the guards the CLI evaluates.
fn planned(controlplanes: usize) -> AppState {
    let mut s = wizard();
    key(&mut s, KeyCode::Enter);
    let p = plan(controlplanes);
    let (talos, kube) = context_names(&s.clusters);
    let guards = create_guards(&CreateFacts {
        plan: &p,
        talos_contexts: &talos,
        kube_contexts: &kube,
    });
    event(
        &mut s,
        CreateNews::Planned {
            asked: 1,
            result: Ok((Box::new(p), guards)),
        },
    );
    s
}

/// The create runner's event at `at` (the console's clock), as the console's runner tells it.
fn run(s: &mut AppState, event_: LifecycleEvent, at: u64) {
    progress(s, at, runner_events::lifecycle(&event_));
}

fn progress(s: &mut AppState, at: u64, events: Vec<ProgressEvent>) {
    update(s, Action::Event(AppEvent::Tick(at)));
    for e in events {
        update(
            s,
            Action::Event(taloscope::app::action::progress(OperationKind::Create, e)),
        );
    }
}

/// Approved, three phases done, the fourth's fingerprint asked, the clock at 1,075.
fn running() -> AppState {
    let mut s = planned(3);
    let dir = tempfile::tempdir().expect("temp dir");
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = d.request(plan(3).action()) else {
        panic!("expected a confirmation");
    };
    let Verdict::Proceed(approved) = d.answer(pending, Answer::Typed("lab".into())) else {
        panic!("expected approval");
    };
    update(&mut s, Action::Approved(approved));
    let phase = |phase, state| LifecycleEvent::Phase { phase, state };
    let done = |d: &str| PhaseState::Done(d.into());
    run(
        &mut s,
        phase(CreatePhase::Vms, PhaseState::Waiting("asking".into())),
        1_000,
    );
    run(&mut s, LifecycleEvent::Note { text: "secrets bundle written to /state/clusters/lab.secrets.yaml (adding nodes later needs it)".into() }, 1_001);
    run(
        &mut s,
        phase(CreatePhase::Vms, done("VM ids 11, 12, 13, 14, 15")),
        1_002,
    );
    run(
        &mut s,
        phase(
            CreatePhase::Booted,
            PhaseState::Waiting("3 of 5 VMs running with an address".into()),
        ),
        1_010,
    );
    run(
        &mut s,
        phase(
            CreatePhase::Booted,
            done("5 VMs running; endpoint https://127.30.0.1:6443"),
        ),
        1_040,
    );
    run(
        &mut s,
        phase(
            CreatePhase::Configured,
            PhaseState::Waiting("lab-controlplane-1: maintenance API: connection refused".into()),
        ),
        1_041,
    );
    run(
        &mut s,
        LifecycleEvent::Note {
            text:
                "lab-controlplane-1 (127.30.0.1): maintenance certificate fingerprint 5f:0e:9a:11"
                    .into(),
        },
        1_050,
    );
    let question =
        runner_events::fingerprint_question(1, "lab-controlplane-1", "127.30.0.1", "5f:0e:9a:11");
    progress(&mut s, 1_051, vec![question]);
    update(&mut s, Action::Event(AppEvent::Tick(1_075)));
    s
}

#[test]
fn wizard_with_a_fresh_request() {
    let s = wizard();
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Create a new cluster"), "{text}");
    assert!(text.contains("default: 1.34.1"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn wizard_filled_in_from_a_stopped_create() {
    let mut s = wizard();
    wizard_of(&mut s).name.clear();
    let mut stopped = plan(3);
    stopped.delivery = Delivery::UserData;
    stopped.endpoint = EndpointChoice::Given("127.30.0.100".into());
    event(
        &mut s,
        CreateNews::Unfinished {
            found: vec![UnfinishedCreate {
                cluster: "lab".into(),
                reached: Some(CreatePhase::Booted),
                request: CreateRequest::from_plan(&stopped),
            }],
            errors: Vec::new(),
        },
    );
    let text = screen_text_at(&s, 200, 50);
    assert!(
        text.contains("A create of lab was stopped (last phase done: booted)"),
        "{text}"
    );
    assert!(text.contains("127.30.0.100"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn plan_waits_for_the_even_count_acknowledgement() {
    let s = planned(2);
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("CREATE     cluster lab: 2 control plane(s)"),
        "{text}"
    );
    assert!(text.contains("1 warn"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn progress_asking_a_fingerprint() {
    let s = running();
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("y confirms"), "{text}");
    let wide = screen_text_at(&s, 200, 50);
    for phase in [
        "VMs",
        "booted",
        "configured",
        "bootstrapped",
        "etcd",
        "API",
        "nodes Ready",
        "contexts written",
    ] {
        assert!(wide.contains(phase), "{phase} in {wide}");
    }
    assert!(wide.contains("30s"), "booted took 30 s: {wide}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn progress_done() {
    let mut s = running();
    // `y` on the one progress screen.
    update(
        &mut s,
        Action::ScreenKey(KeyEvent::from(KeyCode::Char('y'))),
    );
    let phase = |phase, state| LifecycleEvent::Phase { phase, state };
    for (i, p) in CreatePhase::ALL.iter().enumerate().skip(2) {
        run(
            &mut s,
            phase(*p, PhaseState::Done(format!("{} done", p.title()))),
            1_080 + i as u64,
        );
    }
    let summary = taloscope::cluster_lifecycle::RunSummary {
        cluster: "lab".into(),
        what: "create".into(),
        reached: Some(CreatePhase::ContextsWritten),
        error: None,
    };
    run(&mut s, LifecycleEvent::Finished { summary }, 1_100);
    let up = runner_events::create_end("lab", Ok(()));
    progress(&mut s, 1_100, vec![ProgressEvent::Finished(up)]);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("contexts written done"), "{text}");
    assert!(text.contains("lab is up"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}
