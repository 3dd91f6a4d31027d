//! Snapshots of the provision wizard (plan ready; the machine config refused,
//! naming its file) and of a provision on the one progress screen (mid-run; ended with a
//! VM in BOOT_FAILURE offering terminate), at 80x24 and 200x50 in default,
//! NO_COLOR and ASCII modes, each render checked for its mode.
mod view_support;

use std::path::Path;
use std::sync::Arc;

use crossterm::event::KeyCode;
use taloscope::app::screen::{Pane, Screen};
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::approval::{Answer, AuditLog, Dispatcher, Gate, Verdict};
use taloscope::config::{Config, MachineRole, ProviderKind};
use taloscope::operation::OperationKind;
use taloscope::operation::progress::ProgressEvent;
use taloscope::operation::runner_events::ProvisionSteps;
use taloscope::provision::{PlanSource, ProvisionEvent, ProvisionPlan, ProvisionStage, VmProgress};
use taloscope::views::provision::{NAME, ProvisionNews, SourceChoice};
use view_support::{all_renders_default_styles, screen_text_at};
use view_support::{press, scenarios};

const CONFIG: &str = "
providers:
  sim-opennebula:
    kind: opennebula
    endpoint: http://127.0.0.1:2633/RPC2
  sim-oneflow:
    kind: oneflow
    endpoint: http://127.0.0.1:2474
clusters:
  healthy:
    provider: sim-opennebula
    templates:
      worker: talos-healthy-worker
      controlplane: talos-healthy-controlplane
    machine_configs:
      worker: /sim/clusters/healthy/worker.yaml
      controlplane: /sim/clusters/healthy/controlplane.yaml
";

/// What healthy's machine configs point at: its first address.
const HEALTHY_ENDPOINT: &str = "https://127.10.0.1:6443";

fn event(s: &mut AppState, news: ProvisionNews) {
    update(
        s,
        Action::Event(AppEvent::Screen(ScreenNews::new(NAME, news))),
    );
}

/// `healthy`'s wizard, its templates listed, the count at 2.
fn wizard() -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    s.provision.config =
        Arc::new(Config::parse(Path::new("/sim/taloscope.yaml"), CONFIG).expect("config"));
    update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    update(&mut s, Action::Open("provision"));
    assert_eq!(s.screen, Screen::Module(NAME), "{:?}", s.message);
    let templates = [
        (0, "talos-healthy-controlplane"),
        (1, "talos-healthy-worker"),
    ]
    .into_iter()
    .map(|(id, name)| SourceChoice {
        id,
        name: name.into(),
        roles: Vec::new(),
    })
    .collect();
    event(
        &mut s,
        ProvisionNews::Sources {
            cluster: "healthy".into(),
            provider: "sim-opennebula".into(),
            result: Ok(templates),
        },
    );
    press(&mut s, KeyCode::Char('+'));
    press(&mut s, KeyCode::Enter);
    s
}

fn plan() -> ProvisionPlan {
    ProvisionPlan {
        cluster: "healthy".into(),
        provider: "sim-opennebula".into(),
        provider_kind: ProviderKind::Opennebula,
        endpoint: "http://127.0.0.1:2633/RPC2".into(),
        role: MachineRole::Worker,
        count: 2,
        source: PlanSource::Template {
            id: 1,
            name: "talos-healthy-worker".into(),
        },
        machine_config: Some("/sim/clusters/healthy/worker.yaml".into()),
        name_pattern: "{cluster}-{role}-{n}".into(),
        vm_names: vec!["healthy-worker-1".into(), "healthy-worker-2".into()],
        room: Default::default(),
    }
}

fn planned() -> AppState {
    let mut s = wizard();
    event(
        &mut s,
        ProvisionNews::Planned {
            cluster: "healthy".into(),
            asked: 1,
            result: Ok(Box::new(plan())),
            machine_config_endpoint: Some(HEALTHY_ENDPOINT.into()),
        },
    );
    s
}

fn vm(id: u64, n: u8, state: &str, lcm: &str, ip: bool, stage: ProvisionStage) -> VmProgress {
    VmProgress {
        id: Some(id),
        name: format!("healthy-worker-{n}"),
        state: state.into(),
        lcm_state: lcm.into(),
        ip: ip.then(|| format!("127.10.0.{}", 10 + n)),
        stage,
        reason: None,
    }
}

fn progress(s: &mut AppState, e: ProgressEvent) {
    update(
        s,
        Action::Event(taloscope::app::action::progress(
            OperationKind::Provision,
            e,
        )),
    );
}

/// The runner's event as the console's one runner tells it.
fn run_event(s: &mut AppState, steps: &mut ProvisionSteps, e: ProvisionEvent) {
    for told in steps.events(&e) {
        progress(s, told);
    }
}

/// Started through the dispatcher, two VMs reported.
fn running() -> (AppState, ProvisionSteps) {
    let mut steps = ProvisionSteps::new("healthy", "sim-opennebula", plan().vm_names);
    let mut s = planned();
    let dir = tempfile::tempdir().expect("temp dir");
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = d.request(plan().action()) else {
        panic!("expected a confirmation");
    };
    let Verdict::Proceed(approved) = d.answer(pending, Answer::Typed("healthy".into())) else {
        panic!("expected approval");
    };
    update(&mut s, Action::Event(AppEvent::Tick(1_000)));
    update(&mut s, Action::Approved(approved));
    assert_eq!(s.screen, Screen::Module("progress"));
    for v in [
        vm(7, 1, "PENDING", "LCM_INIT", false, ProvisionStage::Creating),
        vm(8, 2, "PENDING", "LCM_INIT", false, ProvisionStage::Creating),
        vm(7, 1, "ACTIVE", "BOOT", false, ProvisionStage::Booting),
    ] {
        run_event(&mut s, &mut steps, ProvisionEvent::Vm(v));
    }
    update(&mut s, Action::Event(AppEvent::Tick(1_042)));
    run_event(
        &mut s,
        &mut steps,
        ProvisionEvent::Vm(vm(8, 2, "ACTIVE", "RUNNING", true, ProvisionStage::Apid)),
    );
    (s, steps)
}

#[test]
fn wizard_with_the_plan_ready() {
    let s = planned();
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("guards pass: s starts"), "{text}");
    assert!(text.contains("7 pass, 0 warn, 0 fail"), "{text}");
    assert!(text.contains("talos-healthy-worker (id 1)"), "{text}");
    let wide = screen_text_at(&s, 200, 50);
    assert!(wide.contains("healthy-worker-2"), "{wide}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

/// One new control plane: a fourth etcd member, the guards focused.
#[test]
fn wizard_guards_wait_for_the_even_count_acknowledgement() {
    let mut s = wizard();
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Char('l'));
    press(&mut s, KeyCode::Char('-'));
    press(&mut s, KeyCode::Enter);
    let plan = ProvisionPlan {
        role: MachineRole::Controlplane,
        count: 1,
        source: PlanSource::Template {
            id: 0,
            name: "talos-healthy-controlplane".into(),
        },
        machine_config: Some("/sim/clusters/healthy/controlplane.yaml".into()),
        vm_names: vec!["healthy-controlplane-4".into()],
        room: Default::default(),
        ..plan()
    };
    event(
        &mut s,
        ProvisionNews::Planned {
            cluster: "healthy".into(),
            asked: 2,
            result: Ok(Box::new(plan)),
            machine_config_endpoint: Some(HEALTHY_ENDPOINT.into()),
        },
    );
    press(&mut s, KeyCode::Tab);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("6 pass, 1 warn, 0 fail"), "{text}");
    assert!(
        text.contains("a, then type: an even etcd member count"),
        "{text}"
    );
    let wide = screen_text_at(&s, 200, 50);
    assert!(wide.contains("3 -> 4 etcd members"), "{wide}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn wizard_with_the_machine_config_refused() {
    let mut s = wizard();
    event(
        &mut s,
        ProvisionNews::Planned {
            cluster: "healthy".into(),
            asked: 1,
            result: Err(
                "machine config /sim/clusters/healthy/worker.yaml: machine.type is \
                         \"controlplane\", but the plan is for worker nodes"
                    .into(),
            ),
            machine_config_endpoint: None,
        },
    );
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("/sim/clusters/healthy/worker.yaml"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn progress_mid_run() {
    let (s, _) = running();
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("healthy-worker-1"), "{text}");
    assert!(text.contains("BOOT") && text.contains("booting"), "{text}");
    assert!(
        text.contains("127.10.0.12") && text.contains("42s"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn progress_ended_with_a_boot_failure_offering_terminate() {
    let (mut s, mut steps) = running();
    update(&mut s, Action::Event(AppEvent::Tick(1_080)));
    let mut failed = vm(
        7,
        1,
        "ACTIVE",
        "BOOT_FAILURE",
        false,
        ProvisionStage::Failed,
    );
    failed.reason = Some("BOOT_FAILURE: the hypervisor could not boot the VM".into());
    let joined = vm(8, 2, "ACTIVE", "RUNNING", true, ProvisionStage::Joined);
    run_event(&mut s, &mut steps, ProvisionEvent::Vm(failed));
    run_event(&mut s, &mut steps, ProvisionEvent::Vm(joined));
    let end = "healthy: 1 of 2 new node(s) joined; not joined: healthy-worker-1 (failed)";
    progress(&mut s, ProgressEvent::Finished(Err(end.into())));
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("healthy-worker-1 (x: terminate VM 7 on sim-opennebula): BOOT_FAILURE"),
        "{text}"
    );
    assert!(text.contains("x terminate"), "the footer offers it: {text}");
    assert!(text.contains("BOOT_FAILURE"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}
