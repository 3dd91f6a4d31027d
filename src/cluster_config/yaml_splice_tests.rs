use super::*;

const KUBECONFIG_CRLF: &str = "# the operator's own kubeconfig\r\napiVersion: v1\r\nclusters:\r\n- cluster:\r\n    server: https://127.0.0.9:6443 # corp\r\n  name: corp-lab\r\n# contexts follow\r\ncontexts:\r\n- context:\r\n    cluster: corp-lab\r\n    user: corp-oidc\r\n  name: admin@lab7\r\ncurrent-context: admin@lab7 # keep\r\nkind: Config\r\nusers:\r\n- name: corp-oidc\r\n  user:\r\n    exec:\r\n      apiVersion: client.authentication.k8s.io/v1beta1\r\n      command: kubectl\r\n      args: [oidc-login, get-token]\r\n# trailing comment\r\n";

const ITEM: &str = "name: lab7\ncluster:\n  server: https://127.0.0.50:6443\n";

#[test]
fn a_list_item_added_then_removed_leaves_every_byte() {
    let added = append_list_item(KUBECONFIG_CRLF, "clusters", ITEM).unwrap();
    assert!(
        added.contains("  name: corp-lab\r\n- name: lab7\r\n  cluster:\r\n    server: https://127.0.0.50:6443\r\n# contexts follow\r\n"),
        "{added:?}"
    );
    assert!(!added.replace("\r\n", "").contains('\n'), "{added:?}");
    let removed = remove_list_item(&added, "clusters", "lab7")
        .unwrap()
        .unwrap();
    assert_eq!(removed, KUBECONFIG_CRLF);
}

#[test]
fn an_item_goes_after_the_last_one_at_its_indentation_and_before_a_trailing_comment() {
    let text = "users:\n  - name: a\n    user: {}\n# trailing\n";
    let added = append_list_item(text, "users", "name: b\nuser:\n  token: t\n").unwrap();
    assert_eq!(
        added,
        "users:\n  - name: a\n    user: {}\n  - name: b\n    user:\n      token: t\n# trailing\n"
    );
    assert_eq!(
        remove_list_item(&added, "users", "b").unwrap().unwrap(),
        text
    );
    let last = append_list_item(KUBECONFIG_CRLF, "users", ITEM).unwrap();
    assert!(last.ends_with("get-token]\r\n- name: lab7\r\n  cluster:\r\n    server: https://127.0.0.50:6443\r\n# trailing comment\r\n"), "{last:?}");
    assert_eq!(
        remove_list_item(&last, "users", "lab7").unwrap().unwrap(),
        KUBECONFIG_CRLF
    );
}

#[test]
fn a_missing_or_empty_list_becomes_one_with_the_item() {
    let empty = "apiVersion: v1\ncontexts: []\nkind: Config\nusers: null\n";
    let added = append_list_item(empty, "contexts", ITEM).unwrap();
    assert!(
        added.starts_with("apiVersion: v1\ncontexts:\n- name: lab7\n  cluster:\n"),
        "{added:?}"
    );
    assert!(added.ends_with("kind: Config\nusers: null\n"), "{added:?}");
    let users = append_list_item(&added, "users", ITEM).unwrap();
    assert!(
        users.ends_with(
            "kind: Config\nusers:\n- name: lab7\n  cluster:\n    server: https://127.0.0.50:6443\n"
        ),
        "{users:?}"
    );
    let missing = append_list_item("apiVersion: v1\nkind: Config", "clusters", ITEM).unwrap();
    assert_eq!(
        missing,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: lab7\n  cluster:\n    server: https://127.0.0.50:6443\n"
    );
    let from_nothing = append_list_item("", "clusters", ITEM).unwrap();
    assert!(
        from_nothing.starts_with("clusters:\n- name: lab7\n"),
        "{from_nothing:?}"
    );
    let parsed: serde_json::Value = serde_saphyr::from_str(&users).unwrap();
    assert_eq!(parsed["users"][0]["name"], "lab7");
    assert_eq!(
        parsed["contexts"][0]["cluster"]["server"],
        "https://127.0.0.50:6443"
    );
}

#[test]
fn an_item_not_there_is_none_and_a_flow_list_is_refused() {
    assert_eq!(
        remove_list_item(KUBECONFIG_CRLF, "users", "nosuch").unwrap(),
        None
    );
    assert_eq!(
        remove_list_item(KUBECONFIG_CRLF, "nosuch", "x").unwrap(),
        None
    );
    let flow = "users: [{name: a}]\n";
    assert!(matches!(
        append_list_item(flow, "users", ITEM),
        Err(SpliceError::NotEditable { .. })
    ));
    assert!(matches!(
        remove_list_item(flow, "users", "a"),
        Err(SpliceError::NotEditable { .. })
    ));
    assert!(matches!(
        append_list_item("- a\n- b\n", "users", ITEM),
        Err(SpliceError::NotAMapping)
    ));
}

const TALOSCONFIG: &str = "context: prod # the default\ncontexts:\n    # production first\n    prod:\n        endpoints:\n            - 127.0.0.2\n        ca: Y2E=\n    # lab after\n";

#[test]
fn a_map_entry_added_then_removed_leaves_every_byte() {
    let entry = "endpoints:\n- 127.0.0.50\nca: Y2E=\n";
    let added = add_map_entry(TALOSCONFIG, "contexts", "lab", entry).unwrap();
    assert_eq!(
        added,
        "context: prod # the default\ncontexts:\n    # production first\n    prod:\n        endpoints:\n            - 127.0.0.2\n        ca: Y2E=\n    lab:\n      endpoints:\n      - 127.0.0.50\n      ca: Y2E=\n    # lab after\n"
    );
    assert_eq!(
        remove_map_entry(&added, "contexts", "lab")
            .unwrap()
            .unwrap(),
        TALOSCONFIG
    );
    assert_eq!(
        remove_map_entry(TALOSCONFIG, "contexts", "nosuch").unwrap(),
        None
    );
    let fresh = add_map_entry("", "contexts", "lab", entry).unwrap();
    assert_eq!(
        fresh,
        "contexts:\n  lab:\n    endpoints:\n    - 127.0.0.50\n    ca: Y2E=\n"
    );
    let empty = add_map_entry("context: \"\"\ncontexts: {}\n", "contexts", "lab", entry).unwrap();
    assert_eq!(empty, format!("context: \"\"\n{fresh}"));
}

#[test]
fn a_scalar_set_keeps_its_comment_and_a_removed_key_takes_only_its_line() {
    let set = set_top_scalar(TALOSCONFIG, "context", "lab").unwrap();
    assert!(
        set.starts_with("context: lab # the default\ncontexts:\n"),
        "{set:?}"
    );
    assert_eq!(
        set_top_scalar(&set, "context", "prod").unwrap(),
        TALOSCONFIG
    );
    let crlf = set_top_scalar(KUBECONFIG_CRLF, "current-context", "admin@lab7-1").unwrap();
    assert!(
        crlf.contains("\r\ncurrent-context: admin@lab7-1 # keep\r\n"),
        "{crlf:?}"
    );
    let empty = set_top_scalar("context: \"\"\nx: 1\n", "context", "lab").unwrap();
    assert_eq!(empty, "context: \"lab\"\nx: 1\n", "quoted as it was");
    let single = set_top_scalar("context: 'prod'\n", "context", "it's").unwrap();
    assert_eq!(single, "context: 'it''s'\n");
    let bare = set_top_scalar("current-context:\nx: 1\n", "current-context", "a").unwrap();
    assert_eq!(bare, "current-context: a\nx: 1\n");
    let added = set_top_scalar("kind: Config\n", "current-context", "admin@lab").unwrap();
    assert_eq!(added, "kind: Config\ncurrent-context: admin@lab\n");
    assert_eq!(
        remove_top_key(&added, "current-context").unwrap(),
        "kind: Config\n"
    );
    assert_eq!(remove_top_key("a: 1\n", "b").unwrap(), "a: 1\n");
    assert_eq!(scalar("admin@lab"), "admin@lab");
    for value in ["yes", "", "a: b", "#x", "null", "0644", "- x"] {
        let back: String = serde_saphyr::from_str(&scalar(value)).unwrap();
        assert_eq!(back, value);
    }
}
