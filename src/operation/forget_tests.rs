use super::*;
use crate::fleet::{NodeSource, NodeStatus};

const CRLF_TALOSCONFIG: &str = "# the operator's own notes\r\ncontext: capi-work\r\ncontexts:\r\n    capi-work:\r\n        endpoints:\r\n            - 127.10.1.1   # cp-1\r\n            - 127.10.1.5:50000\r\n        nodes:\r\n            # control planes first\r\n            - 127.10.1.1\r\n            - 127.10.1.5 # the stuck one\r\n            - 127.10.1.9\r\n        ca: Y2E=\r\n    other:\r\n        endpoints: [127.10.1.5]\r\n        nodes:\r\n            - 127.10.1.5\r\n";

#[test]
fn the_edit_keeps_every_other_byte_comments_and_crlf_included() {
    let out = forget_in_text(
        CRLF_TALOSCONFIG,
        "capi-work",
        "127.10.1.5",
        Some("127.10.1.5:50000"),
    )
    .unwrap()
    .expect("the address is listed");
    let expected = CRLF_TALOSCONFIG
        .replacen("            - 127.10.1.5:50000\r\n", "", 1)
        .replacen("            - 127.10.1.5 # the stuck one\r\n", "", 1);
    assert_eq!(out, expected);
    // The other context, which names the same address, is untouched.
    assert!(out.ends_with("    other:\r\n        endpoints: [127.10.1.5]\r\n        nodes:\r\n            - 127.10.1.5\r\n"));
}

#[test]
fn an_address_the_context_does_not_list_is_no_edit() {
    let out = forget_in_text(CRLF_TALOSCONFIG, "capi-work", "127.10.1.7", None).unwrap();
    assert_eq!(out, None);
}

fn context(nodes: &[&str], endpoints: &[&str]) -> TalosContext {
    TalosContext {
        name: "capi-work".into(),
        file: PathBuf::from("/nonexistent-dir-of-the-test/talosconfig"),
        endpoints: endpoints.iter().map(|e| e.to_string()).collect(),
        nodes: nodes.iter().map(|n| n.to_string()).collect(),
        ca_pem: String::new(),
        crt_pem: String::new(),
        key_pem: String::new(),
    }
}

fn status_with(node: NodeStatus) -> ClusterStatus {
    ClusterStatus {
        name: "capi-work".into(),
        nodes: vec![node],
        ..Default::default()
    }
}

fn node(address: &str, error: Option<&str>, not_a_member: bool) -> NodeStatus {
    NodeStatus {
        name: address.into(),
        address: address.into(),
        source: NodeSource::Talosconfig,
        error: error.map(str::to_string),
        not_a_member,
        ..Default::default()
    }
}

fn verdict(guards: &[Guard], id: GuardId) -> &Guard {
    guards.iter().find(|g| g.id == id).expect("the guard")
}

#[test]
fn a_node_that_answers_or_is_still_known_is_refused_and_a_gone_one_passes() {
    let ctx = context(
        &["127.10.1.1", "127.10.1.5"],
        &["127.10.1.1", "127.10.1.5:50000"],
    );
    let gone = status_with(node("127.10.1.5", Some("connection refused"), true));
    let plan = ForgetPlan::new("capi-work", Some(&ctx), &gone, "127.10.1.5", 5).unwrap();
    assert_eq!(plan.endpoint.as_deref(), Some("127.10.1.5:50000"));
    assert_eq!(plan.lists(), "nodes and endpoints");
    let guards = forget_guards(&plan, &gone);
    assert!(
        !verdict(&guards, GuardId::NotAMember).blocks(&[]),
        "{guards:?}"
    );
    assert!(!verdict(&guards, GuardId::OtherNodesLeft).blocks(&[]));
    assert!(!verdict(&guards, GuardId::ClientRole).blocks(&[]));

    let answering = status_with(node("127.10.1.5", None, false));
    let refused = verdict(&forget_guards(&plan, &answering), GuardId::NotAMember).clone();
    assert!(refused.blocks(&[]));
    assert!(
        refused.reason.contains("answers the Talos API"),
        "{}",
        refused.reason
    );

    let down = status_with(node("127.10.1.5", Some("connection refused"), false));
    let refused = verdict(&forget_guards(&plan, &down), GuardId::NotAMember).clone();
    assert!(refused.blocks(&[]));
    assert!(
        refused.reason.contains("etcd or Kubernetes"),
        "{}",
        refused.reason
    );
}

#[test]
fn the_last_node_or_endpoint_of_a_context_is_refused() {
    let gone = status_with(node("127.10.1.5", Some("connection refused"), true));
    let ctx = context(&["127.10.1.5"], &["127.10.1.1"]);
    let plan = ForgetPlan::new("capi-work", Some(&ctx), &gone, "127.10.1.5", 5).unwrap();
    let last = verdict(&forget_guards(&plan, &gone), GuardId::OtherNodesLeft).clone();
    assert!(last.blocks(&[]));
    assert!(last.reason.contains("last node"), "{}", last.reason);

    let ctx = context(&["127.10.1.1", "127.10.1.5"], &["127.10.1.5"]);
    let plan = ForgetPlan::new("capi-work", Some(&ctx), &gone, "127.10.1.5", 5).unwrap();
    let last = verdict(&forget_guards(&plan, &gone), GuardId::OtherNodesLeft).clone();
    assert!(last.reason.contains("last endpoint"), "{}", last.reason);
}

#[test]
fn an_address_the_context_does_not_name_is_an_error_naming_the_context_and_file() {
    let ctx = context(&["127.10.1.1"], &["127.10.1.1"]);
    let err = ForgetPlan::new(
        "capi-work",
        Some(&ctx),
        &ClusterStatus::default(),
        "127.10.1.7",
        5,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("127.10.1.7") && err.contains("capi-work"),
        "{err}"
    );
    assert!(
        err.contains("/nonexistent-dir-of-the-test/talosconfig"),
        "{err}"
    );
}

#[test]
fn the_file_is_backed_up_then_edited_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("talosconfig");
    std::fs::write(&file, CRLF_TALOSCONFIG).unwrap();
    let ctx = TalosContext {
        file: file.clone(),
        ..context(
            &["127.10.1.1", "127.10.1.5", "127.10.1.9"],
            &["127.10.1.1", "127.10.1.5:50000"],
        )
    };
    let gone = status_with(node("127.10.1.5", Some("connection refused"), true));
    let plan = ForgetPlan::new("capi-work", Some(&ctx), &gone, "127.10.1.5", 5).unwrap();
    let said = std::sync::Mutex::new(Vec::new());
    let backup = forget_in_file(&plan, SystemTime::UNIX_EPOCH, |l| {
        said.lock().unwrap().push(l)
    })
    .unwrap();
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), CRLF_TALOSCONFIG);
    let now = std::fs::read_to_string(&file).unwrap();
    assert!(
        !now.contains("- 127.10.1.5 #") && !now.contains("127.10.1.5:50000"),
        "{now}"
    );
    assert!(now.contains("# control planes first\r\n"), "{now}");
    let said = said.into_inner().unwrap();
    assert!(said[0].contains(&backup.display().to_string()), "{said:?}");
    assert!(
        !dir.path().join("talosconfig.lock").exists(),
        "the lock is let go"
    );
}

#[test]
fn a_flow_list_loses_the_item_and_one_separator() {
    let text = "contexts:\n    capi-work:\n        endpoints: [\"127.10.1.1:50000\", \"127.10.1.5:50000\"]\n        nodes: [\"127.10.1.1\", \"127.10.1.5\", \"127.10.1.9\"]\n";
    let out = forget_in_text(text, "capi-work", "127.10.1.5", Some("127.10.1.5:50000"))
        .unwrap()
        .unwrap();
    assert_eq!(
        out,
        "contexts:\n    capi-work:\n        endpoints: [\"127.10.1.1:50000\"]\n        nodes: [\"127.10.1.1\", \"127.10.1.9\"]\n"
    );
    let first = forget_in_text(text, "capi-work", "127.10.1.1", None)
        .unwrap()
        .unwrap();
    assert!(
        first.contains("nodes: [\"127.10.1.5\", \"127.10.1.9\"]"),
        "{first}"
    );
}
