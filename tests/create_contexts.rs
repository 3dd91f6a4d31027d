//! Issue 27's "own what you wrote" and issue 29's naming, end to end on the sim: the operator's
//! kubeconfig already has an `admin@lab` context of another cluster (cluster corp-lab, an OIDC
//! exec user) and it is current. `taloscope create --name lab` merges its own entries beside
//! it (context `admin@lab-1`, as `talosctl kubeconfig` renames a taken name; cluster `lab` and
//! user `admin@lab` were free) and makes them current, so
//! `kubectl config current-context` names the new cluster and the talosconfig's current context
//! is `lab`; `taloscope delete --context lab` removes exactly those entries, the corp ones and
//! the current contexts are as they were, and the journal's record is what was removed. The
//! cluster's secrets bundle goes with it (backed up first), and a bundle left at the name
//! refuses a new create at plan time unless `--with-secrets` names it.
mod create_common;
mod provision_common;
mod talos_common;

use create_common::{DELETE_ARGS, create_args};
use provision_common::{config_file, state_dir};
use talos_common::{Sim, scenario, start};

/// The corp entries appended to the sim's kubeconfig, and made current. The exec user's
/// command does not exist: nothing here may run it.
const CORP: &[(&str, &str)] = &[
    (
        "clusters",
        r#"{"name":"corp-lab","cluster":{"server":"https://127.0.0.9:6443"}}"#,
    ),
    (
        "contexts",
        r#"{"name":"admin@lab","context":{"cluster":"corp-lab","user":"corp-oidc"}}"#,
    ),
    (
        "users",
        r#"{"name":"corp-oidc","user":{"exec":{"apiVersion":"client.authentication.k8s.io/v1beta1","command":"corp-sso-helper","args":["get-token","--oidc-issuer-url=https://sso.corp.example"],"interactiveMode":"Never"}}}"#,
    ),
];

/// `kubectl config ARGS` on the sim's kubeconfig, its stdout.
fn kubectl(sim: &Sim, args: &[&str]) -> String {
    let out = std::process::Command::new("kubectl")
        .arg("config")
        .args(args)
        .env("KUBECONFIG", sim.fleet.kubeconfig_path())
        .env("HOME", sim.dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("kubectl runs (scripts/test installs it)");
    assert!(
        out.status.success(),
        "kubectl config {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The kubeconfig as kubectl reads it, credentials and all.
fn kube_view(sim: &Sim) -> serde_json::Value {
    serde_json::from_str(&kubectl(sim, &["view", "--raw", "-o", "json"])).expect("JSON")
}

/// The operator's file with the corp entries added and `admin@lab` current.
fn add_corp_entries(sim: &Sim) {
    let path = sim.fleet.kubeconfig_path();
    let text = std::fs::read_to_string(&path).expect("the sim's kubeconfig");
    let mut config: serde_json::Value = serde_saphyr::from_str(&text).expect("YAML");
    for (list, entry) in CORP {
        let entry: serde_json::Value = serde_json::from_str(entry).unwrap();
        config[*list].as_array_mut().expect(list).push(entry);
    }
    config["current-context"] = "admin@lab".into();
    std::fs::write(&path, serde_saphyr::to_string(&config).unwrap()).unwrap();
}

fn talos_current(sim: &Sim) -> String {
    let text = std::fs::read_to_string(sim.fleet.talosconfig_path()).unwrap();
    let config: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    config["context"].as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_then_delete_owns_exactly_its_entries_beside_an_older_admin_at_lab() {
    let sim = start(scenario("healthy")).await;
    add_corp_entries(&sim);
    let before_kube = kube_view(&sim);
    let before_talos_current = talos_current(&sim);
    assert_eq!(kubectl(&sim, &["current-context"]).trim(), "admin@lab");

    let r = create_common::run(&sim, &create_args("sim-opennebula", 1, 0, "v1.11.3", &[])).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        kubectl(&sim, &["current-context"]).trim(),
        "admin@lab-1",
        "the new context is current, renamed past the operator's admin@lab"
    );
    assert_eq!(talos_current(&sim), "lab");
    let journal = state_dir(&sim).join("clusters/lab.json");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&journal).unwrap()).unwrap();
    let merged = &record["merged"];
    assert_eq!(merged["kube_context"]["name"], "admin@lab-1", "{record}");
    assert_eq!(merged["kube_cluster"]["name"], "lab");
    assert_eq!(
        merged["kube_user"]["name"], "admin@lab",
        "no user of that name before"
    );
    assert_eq!(merged["talos_context"]["name"], "lab");
    assert_eq!(merged["previous_kube_context"], "admin@lab");
    let corp_context = |view: &serde_json::Value| {
        view["contexts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "admin@lab")
            .cloned()
    };
    assert_eq!(
        corp_context(&kube_view(&sim)),
        corp_context(&before_kube),
        "the corp context is untouched"
    );

    let plan = create_common::run(
        &sim,
        &["delete", "--context", "lab", "--plan"].map(String::from),
    )
    .await;
    assert!(
        plan.stdout
            .contains("KUBECTX    admin@lab-1, cluster lab, user admin@lab "),
        "{}{}",
        plan.stdout,
        plan.stderr
    );
    let r = provision_common::run(&sim, &config_file(&sim), &DELETE_ARGS).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("removed talos context lab, kube context admin@lab-1, kube cluster lab, kube user admin@lab;"),
        "{}",
        r.stdout
    );
    assert_eq!(
        kube_view(&sim),
        before_kube,
        "every entry of the operator's kubeconfig, and its current context, as before"
    );
    assert_eq!(talos_current(&sim), before_talos_current);

    // The deleted cluster's keys go with it: the bundle is backed up (listed), then removed,
    // and a bundle left at the name (put back by hand) refuses a new create at plan time.
    let bundle = state_dir(&sim).join("clusters/lab.secrets.yaml");
    assert!(!bundle.exists(), "{}", r.stdout);
    let listed = r
        .stdout
        .split("removed secrets bundle ")
        .nth(1)
        .and_then(|rest| rest.split("(backup ").nth(1))
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("the bundle's backup listed: {}", r.stdout));
    std::fs::copy(listed, &bundle).expect("the backup holds the bundle");
    let plan_args = [
        "create",
        "--name",
        "lab",
        "--provider",
        "sim-opennebula",
        "--controlplanes",
        "1",
        "--workers",
        "0",
        "--talos",
        "v1.11.3",
        "--plan",
        "-o",
        "json",
    ]
    .map(String::from);
    let r = create_common::run(&sim, &plan_args).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).expect("the plan's JSON");
    let name_free = plan["guards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == "name_free")
        .expect("the name guard");
    assert_eq!(name_free["verdict"], "fail", "{name_free}");
    assert!(
        name_free["reason"]
            .as_str()
            .unwrap()
            .contains("lab.secrets.yaml is left from an earlier cluster"),
        "{name_free}"
    );

    // Named with --with-secrets, that bundle frees the name and the new cluster is made with
    // its keys: the bundle at the name is still the one left, byte for byte.
    let left = std::fs::read(&bundle).unwrap();
    let with_secrets = ["--with-secrets", bundle.to_str().unwrap()];
    let mut plan_args = plan_args.to_vec();
    plan_args.extend(with_secrets.map(String::from));
    let r = create_common::run(&sim, &plan_args).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).expect("the plan's JSON");
    assert_eq!(plan["with_secrets"], bundle.to_str().unwrap(), "{plan}");
    let r = create_common::run(
        &sim,
        &create_args("sim-opennebula", 1, 0, "v1.11.3", &with_secrets),
    )
    .await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        std::fs::read(&bundle).unwrap(),
        left,
        "the named bundle is used"
    );
}

/// The operator's files as an editor keeps them: comments on their own lines and after values,
/// CRLF line endings, the OIDC corp entries and `admin@lab` current. A create and its delete
/// leave both files byte for byte as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_then_delete_leaves_every_byte_of_commented_crlf_files() {
    let sim = start(scenario("healthy")).await;
    add_corp_entries(&sim);
    let kube_path = sim.fleet.kubeconfig_path();
    let talos_path = sim.fleet.talosconfig_path();
    let crlf = |text: String| text.replace("\r\n", "\n").replace('\n', "\r\n");
    let kube = std::fs::read_to_string(&kube_path).unwrap().replace(
        "server: https://127.0.0.9:6443",
        "server: https://127.0.0.9:6443 # corp VPN",
    );
    let kube_before = crlf(format!("# the operator's kubeconfig\n{kube}# end\n"));
    let talos = std::fs::read_to_string(&talos_path).unwrap();
    let talos_before = crlf(format!("# talosctl contexts, by hand\n{talos}# end\n"));
    std::fs::write(&kube_path, &kube_before).unwrap();
    std::fs::write(&talos_path, &talos_before).unwrap();
    assert_eq!(kubectl(&sim, &["current-context"]).trim(), "admin@lab");

    let r = create_common::run(&sim, &create_args("sim-opennebula", 1, 0, "v1.11.3", &[])).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(kubectl(&sim, &["current-context"]).trim(), "admin@lab-1");
    for (path, before) in [(&kube_path, &kube_before), (&talos_path, &talos_before)] {
        let during = std::fs::read_to_string(path).unwrap();
        assert!(
            !during.replace("\r\n", "").contains('\n'),
            "{} keeps CRLF: {during:?}",
            path.display()
        );
        assert!(during.starts_with(before.lines().next().unwrap()));
        assert!(during.ends_with("# end\r\n"), "{during:?}");
    }

    let r = provision_common::run(&sim, &config_file(&sim), &DELETE_ARGS).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(std::fs::read_to_string(&kube_path).unwrap(), kube_before);
    assert_eq!(std::fs::read_to_string(&talos_path).unwrap(), talos_before);
}
