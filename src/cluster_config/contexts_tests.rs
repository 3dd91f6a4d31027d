use std::os::unix::fs::PermissionsExt as _;
use std::time::{Duration, UNIX_EPOCH};

use super::*;
use crate::cluster_config::test_bundle;

const OPERATOR_TALOSCONFIG: &str = "context: prod\ncontexts:\n  prod:\n    endpoints: [127.0.0.2]\n    ca: Y2E=\n    crt: Y3J0\n    key: a2V5\n";

const OPERATOR_KUBECONFIG: &str = "apiVersion: v1\nkind: Config\ncurrent-context: prod\nclusters:\n- name: prod\n  cluster:\n    server: https://127.0.0.2:6443\ncontexts:\n- name: prod\n  context:\n    cluster: prod\n    user: admin@prod\nusers:\n- name: admin@prod\n  user:\n    token: t0ken\n";

/// What the `Kubeconfig` stream gives: upstream names everything after the cluster.
const CLUSTER_KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: lab\n  cluster:\n    server: https://127.0.0.50:6443\n    certificate-authority-data: Y2E=\ncontexts:\n- name: admin@lab\n  context:\n    cluster: lab\n    namespace: default\n    user: admin@lab\ncurrent-context: admin@lab\nusers:\n- name: admin@lab\n  user:\n    client-certificate-data: Y3J0\n    client-key-data: a2V5\n";

fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_780_000_000)
}

fn operator_files(dir: &Path) -> ContextFiles {
    let files = ContextFiles {
        talosconfig: dir.join("talosconfig"),
        kubeconfig: dir.join("kubeconfig"),
    };
    std::fs::write(&files.talosconfig, OPERATOR_TALOSCONFIG).unwrap();
    std::fs::write(&files.kubeconfig, OPERATOR_KUBECONFIG).unwrap();
    std::fs::set_permissions(&files.talosconfig, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::set_permissions(&files.kubeconfig, std::fs::Permissions::from_mode(0o600)).unwrap();
    files
}

fn credentials() -> ClientCredentials {
    let now = time::OffsetDateTime::from_unix_timestamp(1_780_000_000).unwrap();
    ClientCredentials::admin(test_bundle(), now).unwrap()
}

fn merge(files: &ContextFiles, name: &str) -> Result<ContextsWritten, ContextsError> {
    let endpoints = vec!["127.0.0.50".to_string()];
    merge_contexts(
        files,
        name,
        &credentials(),
        &endpoints,
        &endpoints,
        CLUSTER_KUBECONFIG,
        now(),
    )
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn merge_adds_both_contexts_after_backing_up() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    let written = merge(&files, "lab").unwrap();

    let talos_backup = written.talosconfig_backup.unwrap();
    assert_eq!(
        talos_backup,
        dir.path()
            .join("talosconfig.taloscope-backup-20260528T202640Z")
    );
    assert_eq!(
        std::fs::read_to_string(&talos_backup).unwrap(),
        OPERATOR_TALOSCONFIG
    );
    assert_eq!(
        std::fs::read_to_string(written.kubeconfig_backup.unwrap()).unwrap(),
        OPERATOR_KUBECONFIG
    );
    assert_eq!(
        (mode(&files.talosconfig), mode(&files.kubeconfig)),
        (0o640, 0o600)
    );

    let talos_text = std::fs::read_to_string(&files.talosconfig).unwrap();
    let load = crate::discovery::load_talosconfig_texts(&[(files.talosconfig.clone(), talos_text)]);
    let names: Vec<_> = load.contexts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["lab"],
        "prod's fake credentials do not decode; lab's do"
    );
    let tree: ConfigNode =
        serde_saphyr::from_str(&std::fs::read_to_string(&files.talosconfig).unwrap()).unwrap();
    assert_eq!(
        tree.get("context"),
        Some(&ConfigNode::str("prod")),
        "the operator's current context stays"
    );
    assert_eq!(
        tree.at("contexts.prod.crt"),
        Some(&ConfigNode::str("Y3J0")),
        "other contexts are kept as written"
    );

    let kube_text = std::fs::read_to_string(&files.kubeconfig).unwrap();
    let kube = crate::discovery::load_kubeconfig_texts(&[(files.kubeconfig.clone(), kube_text)]);
    assert!(kube.errors.is_empty(), "{:?}", kube.errors);
    let names: Vec<_> = kube.contexts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["prod", "lab"]);
    let merged = kube.merged.unwrap();
    let lab = merged
        .contexts
        .iter()
        .find(|c| c.name == "lab")
        .unwrap()
        .context
        .clone()
        .unwrap();
    assert_eq!(
        (lab.cluster.as_str(), lab.user.as_deref()),
        ("lab", Some("admin@lab"))
    );
    assert_eq!(lab.namespace.as_deref(), Some("default"));
    assert_eq!(merged.current_context.as_deref(), Some("prod"));
    let prod_user = merged
        .auth_infos
        .iter()
        .find(|u| u.name == "admin@prod")
        .unwrap();
    assert!(
        prod_user.auth_info.as_ref().unwrap().token.is_some(),
        "other users keep their tokens"
    );
}

#[test]
fn merge_refuses_a_taken_name_in_either_file_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    let err = merge(&files, "prod").unwrap_err().to_string();
    assert!(
        err.contains("talosconfig") && err.contains("\"prod\""),
        "{err}"
    );
    std::fs::write(&files.talosconfig, "context: x\ncontexts: {}\n").unwrap();
    let err = merge(&files, "prod").unwrap_err().to_string();
    assert!(
        err.contains("kubeconfig") && err.contains("\"prod\""),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&files.kubeconfig).unwrap(),
        OPERATOR_KUBECONFIG
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no backups for a refusal"
    );
}

#[test]
fn merge_into_missing_files_creates_them_private() {
    let dir = tempfile::tempdir().unwrap();
    let files = ContextFiles {
        talosconfig: dir.path().join("new-talosconfig"),
        kubeconfig: dir.path().join("new-kubeconfig"),
    };
    let written = merge(&files, "lab").unwrap();
    assert_eq!(written, ContextsWritten::default());
    assert_eq!(
        (mode(&files.talosconfig), mode(&files.kubeconfig)),
        (0o600, 0o600)
    );
    let text = std::fs::read_to_string(&files.talosconfig).unwrap();
    let load = crate::discovery::load_talosconfig_texts(&[(files.talosconfig.clone(), text)]);
    assert_eq!(load.current_context.as_deref(), Some("lab"));
}

#[test]
fn remove_takes_both_out_with_backups() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    merge(&files, "lab").unwrap();
    let later = now() + Duration::from_secs(60);
    let written = remove_contexts(&files, "lab", later).unwrap();
    let backup = written.kubeconfig_backup.unwrap();
    assert!(
        backup
            .to_string_lossy()
            .ends_with("kubeconfig.taloscope-backup-20260528T202740Z")
    );
    assert!(
        std::fs::read_to_string(&backup)
            .unwrap()
            .contains("admin@lab")
    );
    let kube_text = std::fs::read_to_string(&files.kubeconfig).unwrap();
    assert!(!kube_text.contains("lab"), "{kube_text}");
    assert!(kube_text.contains("admin@prod"));
    let talos_text = std::fs::read_to_string(&files.talosconfig).unwrap();
    assert!(!talos_text.contains("lab"));
    assert!(talos_text.contains("prod"));
    let err = remove_contexts(&files, "lab", later)
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"lab\""), "{err}");
}

#[test]
fn broken_operator_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    std::fs::write(&files.kubeconfig, "clusters: [[[\n").unwrap();
    let err = merge(&files, "lab").unwrap_err().to_string();
    assert!(
        err.contains(&files.kubeconfig.display().to_string()),
        "{err}"
    );
    let bad_new = merge_contexts(
        &operator_files(dir.path()),
        "lab",
        &credentials(),
        &[],
        &[],
        "apiVersion: v1\nkind: Config\n",
        now(),
    )
    .unwrap_err();
    assert!(bad_new.to_string().contains("no context"), "{bad_new}");
}
