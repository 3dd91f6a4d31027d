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
        keep_current_context: false,
        kept_backups: 5,
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

fn read_kubeconfig(file: &Path) -> Result<Kubeconfig, ContextsError> {
    parse_kubeconfig(file, &read_text(file)?)
}

fn read_talosconfig(file: &Path) -> Result<ConfigNode, ContextsError> {
    parse_talosconfig(file, &read_text(file)?)
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
        Some(&ConfigNode::str("lab")),
        "the new context is current, as `talosctl config merge` makes it"
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
    assert_eq!(
        names,
        ["prod", "admin@lab"],
        "named as talosctl kubeconfig names it"
    );
    let merged = kube.merged.unwrap();
    let lab = merged
        .contexts
        .iter()
        .find(|c| c.name == "admin@lab")
        .unwrap()
        .context
        .clone()
        .unwrap();
    assert_eq!(
        (lab.cluster.as_str(), lab.user.as_deref()),
        ("lab", Some("admin@lab"))
    );
    assert_eq!(lab.namespace.as_deref(), Some("default"));
    assert_eq!(merged.current_context.as_deref(), Some("admin@lab"));
    let entries = written.merged.unwrap();
    assert_eq!(entries.previous_kube_context.as_deref(), Some("prod"));
    assert_eq!(entries.previous_talos_context.as_deref(), Some("prod"));
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
fn a_taken_talos_context_is_refused_and_taken_kube_names_get_a_number() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    let err = merge(&files, "prod").unwrap_err().to_string();
    assert!(
        err.contains("talosconfig") && err.contains("\"prod\""),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no backups for a refusal"
    );
    std::fs::write(&files.talosconfig, "context: x\ncontexts: {}\n").unwrap();
    let written = merge(&files, "prod").unwrap();
    let m = written.merged.unwrap();
    assert_eq!(
        (
            m.kube_context.name.as_str(),
            m.kube_cluster.name.as_str(),
            m.kube_user.name.as_str()
        ),
        ("admin@prod", "prod-1", "admin@prod-1"),
        "the operator's cluster prod and user admin@prod are kept; ours are renamed"
    );
    let kube = read_kubeconfig(&files.kubeconfig).unwrap();
    let prod_user = kube.auth_infos.iter().find(|u| u.name == "admin@prod");
    assert!(
        prod_user
            .unwrap()
            .auth_info
            .as_ref()
            .unwrap()
            .token
            .is_some()
    );
}

#[test]
fn merge_into_missing_files_creates_them_private() {
    let dir = tempfile::tempdir().unwrap();
    let files = ContextFiles {
        talosconfig: dir.path().join("new-talosconfig"),
        kubeconfig: dir.path().join("new-kubeconfig"),
        keep_current_context: false,
        kept_backups: 5,
    };
    let written = merge(&files, "lab").unwrap();
    assert_eq!(
        (written.talosconfig_backup, written.kubeconfig_backup),
        (None, None)
    );
    assert_eq!(
        (mode(&files.talosconfig), mode(&files.kubeconfig)),
        (0o600, 0o600)
    );
    let text = std::fs::read_to_string(&files.talosconfig).unwrap();
    let load = crate::discovery::load_talosconfig_texts(&[(files.talosconfig.clone(), text)]);
    assert_eq!(load.current_context.as_deref(), Some("lab"));
}

#[test]
fn remove_by_name_takes_both_out_with_backups_and_no_empty_current_context() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    let later = now() + Duration::from_secs(60);
    let written = remove_contexts(&files, "prod", later).unwrap();
    let backup = written.kubeconfig_backup.unwrap();
    assert!(
        backup
            .to_string_lossy()
            .ends_with("kubeconfig.taloscope-backup-20260528T202740Z")
    );
    assert_eq!(
        std::fs::read_to_string(&backup).unwrap(),
        OPERATOR_KUBECONFIG
    );
    let kube_text = std::fs::read_to_string(&files.kubeconfig).unwrap();
    assert!(!kube_text.contains("prod"), "{kube_text}");
    let talos: ConfigNode =
        serde_saphyr::from_str(&std::fs::read_to_string(&files.talosconfig).unwrap()).unwrap();
    assert_eq!(talos.get("context"), None, "no `context: \"\"` left behind");
    let err = remove_contexts(&files, "prod", later)
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"prod\""), "{err}");
}

/// The kubeconfig: `admin@lab7` is the operator's (cluster corp-lab, an OIDC exec
/// user) and current. A create of lab7 and its delete leave every one of its entries and its
/// current context as they were.
const CORP_KUBECONFIG: &str = "apiVersion: v1\nkind: Config\ncurrent-context: admin@lab7\nclusters:\n- name: corp-lab\n  cluster:\n    server: https://127.0.0.9:6443\ncontexts:\n- name: admin@lab7\n  context:\n    cluster: corp-lab\n    user: corp-oidc\nusers:\n- name: corp-oidc\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: kubectl\n      args: [oidc-login, get-token, --oidc-issuer-url=https://sso.corp.example]\n      interactiveMode: IfAvailable\n";

#[test]
fn delete_removes_exactly_what_the_create_merged_and_restores_the_current_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    std::fs::write(&files.kubeconfig, CORP_KUBECONFIG).unwrap();
    let before_kube = read_kubeconfig(&files.kubeconfig).unwrap();
    let before_talos = read_talosconfig(&files.talosconfig).unwrap();
    let m = merge(&files, "lab7").unwrap().merged.unwrap();
    assert_eq!(
        m.kube_context.name, "admin@lab7-1",
        "the corp context is not taken over"
    );
    assert_eq!(m.kube_cluster.name, "lab7");
    let during = read_kubeconfig(&files.kubeconfig).unwrap();
    assert_eq!(during.current_context.as_deref(), Some("admin@lab7-1"));

    let later = now() + Duration::from_secs(60);
    let written = remove_merged(&m, 5, later).unwrap();
    assert!(written.left.is_empty(), "{:?}", written.left);
    let after_kube = read_kubeconfig(&files.kubeconfig).unwrap();
    assert_eq!(
        serde_json::to_value(&after_kube).unwrap(),
        serde_json::to_value(&before_kube).unwrap(),
        "every corp entry and the current context as they were"
    );
    assert_eq!(read_talosconfig(&files.talosconfig).unwrap(), before_talos);
}

/// The same kubeconfig as the operator's editor keeps it: comments (own lines and after
/// values), kubectl's key order, CRLF line endings.
const CORP_KUBECONFIG_CRLF: &str = "# corp clusters: managed by hand, do not reformat\r\napiVersion: v1\r\nclusters:\r\n- cluster:\r\n    server: https://127.0.0.9:6443 # via the VPN\r\n  name: corp-lab\r\ncontexts:\r\n- context:\r\n    cluster: corp-lab\r\n    user: corp-oidc\r\n  name: admin@lab7\r\ncurrent-context: admin@lab7 # the SSO one\r\nkind: Config\r\npreferences: {}\r\nusers:\r\n- name: corp-oidc\r\n  user:\r\n    exec:\r\n      apiVersion: client.authentication.k8s.io/v1beta1\r\n      args:\r\n      - oidc-login\r\n      - get-token\r\n      command: kubectl\r\n      interactiveMode: IfAvailable\r\n# end of corp\r\n";

const CORP_TALOSCONFIG_CRLF: &str = "# talosctl contexts\r\ncontext: prod\r\ncontexts:\r\n    prod: # the production cluster\r\n        endpoints:\r\n            - 127.0.0.2\r\n        ca: Y2E=\r\n        crt: Y3J0\r\n        key: a2V5\r\n";

#[test]
fn create_then_delete_leaves_every_byte_of_a_commented_crlf_file() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    std::fs::write(&files.kubeconfig, CORP_KUBECONFIG_CRLF).unwrap();
    std::fs::write(&files.talosconfig, CORP_TALOSCONFIG_CRLF).unwrap();
    let m = merge(&files, "lab7").unwrap().merged.unwrap();
    assert_eq!(m.kube_context.name, "admin@lab7-1");

    let kube_during = std::fs::read_to_string(&files.kubeconfig).unwrap();
    let talos_during = std::fs::read_to_string(&files.talosconfig).unwrap();
    for text in [&kube_during, &talos_during] {
        assert!(
            !text.replace("\r\n", "").contains('\n'),
            "CRLF kept: {text:?}"
        );
    }
    for line in CORP_KUBECONFIG_CRLF
        .split("\r\n")
        .filter(|l| !l.starts_with("current-context"))
    {
        assert!(
            kube_during.contains(line),
            "{line:?} kept in {kube_during:?}"
        );
    }
    assert!(kube_during.contains("current-context: admin@lab7-1 # the SSO one\r\n"));
    assert!(talos_during.starts_with("# talosctl contexts\r\ncontext: lab7\r\ncontexts:\r\n    prod: # the production cluster\r\n"), "{talos_during:?}");
    let during = read_kubeconfig(&files.kubeconfig).unwrap();
    let user = during
        .auth_infos
        .iter()
        .find(|u| u.name == "admin@lab7")
        .unwrap();
    assert!(user.auth_info.as_ref().unwrap().client_key_data.is_some());
    let talos = read_talosconfig(&files.talosconfig).unwrap();
    assert!(
        talos.at("contexts.lab7.endpoints").is_some(),
        "{talos_during}"
    );

    let written = remove_merged(&m, 5, now() + Duration::from_secs(60)).unwrap();
    assert!(written.left.is_empty(), "{:?}", written.left);
    assert_eq!(
        std::fs::read_to_string(&files.kubeconfig).unwrap(),
        CORP_KUBECONFIG_CRLF
    );
    assert_eq!(
        std::fs::read_to_string(&files.talosconfig).unwrap(),
        CORP_TALOSCONFIG_CRLF
    );
}

#[test]
fn an_entry_changed_since_the_create_is_left_and_said_and_the_rest_removed() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    let m = merge(&files, "lab").unwrap().merged.unwrap();
    let mut kube = read_kubeconfig(&files.kubeconfig).unwrap();
    let user = kube
        .auth_infos
        .iter_mut()
        .find(|u| u.name == "admin@lab")
        .unwrap();
    user.auth_info.as_mut().unwrap().username = Some("someone-else".into());
    std::fs::write(&files.kubeconfig, serde_saphyr::to_string(&kube).unwrap()).unwrap();

    let written = remove_merged(&m, 5, now() + Duration::from_secs(60)).unwrap();
    assert_eq!(written.left.len(), 1, "{:?}", written.left);
    assert!(
        written.left[0].starts_with("kube user admin@lab: changed since the create"),
        "{:?}",
        written.left
    );
    let kube = read_kubeconfig(&files.kubeconfig).unwrap();
    assert!(kube.auth_infos.iter().any(|u| u.name == "admin@lab"));
    assert!(!kube.contexts.iter().any(|c| c.name == "admin@lab"));
    assert!(!kube.clusters.iter().any(|c| c.name == "lab"));
    assert_eq!(kube.current_context.as_deref(), Some("prod"));
}

#[test]
fn keep_current_context_leaves_the_operators_current_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let files = ContextFiles {
        keep_current_context: true,
        kept_backups: 5,
        ..operator_files(dir.path())
    };
    let m = merge(&files, "lab").unwrap().merged.unwrap();
    assert_eq!(
        (m.previous_kube_context, m.previous_talos_context),
        (None, None)
    );
    let kube = read_kubeconfig(&files.kubeconfig).unwrap();
    assert_eq!(kube.current_context.as_deref(), Some("prod"));
    let talos = read_talosconfig(&files.talosconfig).unwrap();
    assert_eq!(talos.get("context"), Some(&ConfigNode::str("prod")));
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

#[test]
fn a_held_lock_refuses_the_merge_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    let lock = dir.path().join("kubeconfig.lock");
    std::fs::write(&lock, "").unwrap();
    let err = merge(&files, "lab").unwrap_err().to_string();
    assert!(err.contains("kubeconfig.lock exists"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&files.kubeconfig).unwrap(),
        OPERATOR_KUBECONFIG
    );
    assert_eq!(
        std::fs::read_to_string(&files.talosconfig).unwrap(),
        OPERATOR_TALOSCONFIG
    );
    assert!(lock.exists(), "another writer's lock is left alone");
    assert!(
        !dir.path().join("talosconfig.lock").exists(),
        "ours is removed"
    );
    std::fs::remove_file(&lock).unwrap();
    merge(&files, "lab").unwrap();
    assert!(!lock.exists());
}

#[test]
fn a_symlinked_kubeconfig_stays_a_link_and_its_target_is_written_with_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    let dotfiles = dir.path().join("dotfiles");
    std::fs::create_dir(&dotfiles).unwrap();
    std::fs::rename(&files.kubeconfig, dotfiles.join("kubeconfig")).unwrap();
    std::os::unix::fs::symlink("dotfiles/kubeconfig", &files.kubeconfig).unwrap();
    merge(&files, "lab").unwrap();
    let link = std::fs::symlink_metadata(&files.kubeconfig).unwrap();
    assert!(link.file_type().is_symlink(), "the link is kept");
    let text = std::fs::read_to_string(dotfiles.join("kubeconfig")).unwrap();
    assert!(text.contains("admin@lab"), "{text}");
    assert_eq!(mode(&dotfiles.join("kubeconfig")), 0o600);
}

#[test]
fn a_read_only_file_is_refused_and_a_file_others_can_read_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    std::fs::set_permissions(&files.kubeconfig, std::fs::Permissions::from_mode(0o400)).unwrap();
    let err = merge(&files, "lab").unwrap_err().to_string();
    assert!(err.contains("read-only (mode 0400)"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&files.kubeconfig).unwrap(),
        OPERATOR_KUBECONFIG
    );

    std::fs::set_permissions(&files.kubeconfig, std::fs::Permissions::from_mode(0o644)).unwrap();
    let written = merge(&files, "lab").unwrap();
    assert_eq!(mode(&files.kubeconfig), 0o644, "the mode is kept");
    assert_eq!(written.warnings.len(), 2, "{:?}", written.warnings);
    assert!(
        written.warnings[1].contains("mode 0644") && written.warnings[1].contains("chmod 600"),
        "{:?}",
        written.warnings
    );
}

#[test]
fn a_missing_directory_is_made_as_kubectl_makes_it_and_backups_are_pruned_to_the_kept_count() {
    for kept in [5, 2] {
        let dir = tempfile::tempdir().unwrap();
        let files = ContextFiles {
            talosconfig: dir.path().join("talos/config"),
            kubeconfig: dir.path().join("kube/work/config"),
            keep_current_context: false,
            kept_backups: kept,
        };
        let mut m = merge(&files, "lab").unwrap().merged.unwrap();
        assert!(files.kubeconfig.exists() && files.talosconfig.exists());
        for n in 1..=4u64 {
            let at = now() + Duration::from_secs(60 * n);
            let written = remove_merged(&m, kept, at).unwrap();
            assert!(written.left.is_empty(), "{:?}", written.left);
            assert!(written.kubeconfig_backup.is_some());
            let again = merge(&files, "lab").unwrap().merged.unwrap();
            assert_eq!(
                again.kube_context, m.kube_context,
                "the same entry, the same fingerprint"
            );
            m = again;
        }
        let backups = std::fs::read_dir(dir.path().join("kube/work"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains("taloscope-backup-")
            })
            .count();
        assert_eq!(backups, kept, "7 backups made, the newest {kept} kept");
    }
}

#[test]
fn a_lock_left_by_a_killed_taloscope_run_is_taken_over_and_kubectls_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    let lock = dir.path().join("kubeconfig.lock");
    // pid 0 on this host is no process: the run that wrote this lock is gone.
    let who = crate::run_holder::RunHolder::this_process().who;
    std::fs::write(&lock, format!("{who}/0-1")).unwrap();
    merge(&files, "lab").unwrap();
    assert!(!lock.exists());
    std::fs::write(&lock, "").unwrap();
    let err = merge(&files, "lab2").unwrap_err().to_string();
    assert!(err.contains("kubeconfig.lock exists"), "{err}");
}

#[test]
fn relative_paths_stay_relative_to_the_file_that_holds_them() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    std::fs::write(
        &files.kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: corp\n  cluster:\n    server: https://127.0.0.9:6443\n    certificate-authority: certs/ca.crt\ncontexts:\n- name: corp\n  context:\n    cluster: corp\n    user: me\nusers:\n- name: me\n  user:\n    client-certificate: certs/me.crt\n    client-key: ~/key.pem\n",
    )
    .unwrap();
    merge(&files, "lab").unwrap();
    let kube = read_kubeconfig(&files.kubeconfig).unwrap();
    let me = kube.auth_infos.iter().find(|u| u.name == "me").unwrap();
    let me = me.auth_info.as_ref().unwrap();
    assert_eq!(me.client_key.as_deref(), Some("~/key.pem"));
    assert_eq!(me.client_certificate.as_deref(), Some("certs/me.crt"));
    let corp = kube.clusters.iter().find(|c| c.name == "corp").unwrap();
    assert_eq!(
        corp.cluster
            .as_ref()
            .unwrap()
            .certificate_authority
            .as_deref(),
        Some("certs/ca.crt")
    );
}

#[test]
fn check_merge_refuses_at_plan_time_what_the_merge_would_refuse_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    let names = check_merge(&files, "lab").unwrap();
    assert_eq!(
        (names.context.as_str(), names.cluster.as_str()),
        ("admin@lab", "lab")
    );
    let taken = check_merge(&files, "prod").unwrap_err().to_string();
    assert!(taken.contains("talos context named \"prod\""), "{taken}");

    // kubectl's lock, held.
    let lock = dir.path().join("kubeconfig.lock");
    std::fs::write(&lock, "").unwrap();
    let locked = check_merge(&files, "lab").unwrap_err().to_string();
    assert!(locked.contains("kubeconfig.lock exists"), "{locked}");
    std::fs::remove_file(&lock).unwrap();

    // A read-only file.
    std::fs::set_permissions(&files.kubeconfig, std::fs::Permissions::from_mode(0o400)).unwrap();
    let read_only = check_merge(&files, "lab").unwrap_err().to_string();
    assert!(read_only.contains("read-only (mode 0400)"), "{read_only}");
    std::fs::set_permissions(&files.kubeconfig, std::fs::Permissions::from_mode(0o600)).unwrap();

    // A list the lossless edit cannot extend, and a talosconfig that does not load.
    std::fs::write(
        &files.kubeconfig,
        "apiVersion: v1\nkind: Config\nusers: [{name: a, user: {}}]\n",
    )
    .unwrap();
    let flow = check_merge(&files, "lab").unwrap_err().to_string();
    assert!(
        flow.contains("cannot edit") && flow.contains("`users`"),
        "{flow}"
    );
    std::fs::write(&files.kubeconfig, OPERATOR_KUBECONFIG).unwrap();
    std::fs::write(&files.talosconfig, "contexts: [1, 2]\n").unwrap();
    let broken = check_merge(&files, "lab").unwrap_err().to_string();
    assert!(broken.contains("talosconfig"), "{broken}");

    // A missing directory passes: the merge makes it, as kubectl does; nothing is written here.
    let missing = ContextFiles {
        talosconfig: dir.path().join("talos/config"),
        kubeconfig: dir.path().join("work/sub/config"),
        keep_current_context: false,
        kept_backups: 5,
    };
    check_merge(&missing, "lab").unwrap();
    assert!(!dir.path().join("work").exists());
    assert!(!dir.path().join("talos").exists());
    // Under a file, a directory cannot be made.
    let under_file = ContextFiles {
        kubeconfig: files.talosconfig.join("config"),
        ..missing.clone()
    };
    let err = check_merge(&under_file, "lab").unwrap_err().to_string();
    assert!(err.contains("is not a directory"), "{err}");
}

#[test]
fn a_failed_second_write_puts_the_first_file_back() {
    let dir = tempfile::tempdir().unwrap();
    let files = operator_files(dir.path());
    // The kubeconfig is a symlink into a directory that does not exist: its lock is taken
    // beside the link, its write fails after the talosconfig's. The plan refuses it first.
    std::fs::remove_file(&files.kubeconfig).unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone/config"), &files.kubeconfig).unwrap();
    let planned = check_merge(&files, "lab").unwrap_err().to_string();
    assert!(
        planned.contains("a directory that does not exist"),
        "{planned}"
    );
    let err = merge(&files, "lab").unwrap_err().to_string();
    assert!(err.contains("cannot write it"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&files.talosconfig).unwrap(),
        OPERATOR_TALOSCONFIG,
        "no talos context without its kube one"
    );
}
