//! Every operation goes through the one runner (`taloscope::operation::run`): each kind names
//! the `Operation` implementation that carries it out, and no module below the operation layer
//! takes the dispatcher's `ApprovedAction` (a runner of its own, starting a mutation without
//! the runner's guards, journal, cancel and audit). The kinds whose runners are still their
//! own are listed here with the file that runs them: the list must shrink, never grow.
use std::collections::BTreeSet;

use taloscope::operation::OperationKind;

use super::{file_is_tests, rank, rust_files, src, without_test_code};

/// The kinds not yet carried out by the runner, and the domain runner each one has instead.
const OWN_RUNNERS: &[(OperationKind, &str)] = &[
    (OperationKind::TalosUpgrade, "upgrade/runner.rs"),
    (OperationKind::KubernetesUpgrade, "upgrade/runner.rs"),
    (OperationKind::CapiUpgrade, "upgrade/runner.rs"),
    (OperationKind::Provision, "provision/runner.rs"),
    (OperationKind::Create, "cluster_lifecycle/runner.rs"),
];

#[test]
fn every_operation_kind_is_carried_out_by_an_operation_the_runner_runs() {
    let own: BTreeSet<OperationKind> = OWN_RUNNERS.iter().map(|(k, _)| *k).collect();
    for kind in OperationKind::ALL {
        match (kind.carried_by(), own.contains(&kind)) {
            (None, false) => panic!(
                "{kind:?} has no Operation implementation the runner carries out \
                 (OperationKind::carried_by)"
            ),
            (Some(by), true) => panic!(
                "{kind:?} is carried out by {by}: take it off OWN_RUNNERS and delete its own \
                 runner"
            ),
            _ => {}
        }
    }
}

#[test]
fn no_module_below_the_runner_takes_an_approval() {
    let operation = rank("operation").expect("the operation layer");
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let mut test_files = BTreeSet::new();
    let mut texts = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable source");
        texts.push((file, without_test_code(&text, file, &mut test_files)));
    }
    let mut taking: BTreeSet<String> = BTreeSet::new();
    for (file, text) in texts {
        let rel = file.strip_prefix(src()).expect("under src/");
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|s| s.trim_end_matches(".rs").to_string())
            .expect("a top-level component");
        // The dispatcher makes approvals; lib.rs and main.rs only name modules.
        if top == "approval" || test_files.contains(file) || file_is_tests(rel) {
            continue;
        }
        let below = rank(&top).is_some_and(|r| r < operation);
        if below && text.contains("ApprovedAction") {
            taking.insert(rel.to_string_lossy().into_owned());
        }
    }
    let own: BTreeSet<String> = OWN_RUNNERS.iter().map(|(_, f)| f.to_string()).collect();
    assert_eq!(
        taking, own,
        "files below src/operation/ that take an ApprovedAction (left) against the runners \
         OWN_RUNNERS still allows (right): a mutation starts through operation::run"
    );
}
