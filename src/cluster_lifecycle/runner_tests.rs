//! The create runner against a fake world: every phase in order, and a run killed at each
//! phase resumed by a new run, which never makes a second set of VMs, a second bundle or a
//! second Bootstrap.
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::*;
use crate::approval::{Answer, ApprovedAction, AuditLog, Dispatcher, Gate, Verdict};
use crate::cluster_lifecycle::guards::tests::plan;
use crate::cluster_lifecycle::steps::{
    BootstrapAnswer, ContextsMerged, EtcdForming, NodesReady, VmBoot,
};

#[derive(Default)]
struct World {
    vms: Vec<CreatedVm>,
    next_id: u64,
    create_calls: usize,
    bundles_generated: usize,
    applied: BTreeSet<u64>,
    apply_calls: usize,
    bootstraps: usize,
    /// Bootstrap answers "not available yet" this many times first (CRI not up).
    not_available_yet: usize,
    contexts_written: usize,
    fingerprint: String,
    /// The step to stop in, after its effect, as a killed console would.
    hang_in: Option<&'static str>,
}

#[derive(Clone)]
struct Fake {
    world: Arc<Mutex<World>>,
    plan: CreatePlan,
    entered: mpsc::UnboundedSender<&'static str>,
}

impl Fake {
    /// Stops here for good when the test asked to (the task is then aborted).
    async fn maybe_hang(&self, step: &'static str) {
        let hang = self.world.lock().unwrap().hang_in == Some(step);
        if hang {
            let _ = self.entered.send(step);
            std::future::pending::<()>().await;
        }
    }

    fn boxed<'a, T: Send + 'a>(
        f: impl std::future::Future<Output = T> + Send + 'a,
    ) -> BoxFuture<'a, T> {
        Box::pin(f)
    }
}

impl CreateSteps for Fake {
    fn find_vms(&self) -> BoxFuture<'_, Result<NewVms, String>> {
        let vms = self.world.lock().unwrap().vms.clone();
        Fake::boxed(async move { Ok(NewVms { vms, service: None }) })
    }

    fn create_vms<'a>(&'a self, existing: &'a NewVms) -> BoxFuture<'a, Result<NewVms, String>> {
        Fake::boxed(async move {
            let mut made = Vec::new();
            for planned in &self.plan.vms {
                if existing.vms.iter().any(|v| v.name == planned.name) {
                    continue;
                }
                let vm = {
                    let mut w = self.world.lock().unwrap();
                    w.create_calls += 1;
                    w.next_id += 1;
                    let vm = CreatedVm {
                        id: 100 + w.next_id,
                        name: planned.name.clone(),
                        role: planned.role,
                        ip: Some(format!("127.0.9.{}", w.next_id)),
                        fingerprint: None,
                    };
                    w.vms.push(vm.clone());
                    vm
                };
                made.push(vm);
                // Killed after the first VM: the others are never asked for by this run.
                if made.len() == 1 {
                    self.maybe_hang("create_vms").await;
                }
            }
            Ok(NewVms {
                vms: made,
                service: None,
            })
        })
    }

    fn look_at_vms<'a>(&'a self, _vms: &'a NewVms) -> BoxFuture<'a, Result<BootView, String>> {
        Fake::boxed(async move {
            self.maybe_hang("look_at_vms").await;
            let vms = self.world.lock().unwrap().vms.clone();
            Ok(BootView {
                vms: vms
                    .into_iter()
                    .map(|vm| VmBoot {
                        vm,
                        running: true,
                        failure: None,
                    })
                    .collect(),
                gateway_ip: None,
            })
        })
    }

    fn prepare_configs<'a>(
        &'a self,
        _endpoint: &'a str,
        bundle: &'a Path,
        fresh: bool,
    ) -> BoxFuture<'a, Result<(), String>> {
        Fake::boxed(async move {
            if fresh {
                self.world.lock().unwrap().bundles_generated += 1;
                std::fs::create_dir_all(bundle.parent().unwrap()).unwrap();
                std::fs::write(bundle, "secrets").unwrap();
            } else {
                assert!(bundle.exists(), "loaded, so it is there");
            }
            self.maybe_hang("prepare_configs").await;
            Ok(())
        })
    }

    fn fingerprint<'a>(&'a self, _vm: &'a CreatedVm) -> BoxFuture<'a, Result<String, String>> {
        let f = self.world.lock().unwrap().fingerprint.clone();
        Fake::boxed(async move { Ok(f) })
    }

    fn apply_config<'a>(
        &'a self,
        vm: &'a CreatedVm,
        fingerprint: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        Fake::boxed(async move {
            {
                let mut w = self.world.lock().unwrap();
                assert_eq!(fingerprint, w.fingerprint, "pinned to what is served");
                w.applied.insert(vm.id);
                w.apply_calls += 1;
            }
            self.maybe_hang("apply_config").await;
            Ok(())
        })
    }

    fn talos_answers<'a>(&'a self, vm: &'a CreatedVm) -> BoxFuture<'a, Result<bool, String>> {
        Fake::boxed(async move {
            self.maybe_hang("talos_answers").await;
            Ok(self.world.lock().unwrap().applied.contains(&vm.id)
                || self.plan.delivery == Delivery::UserData)
        })
    }

    fn bootstrap<'a>(&'a self, _node: &'a str) -> BoxFuture<'a, Result<BootstrapAnswer, String>> {
        Fake::boxed(async move {
            {
                let mut w = self.world.lock().unwrap();
                if w.not_available_yet > 0 {
                    w.not_available_yet -= 1;
                    let refused = "bootstrap is not available yet".to_string();
                    return Ok(BootstrapAnswer::NotAvailableYet(refused));
                }
                w.bootstraps += 1;
            }
            self.maybe_hang("bootstrap").await;
            Ok(BootstrapAnswer::Accepted)
        })
    }

    fn etcd<'a>(&'a self, _node: &'a str) -> BoxFuture<'a, Result<EtcdForming, String>> {
        Fake::boxed(async move {
            self.maybe_hang("etcd").await;
            let w = self.world.lock().unwrap();
            // etcd forms from exactly one bootstrap, as upstream's.
            Ok(match w.bootstraps {
                1 => EtcdForming {
                    members: self.plan.controlplanes,
                    leader: Some("lab-controlplane-1".into()),
                },
                _ => EtcdForming::default(),
            })
        })
    }

    fn api<'a>(&'a self, _node: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        Fake::boxed(async move {
            self.maybe_hang("api").await;
            Ok(Some("v1.34.3".into()))
        })
    }

    fn nodes_ready<'a>(&'a self, _node: &'a str) -> BoxFuture<'a, Result<NodesReady, String>> {
        Fake::boxed(async move {
            self.maybe_hang("nodes_ready").await;
            let n = self.world.lock().unwrap().vms.len();
            Ok(NodesReady {
                ready: n,
                registered: n,
            })
        })
    }

    fn write_contexts<'a>(
        &'a self,
        cps: &'a [String],
    ) -> BoxFuture<'a, Result<ContextsMerged, String>> {
        Fake::boxed(async move {
            assert_eq!(cps.len(), self.plan.controlplanes, "{cps:?}");
            self.world.lock().unwrap().contexts_written += 1;
            self.maybe_hang("write_contexts").await;
            Ok(ContextsMerged {
                said: "contexts lab written".into(),
                entries: None,
            })
        })
    }
}

fn approved(dir: &Path, plan: &CreatePlan) -> ApprovedAction {
    let d = Dispatcher::new(false, AuditLog::new(dir.join("audit.log")));
    let Gate::Confirm(p) = d.request(plan.action()) else {
        panic!("not read-only")
    };
    match d.answer(p, Answer::Typed(plan.cluster.clone())) {
        Verdict::Proceed(a) => a,
        Verdict::Cancelled(why) => panic!("{why}"),
    }
}

/// Runs `runner` with `approval` through the operation runner, as the command and the console
/// do: its action journal and audit log in `dir`.
async fn run_approved(
    runner: CreateRunner<Fake>,
    approval: ApprovedAction,
    dir: &Path,
) -> RunSummary {
    let dispatcher = Dispatcher::new(false, AuditLog::new(dir.join("audit.log")));
    let mut create = crate::operation::create::ClusterCreate::new(runner);
    let run = crate::operation::Runner {
        approved: &approval,
        dispatcher: &dispatcher,
        state_dir: dir,
        acks: &[],
        cancel: crate::operation::CancelSignal::never(),
        events: &|_| {},
    };
    let result = crate::operation::run(&mut create, run).await;
    create.summary(&result).await
}

struct Run {
    world: Arc<Mutex<World>>,
    entered: mpsc::UnboundedReceiver<&'static str>,
    task: tokio::task::JoinHandle<RunSummary>,
    events: mpsc::Receiver<LifecycleEvent>,
}

fn start(
    state: &Path,
    plan: &CreatePlan,
    world: Arc<Mutex<World>>,
    fingerprints: FingerprintPolicy,
) -> Run {
    let (entered_tx, entered) = mpsc::unbounded_channel();
    let fake = Fake {
        world: world.clone(),
        plan: plan.clone(),
        entered: entered_tx,
    };
    let plan = &CreatePlan {
        bundle_path: CreateJournal::bundle_path_for(state, &plan.cluster),
        ..plan.clone()
    };
    let journal = CreateJournal::claim(state, plan).expect("journal");
    let (tx, events) = mpsc::channel(1024);
    let options = CreateOptions {
        poll: Duration::from_millis(1),
        phase_timeout: Duration::from_secs(20),
    };
    let runner = CreateRunner::new(plan.clone(), fake, journal, options, fingerprints, tx);
    let approval = approved(state, plan);
    let dir = state.to_path_buf();
    let task = tokio::spawn(async move { run_approved(runner, approval, &dir).await });
    Run {
        world,
        entered,
        task,
        events,
    }
}

fn lab(delivery: Delivery) -> CreatePlan {
    let endpoint = match delivery {
        Delivery::UserData => EndpointChoice::Given("127.0.9.200".into()),
        Delivery::Maintenance => EndpointChoice::FirstControlPlane,
    };
    plan(3, delivery, endpoint)
}

fn world() -> Arc<Mutex<World>> {
    Arc::new(Mutex::new(World {
        fingerprint: "pin-A".into(),
        ..World::default()
    }))
}

#[tokio::test]
async fn a_run_goes_through_every_phase_once() {
    for delivery in [Delivery::Maintenance, Delivery::UserData] {
        let dir = tempfile::tempdir().unwrap();
        let p = lab(delivery);
        let mut run = start(dir.path(), &p, world(), FingerprintPolicy::PinFirstSeen);
        let summary = run.task.await.unwrap();
        assert!(summary.succeeded(), "{}", summary.line());
        let w = run.world.lock().unwrap();
        assert_eq!((w.vms.len(), w.bootstraps, w.bundles_generated), (5, 1, 1));
        let mut done = Vec::new();
        while let Ok(e) = run.events.try_recv() {
            if let LifecycleEvent::Phase {
                phase,
                state: PhaseState::Done(_),
            } = e
            {
                done.push(phase);
            }
        }
        assert_eq!(done, CreatePhase::ALL, "{delivery:?}");
        let record = CreateJournal::read(dir.path(), "lab").unwrap().unwrap();
        assert_eq!(record.holder, None, "released at the end");
        assert_eq!(record.configured.len(), 5);
    }
}

#[tokio::test]
async fn a_run_killed_at_any_phase_resumes_without_a_second_set_of_vms_or_bootstrap() {
    let kill_points = [
        "create_vms",
        "look_at_vms",
        "prepare_configs",
        "apply_config",
        "talos_answers",
        "bootstrap",
        "etcd",
        "api",
        "nodes_ready",
        "write_contexts",
    ];
    for point in kill_points {
        let dir = tempfile::tempdir().unwrap();
        let p = lab(Delivery::Maintenance);
        let w = world();
        w.lock().unwrap().hang_in = Some(point);
        let mut first = start(dir.path(), &p, w.clone(), FingerprintPolicy::PinFirstSeen);
        assert_eq!(first.entered.recv().await, Some(point));
        first.task.abort();
        let _ = first.task.await;
        w.lock().unwrap().hang_in = None;
        let second = start(dir.path(), &p, w.clone(), FingerprintPolicy::PinFirstSeen);
        let summary = second.task.await.unwrap();
        assert!(summary.succeeded(), "killed in {point}: {}", summary.line());
        let w = w.lock().unwrap();
        assert_eq!(w.vms.len(), 5, "killed in {point}: VMs");
        assert_eq!(w.create_calls, 5, "killed in {point}: VMs asked for");
        assert_eq!(w.bootstraps, 1, "killed in {point}: bootstraps");
        assert_eq!(w.bundles_generated, 1, "killed in {point}: bundles");
        // A config an earlier run applied is not applied again (its Talos answers).
        assert_eq!(w.apply_calls, 5, "killed in {point}: configs applied");
    }
}

#[tokio::test]
async fn a_changed_maintenance_fingerprint_after_a_kill_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = lab(Delivery::Maintenance);
    let w = world();
    w.lock().unwrap().hang_in = Some("apply_config");
    let mut first = start(dir.path(), &p, w.clone(), FingerprintPolicy::PinFirstSeen);
    first.entered.recv().await;
    first.task.abort();
    let _ = first.task.await;
    {
        // The config never reached the VM; another machine answers at its address.
        let mut w = w.lock().unwrap();
        w.hang_in = None;
        w.applied.clear();
        w.fingerprint = "pin-B".into();
    }
    let second = start(dir.path(), &p, w.clone(), FingerprintPolicy::PinFirstSeen);
    let summary = second.task.await.unwrap();
    let err = summary.error.expect("refused");
    assert!(
        err.contains("pin-B") && err.contains("pin-A") && err.contains("not applying"),
        "{err}"
    );
    assert_eq!(w.lock().unwrap().bootstraps, 0);
}

#[tokio::test]
async fn the_console_is_asked_for_each_fingerprint_and_a_no_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let p = lab(Delivery::Maintenance);
    let (ask, mut questions) = mpsc::channel(4);
    let run = start(dir.path(), &p, world(), FingerprintPolicy::Ask(ask));
    let q = questions.recv().await.expect("asked");
    assert_eq!(
        (q.vm.as_str(), q.fingerprint.as_str()),
        ("lab-controlplane-1", "pin-A")
    );
    q.answer.send(false).unwrap();
    let summary = run.task.await.unwrap();
    assert!(summary.error.unwrap().contains("not confirmed"));
    assert!(run.world.lock().unwrap().applied.is_empty());
}

#[tokio::test]
async fn headless_given_fingerprints_must_match_and_an_unnamed_vm_needs_the_acknowledgement() {
    let given = |pairs: &[(&str, &str)], pin_unnamed| FingerprintPolicy::Given {
        fingerprints: pairs
            .iter()
            .map(|(vm, f)| (vm.to_string(), f.to_string()))
            .collect(),
        pin_unnamed,
    };
    let p = lab(Delivery::Maintenance);
    let dir = tempfile::tempdir().unwrap();
    let wrong = start(
        dir.path(),
        &p,
        world(),
        given(&[("lab-controlplane-1", "pin-B")], true),
    );
    let error = wrong.task.await.unwrap().error.expect("refused");
    assert!(
        error.contains("lab-controlplane-1")
            && error.contains("not the pin-B given with --fingerprint"),
        "{error}"
    );
    assert!(wrong.world.lock().unwrap().applied.is_empty());

    let dir = tempfile::tempdir().unwrap();
    let unnamed = start(
        dir.path(),
        &p,
        world(),
        given(&[("lab-controlplane-1", "pin-A")], false),
    );
    let error = unnamed.task.await.unwrap().error.expect("refused");
    assert!(
        error.contains("no --fingerprint names lab-controlplane-2"),
        "{error}"
    );

    let dir = tempfile::tempdir().unwrap();
    let acked = start(
        dir.path(),
        &p,
        world(),
        given(&[("lab-controlplane-1", "pin-A")], true),
    );
    let summary = acked.task.await.unwrap();
    assert!(summary.succeeded(), "{}", summary.line());
}

#[tokio::test]
async fn an_approval_for_another_plan_does_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = lab(Delivery::Maintenance);
    let mut other = p.clone();
    other.workers = 7;
    let (entered, _) = mpsc::unbounded_channel();
    let w = world();
    let fake = Fake {
        world: w.clone(),
        plan: p.clone(),
        entered,
    };
    let (tx, _rx) = mpsc::channel(64);
    let journal = CreateJournal::claim(dir.path(), &p).unwrap();
    let runner = CreateRunner::new(
        p.clone(),
        fake,
        journal,
        CreateOptions::default(),
        FingerprintPolicy::PinFirstSeen,
        tx,
    );
    let summary = run_approved(runner, approved(dir.path(), &other), dir.path()).await;
    assert!(summary.error.unwrap().contains("is not for this plan"));
    assert!(w.lock().unwrap().vms.is_empty());
}

#[tokio::test]
async fn a_lost_bundle_after_configs_were_handed_out_is_never_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let p = lab(Delivery::Maintenance);
    let w = world();
    w.lock().unwrap().hang_in = Some("talos_answers");
    let mut first = start(dir.path(), &p, w.clone(), FingerprintPolicy::PinFirstSeen);
    first.entered.recv().await;
    first.task.abort();
    let _ = first.task.await;
    w.lock().unwrap().hang_in = None;
    std::fs::remove_file(CreateJournal::bundle_path_for(dir.path(), "lab")).unwrap();
    let second = start(dir.path(), &p, w.clone(), FingerprintPolicy::PinFirstSeen);
    let err = second.task.await.unwrap().error.expect("refused");
    assert!(err.contains("is gone"), "{err}");
    assert_eq!(w.lock().unwrap().bundles_generated, 1);
}

#[tokio::test]
async fn bootstrap_answered_not_available_yet_is_sent_again_until_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let p = lab(Delivery::Maintenance);
    let w = world();
    w.lock().unwrap().not_available_yet = 3;
    let run = start(dir.path(), &p, w.clone(), FingerprintPolicy::PinFirstSeen);
    let summary = run.task.await.unwrap();
    assert!(summary.succeeded(), "{}", summary.line());
    let w = w.lock().unwrap();
    assert_eq!((w.not_available_yet, w.bootstraps), (0, 1));
    let record = CreateJournal::read(dir.path(), "lab").unwrap().unwrap();
    let sent = record.bootstrap_sent.expect("journaled");
    assert!(
        !sent.not_available_yet,
        "the accepted send is the last word"
    );
}
