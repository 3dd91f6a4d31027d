//! kubectl and taloscope writing one kubeconfig at the same time lose nothing: 100
//! `kubectl config set-context` beside 100 merges and removals of a cluster's contexts. Both
//! take `<file>.lock` exclusively (client-go tools/clientcmd/loader.go; taloscope before it
//! reads), and a writer that finds it taken fails and tries again. Afterwards every kubectl
//! context is there, and every removal found the entries its merge wrote unchanged or gone (a
//! `set-context` that loaded the file before a merge deletes the merge's entries: client-go's
//! ModifyConfig, tools/clientcmd/config.go, deletes what its stale config lacks).
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use taloscope::cluster_config::{
    ClientCredentials, ContextFiles, ContextsError, OperatorFileError, SecretsBundle,
    merge_contexts, remove_merged,
};

const ROUNDS: usize = 100;
/// Tries of one write while the other side holds the lock.
const TRIES: usize = 2000;

const OPERATOR_KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: corp\n  cluster:\n    server: https://127.0.0.9:6443\ncontexts: []\nusers: []\n";

const CLUSTER_KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: lab\n  cluster:\n    server: https://127.0.0.50:6443\n    certificate-authority-data: Y2E=\ncontexts:\n- name: admin@lab\n  context:\n    cluster: lab\n    namespace: default\n    user: admin@lab\ncurrent-context: admin@lab\nusers:\n- name: admin@lab\n  user:\n    client-certificate-data: Y3J0\n    client-key-data: a2V5\n";

fn locked(e: &ContextsError) -> bool {
    matches!(e, ContextsError::File(OperatorFileError::Locked { .. }))
}

/// Runs `attempt` until it is not refused for a held lock, at most [`TRIES`] times.
fn retried<T>(what: &str, mut attempt: impl FnMut() -> Result<T, ContextsError>) -> T {
    for _ in 0..TRIES {
        match attempt() {
            Ok(v) => return v,
            Err(e) if locked(&e) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => panic!("{what}: {e}"),
        }
    }
    panic!("{what}: the lock stayed taken for {TRIES} tries");
}

fn kubectl_set_context(kubeconfig: &Path, home: &Path, name: &str) {
    for _ in 0..TRIES {
        let out = Command::new("kubectl")
            .args(["config", "set-context", name, "--cluster=corp"])
            .env("KUBECONFIG", kubeconfig)
            .env("HOME", home)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .stdin(Stdio::null())
            .output()
            .expect("kubectl runs (scripts/test installs it)");
        if out.status.success() {
            return;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(".lock"), "kubectl set-context {name}: {err}");
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("kubectl set-context {name}: the lock stayed taken for {TRIES} tries");
}

#[test]
fn kubectl_and_taloscope_never_lose_each_others_updates() {
    taloscope::install_crypto_provider();
    let dir = tempfile::tempdir().unwrap();
    let files = ContextFiles {
        talosconfig: dir.path().join("talosconfig"),
        kubeconfig: dir.path().join("kubeconfig"),
        keep_current_context: false,
        kept_backups: 5,
    };
    std::fs::write(&files.kubeconfig, OPERATOR_KUBECONFIG).unwrap();
    let talos = taloscope::versions::TalosVersion::parse("v1.11.3").unwrap();
    let bundle = SecretsBundle::generate(&talos).unwrap();
    let now = time::OffsetDateTime::now_utc();
    let admin = ClientCredentials::admin(&bundle, now).unwrap();
    let endpoints = vec!["127.0.0.50".to_string()];

    let kubeconfig = files.kubeconfig.clone();
    let home = dir.path().to_path_buf();
    let kubectl = std::thread::spawn(move || {
        for i in 0..ROUNDS {
            kubectl_set_context(&kubeconfig, &home, &format!("race-{i}"));
        }
    });
    let mut last = None;
    for round in 0..ROUNDS {
        let written = retried("merge", || {
            merge_contexts(
                &files,
                "lab",
                &admin,
                &endpoints,
                &endpoints,
                CLUSTER_KUBECONFIG,
                SystemTime::now(),
            )
        });
        let merged = written.merged.expect("the entries merged");
        let removed = retried("remove", || remove_merged(&merged, 5, SystemTime::now()));
        // An entry may be gone: client-go's ModifyConfig (tools/clientcmd/config.go) reads the
        // file again under the lock and deletes every entry of it that the config kubectl
        // loaded *before* the lock lacks ("then from old to new for deletions"), so a
        // set-context that loaded the file before this merge takes the merge's entries out. An
        // entry changed is never kubectl's doing here: the removal must find each one as its
        // merge wrote it, or not at all.
        let changed: Vec<&String> = (removed.left.iter())
            .filter(|left| !left.contains(": no longer in "))
            .collect();
        assert!(
            changed.is_empty(),
            "round {round}: a merged entry was changed: {changed:?}"
        );
        last = Some(merged);
    }
    kubectl.join().expect("kubectl's side");
    // client-go's ModifyConfig (tools/clientcmd/config.go) writes back every context of the
    // config kubectl loaded before it took the lock that the file no longer has (`!exists`): a
    // set-context that loaded the file while a merge's entries were there puts them back after
    // their removal. With kubectl done, one more removal takes them out for good.
    let merged = last.expect("a round ran");
    retried("the last remove", || {
        remove_merged(&merged, 5, SystemTime::now())
    });

    let text = std::fs::read_to_string(&files.kubeconfig).unwrap();
    let config: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let names: Vec<&str> = config["contexts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    for i in 0..ROUNDS {
        let name = format!("race-{i}");
        assert!(names.contains(&name.as_str()), "{name} lost: {names:?}");
    }
    assert!(!names.contains(&"admin@lab"), "{names:?}");
    assert!(!dir.path().join("kubeconfig.lock").exists());
}
