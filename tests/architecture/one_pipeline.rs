//! Every operation goes through the one runner (`taloscope::operation::run`): each kind names
//! the `Operation` implementation that carries it out, and no module below the operation layer
//! takes the dispatcher's `ApprovedAction` (a runner of its own, starting a mutation without
//! the runner's guards, journal, cancel and audit). The kinds whose runners are still their
//! own are listed here with the file that runs them: the list must shrink, never grow.
use std::collections::BTreeSet;

use taloscope::operation::OperationKind;

use super::{library_sources, rank};

/// The kinds not yet carried out by the runner, and the domain runner each one has instead.
const OWN_RUNNERS: &[(OperationKind, &str)] = &[];

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
    let taking: BTreeSet<String> = library_sources()
        .into_iter()
        // The dispatcher makes approvals.
        .filter(|(_, top, text)| {
            top != "approval"
                && rank(top).is_some_and(|r| r < operation)
                && text.contains("ApprovedAction")
        })
        .map(|(rel, _, _)| rel.to_string_lossy().into_owned())
        .collect();
    let own: BTreeSet<String> = OWN_RUNNERS.iter().map(|(_, f)| f.to_string()).collect();
    assert_eq!(
        taking, own,
        "files below src/operation/ that take an ApprovedAction (left) against the runners \
         OWN_RUNNERS still allows (right): a mutation starts through operation::run"
    );
}
