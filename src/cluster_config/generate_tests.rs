use base64::Engine as _;
use std::path::Path;

use super::*;
use crate::cluster_config::patch::{ConfigPatch, PatchTarget};
use crate::cluster_config::test_bundle;

/// Upstream's documented schema per version (testdata/schema_keys_*.txt, reduced from
/// pkg/machinery/config/schemas/config.schema.json at the tag).
fn schema(tag: &str) -> &'static str {
    match tag {
        "v1.10.9" => include_str!("testdata/schema_keys_v1.10.9.txt"),
        "v1.11.3" => include_str!("testdata/schema_keys_v1.11.3.txt"),
        "v1.12.11" => include_str!("testdata/schema_keys_v1.12.11.txt"),
        "v1.13.9" => include_str!("testdata/schema_keys_v1.13.9.txt"),
        // Talos 1.14 has release candidates only when this was read.
        "v1.14.0" => include_str!("testdata/schema_keys_v1.14.0-rc.1.txt"),
        other => panic!("no schema for {other}"),
    }
}

/// The documented key paths of one document kind (`v1alpha1` or a kind name).
fn documented(tag: &str, section: &str) -> Vec<&'static str> {
    let mut in_section = false;
    let mut keys = Vec::new();
    for line in schema(tag).lines() {
        if let Some(name) = line.strip_prefix("== ") {
            in_section = name == section;
        } else if in_section && !line.starts_with('#') {
            keys.push(line);
        }
    }
    assert!(!keys.is_empty(), "{tag} documents {section}");
    keys
}

fn is_documented(path: &str, documented: &[&str]) -> bool {
    documented.iter().any(|pattern| {
        let below = |prefix: &str| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("[]"))
        };
        if pattern.strip_suffix(".**").is_some_and(below) {
            return true;
        }
        let (a, b) = (segments(pattern), segments(path));
        a.len() == b.len() && a.iter().zip(&b).all(|(p, k)| p == "*" || p == k)
    })
}

/// A dotted path's segments; a quoted segment may hold dots.
fn segments(path: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in path.chars() {
        match c {
            '"' => quoted = !quoted,
            '.' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

fn input(talos: &str, kube: &str) -> GenerateInput {
    GenerateInput::new(
        "lab",
        "https://127.0.0.50:6443",
        TalosVersion::parse(talos).unwrap(),
        KubeVersion::parse(kube).unwrap(),
        test_bundle().clone(),
    )
}

fn documents_of(yaml: &str) -> Vec<ConfigNode> {
    ConfigNode::parse_talos_documents(yaml).unwrap()
}

fn section_of(doc: &ConfigNode) -> &str {
    doc.get("kind")
        .and_then(ConfigNode::as_str)
        .unwrap_or("v1alpha1")
}

/// Keys upstream writes but leaves out of its schema: `persist` is `docgen:nodoc` in
/// types/v1alpha1 (still written by generate), and every document's `apiVersion`/`kind`.
const UNDOCUMENTED: &[(&str, &str)] = &[
    ("v1alpha1", "persist"),
    ("HostnameConfig", "apiVersion"),
    ("HostnameConfig", "kind"),
];

/// The schema's name for a document kind. Upstream's schema names the UnattendedInstallConfig
/// document `UnattendedInstall` (its `schemaMeta: v1alpha1/UnattendedInstall` in
/// types/runtime/unattended_install.go at v1.14.0-rc.1), while the registry and the document's
/// own marshal golden (testdata/unattendedinstall.yaml) write `kind: UnattendedInstallConfig`.
fn schema_section(kind: &str) -> &str {
    match kind {
        "UnattendedInstallConfig" => "UnattendedInstall",
        other => other,
    }
}

/// Every key each generated document holds is one upstream documents for that version.
fn check_against_schema(tag: &str, kube: &str) {
    let configs = MachineConfigs::generate(&input(tag, kube)).unwrap();
    let mut undocumented = Vec::new();
    for (role, yaml) in [
        ("controlplane", &configs.controlplane),
        ("worker", &configs.worker),
    ] {
        for doc in documents_of(yaml) {
            let section = section_of(&doc).to_string();
            let known = documented(tag, schema_section(&section));
            for path in doc.key_paths() {
                if UNDOCUMENTED.contains(&(section.as_str(), path.as_str())) {
                    continue;
                }
                if !is_documented(&path, &known) {
                    undocumented.push(format!("{role} {section}: {path}"));
                }
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "{tag}: not in upstream's schema: {undocumented:#?}"
    );
}

#[test]
fn v1_10_configs_hold_only_documented_keys() {
    check_against_schema("v1.10.9", "1.33.6");
}

#[test]
fn v1_11_configs_hold_only_documented_keys() {
    check_against_schema("v1.11.3", "1.34.1");
}

#[test]
fn v1_12_and_v1_13_configs_hold_only_documented_keys() {
    check_against_schema("v1.12.11", "1.35.4");
    check_against_schema("v1.13.9", "1.36.3");
}

#[test]
fn v1_14_configs_hold_only_documented_keys() {
    check_against_schema("v1.14.0", "1.37.0");
}

/// The key structure, golden: what `talosctl gen config` writes at each version (comments
/// aside). Values are left out: they hold the keys.
#[test]
fn key_structure_per_version() {
    for (tag, kube) in [
        ("v1.10.9", "1.33.6"),
        ("v1.11.3", "1.34.1"),
        ("v1.12.11", "1.35.4"),
        ("v1.13.9", "1.36.3"),
    ] {
        let configs = MachineConfigs::generate(&input(tag, kube)).unwrap();
        for (role, yaml) in [
            ("controlplane", &configs.controlplane),
            ("worker", &configs.worker),
        ] {
            let shape: Vec<String> = documents_of(yaml)
                .iter()
                .map(|d| format!("--- {}\n{}", section_of(d), d.key_paths().join("\n")))
                .collect();
            insta::assert_snapshot!(format!("keys_{tag}_{role}"), shape.join("\n"));
        }
    }
}

#[test]
fn values_follow_the_input_and_bundle() {
    let configs = MachineConfigs::generate(&input("v1.11.3", "1.34.1")).unwrap();
    let cp = &documents_of(&configs.controlplane)[0];
    let text = |doc: &ConfigNode, path: &str| {
        doc.at(path)
            .and_then(ConfigNode::as_str)
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(text(cp, "version"), "v1alpha1");
    assert_eq!(text(cp, "machine.type"), "controlplane");
    assert_eq!(
        text(cp, "machine.install.image"),
        "ghcr.io/siderolabs/installer:v1.11.3"
    );
    assert_eq!(text(cp, "machine.install.disk"), "/dev/sda");
    assert_eq!(
        text(cp, "machine.kubelet.image"),
        "ghcr.io/siderolabs/kubelet:v1.34.1"
    );
    assert_eq!(
        text(cp, "cluster.apiServer.image"),
        "registry.k8s.io/kube-apiserver:v1.34.1"
    );
    assert_eq!(
        text(cp, "cluster.controlPlane.endpoint"),
        "https://127.0.0.50:6443"
    );
    assert_eq!(text(cp, "cluster.clusterName"), "lab");
    assert_eq!(text(cp, "machine.token"), test_bundle().trustd_token);
    assert_eq!(text(cp, "cluster.token"), test_bundle().bootstrap_token);
    assert_eq!(
        text(cp, "cluster.secretboxEncryptionSecret"),
        test_bundle().encryption_secret()
    );
    let os_crt = base64::engine::general_purpose::STANDARD
        .decode(text(cp, "machine.ca.crt"))
        .unwrap();
    assert_eq!(
        String::from_utf8(os_crt).unwrap(),
        test_bundle().certs.os.crt_pem
    );
    assert_eq!(
        cp.at("cluster.apiServer.certSANs"),
        Some(&ConfigNode::strings(&["127.0.0.50"]))
    );

    let worker = &documents_of(&configs.worker)[0];
    assert_eq!(text(worker, "machine.type"), "worker");
    assert_eq!(
        text(worker, "machine.ca.key"),
        "",
        "workers get the OS CA without its key"
    );
    assert_eq!(text(worker, "cluster.ca.key"), "");
    assert!(worker.at("cluster.aggregatorCA").is_none() && worker.at("cluster.etcd").is_none());
    assert!(!configs.worker.contains(
        &base64::engine::general_purpose::STANDARD.encode(&test_bundle().certs.os.key_pem)
    ));
}

#[test]
fn newer_versions_append_documents_and_drop_legacy_fields() {
    let v12 = MachineConfigs::generate(&input("v1.12.11", "1.35.4")).unwrap();
    let docs = documents_of(&v12.controlplane);
    assert_eq!(docs.len(), 2);
    assert_eq!(section_of(&docs[1]), "HostnameConfig");
    assert_eq!(
        docs[1].get("auto").and_then(ConfigNode::as_str),
        Some("stable")
    );
    assert!(
        docs[0].at("cluster.apiServer.certSANs").is_none(),
        "1.12 no longer copies the endpoint"
    );
    assert!(docs[0].at("machine.features.rbac").is_none());
    assert!(docs[0].at("machine.registries").is_none());
    assert!(docs[0].at("machine.network").is_some());
    let v13 = MachineConfigs::generate(&input("v1.13.9", "1.36.3")).unwrap();
    assert!(documents_of(&v13.worker)[0].at("machine.network").is_none());
}

#[test]
fn patches_apply_per_role() {
    let mut input = input("v1.11.3", "1.34.1");
    let patch = |text: &str, target| ConfigPatch::parse(text, Path::new("p.yaml"), target).unwrap();
    input.patches = ConfigPatches(vec![
        patch(
            "machine:\n  install:\n    disk: /dev/vda\n",
            PatchTarget::All,
        ),
        patch(
            "- op: add\n  path: /cluster/allowSchedulingOnControlPlanes\n  value: true\n",
            PatchTarget::ControlPlane,
        ),
        patch(
            "machine:\n  nodeLabels:\n    role: worker\n",
            PatchTarget::Worker,
        ),
    ]);
    let configs = MachineConfigs::generate(&input).unwrap();
    let cp = &documents_of(&configs.controlplane)[0];
    let worker = &documents_of(&configs.worker)[0];
    assert_eq!(
        cp.at("machine.install.disk"),
        Some(&ConfigNode::str("/dev/vda"))
    );
    assert_eq!(
        worker.at("machine.install.disk"),
        Some(&ConfigNode::str("/dev/vda"))
    );
    assert_eq!(
        cp.at("cluster.allowSchedulingOnControlPlanes"),
        Some(&ConfigNode::Bool(true))
    );
    assert!(
        worker
            .at("cluster.allowSchedulingOnControlPlanes")
            .is_none()
    );
    assert!(
        worker.at("machine.nodeLabels.role").is_some()
            && cp.at("machine.nodeLabels.role").is_none()
    );
}

/// The static hostname patch upstream's `stdpatches.WithStaticHostname` emits
/// (pkg/machinery/config/generate/stdpatches/stdpatches.go): `auto` is the text enum of
/// pkg/machinery/nethelpers/autohostnamekind.go, and `off` is text under YAML 1.2.
#[test]
fn the_static_hostname_worker_patch_applies() {
    let mut input = input("v1.12.11", "1.35.4");
    input.patches = ConfigPatches(vec![
        ConfigPatch::parse(
            "apiVersion: v1alpha1\nkind: HostnameConfig\nauto: off\nhostname: wk\n",
            Path::new("wp.yaml"),
            PatchTarget::Worker,
        )
        .unwrap(),
    ]);
    let configs = MachineConfigs::generate(&input).unwrap();
    let worker = documents_of(&configs.worker);
    let hostname = worker
        .iter()
        .find(|d| section_of(d) == "HostnameConfig")
        .unwrap();
    assert_eq!(hostname.get("auto"), Some(&ConfigNode::str("off")));
    assert_eq!(hostname.get("hostname"), Some(&ConfigNode::str("wk")));
    let cp = documents_of(&configs.controlplane);
    let cp_hostname = cp
        .iter()
        .find(|d| section_of(d) == "HostnameConfig")
        .unwrap();
    assert_eq!(cp_hostname.get("auto"), Some(&ConfigNode::str("stable")));
}

#[test]
fn bad_input_is_refused_by_name() {
    let mut bad = input("v1.11.3", "1.34.1");
    bad.endpoint = "127.0.0.50:6443".into();
    let err = MachineConfigs::generate(&bad).unwrap_err().to_string();
    assert!(
        err.contains("127.0.0.50:6443") && err.contains("https://"),
        "{err}"
    );
    let mut bad = input("v1.11.3", "1.34.1");
    bad.cluster_name = "Lab_1".into();
    assert!(
        MachineConfigs::generate(&bad)
            .unwrap_err()
            .to_string()
            .contains("Lab_1")
    );
    let err = MachineConfigs::generate(&input("v1.9.6", "1.34.1"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("1.34.1"), "{err}");
    let err = MachineConfigs::generate(&input("v1.8.4", "1.31.4"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("v1.8.4"), "{err}");
}

#[test]
fn json_patches_on_multi_document_configs_are_refused_like_upstream() {
    let mut input = input("v1.12.11", "1.35.4");
    input.patches = ConfigPatches(vec![
        ConfigPatch::parse(
            "- op: remove\n  path: /debug\n",
            Path::new("j.yaml"),
            PatchTarget::All,
        )
        .unwrap(),
    ]);
    let err = MachineConfigs::generate(&input).unwrap_err().to_string();
    assert!(
        err.contains("j.yaml") && err.contains("multi-document"),
        "{err}"
    );
}

#[test]
fn debug_is_redacted() {
    let configs = MachineConfigs::generate(&input("v1.11.3", "1.34.1")).unwrap();
    assert!(!format!("{configs:?}").contains(&test_bundle().trustd_token));
}

#[test]
fn yaml_reads_as_upstream_writes_it() {
    let configs = MachineConfigs::generate(&input("v1.12.11", "1.35.4")).unwrap();
    let text = &configs.worker;
    assert!(
        text.starts_with("version: v1alpha1\ndebug: false\npersist: true\nmachine:\n"),
        "{text}"
    );
    assert!(text.contains("\n  network: {}\n"), "{text}");
    assert!(
        text.contains("\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n"),
        "{text}"
    );
    let cp = MachineConfigs::generate(&input("v1.11.3", "1.34.1"))
        .unwrap()
        .controlplane;
    assert!(
        cp.contains("node.kubernetes.io/exclude-from-external-load-balancers: \"\""),
        "{cp}"
    );
}

/// The key paths of upstream's stability goldens (testdata/stability_keys.txt), per contract
/// and role: `(document kind, its key paths)` in document order.
fn stability_keys(contract: &str, role: &str) -> Vec<(String, Vec<String>)> {
    let text = include_str!("testdata/stability_keys.txt");
    let mut docs: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_set = false;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if let Some(set) = line.strip_prefix("== ") {
            in_set = set == format!("{contract} {role}");
        } else if !in_set {
            continue;
        } else if let Some(kind) = line.strip_prefix("--- ") {
            docs.push((kind.to_string(), Vec::new()));
        } else if let Some((_, paths)) = docs.last_mut() {
            paths.push(line.to_string());
        }
    }
    assert!(!docs.is_empty(), "stability keys for {contract} {role}");
    docs
}

/// Configs for 1.12, 1.13 and 1.14 hold every key upstream's stability goldens hold, in the
/// same documents, and only these more: the install disk and image that `talosctl gen config`
/// passes by default (cmd/talosctl/cmd/mgmt/gen/config.go `--install-disk /dev/sda`,
/// `--install-image`; the goldens' input names neither) — in `machine.install` up to 1.13, in
/// an `UnattendedInstallConfig` document after the discovery identity from 1.14 (generate/
/// init.go and worker.go make it only when an install disk is given) — and on 1.12/1.13
/// control planes the empty `extraManifests` / `inlineManifests` lists generate/init.go sets
/// (the goldens are encoded without comments and leave empty lists out).
#[test]
fn configs_hold_upstreams_stability_goldens_keys() {
    for (tag, kube, contract) in [
        ("v1.12.11", "1.35.4", "v1.12"),
        ("v1.13.9", "1.36.3", "v1.13"),
        ("v1.14.0", "1.37.0", "v1.14"),
    ] {
        let configs = MachineConfigs::generate(&input(tag, kube)).unwrap();
        for (role, yaml) in [
            ("controlplane", &configs.controlplane),
            ("worker", &configs.worker),
        ] {
            let mut ours = documents_of(yaml);
            let upstream = stability_keys(contract, role);
            if contract == "v1.14" {
                let at = ours
                    .iter()
                    .position(|d| section_of(d) == "UnattendedInstallConfig")
                    .unwrap_or_else(|| panic!("{tag} {role}: no UnattendedInstallConfig"));
                assert_eq!(section_of(&ours[at - 1]), "DiscoveryIdentityConfig");
                let install = ours.remove(at);
                assert_eq!(
                    install.at("installer.image").and_then(ConfigNode::as_str),
                    Some("ghcr.io/siderolabs/installer:v1.14.0")
                );
                assert_eq!(
                    install
                        .at("provisioning.diskSelector.match")
                        .and_then(ConfigNode::as_str),
                    Some("disk.dev_path == \"/dev/sda\"")
                );
                assert_eq!(
                    install.at("provisioning.wipe"),
                    Some(&ConfigNode::Bool(false))
                );
            }
            let kinds: Vec<&str> = ours.iter().map(section_of).collect();
            let upstream_kinds: Vec<&str> = upstream.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(kinds, upstream_kinds, "{tag} {role}: documents");
            for (doc, (kind, keys)) in ours.iter().zip(&upstream) {
                let paths = doc.key_paths();
                let missing: Vec<&String> = keys.iter().filter(|k| !paths.contains(k)).collect();
                assert!(
                    missing.is_empty(),
                    "{tag} {role} {kind}: missing {missing:?}"
                );
                let extra: Vec<&str> = paths
                    .iter()
                    .filter(|p| !keys.contains(p))
                    .map(String::as_str)
                    .collect();
                let expected: &[&str] = match (kind.as_str(), role, contract) {
                    ("v1alpha1", _, "v1.14") => &[],
                    ("v1alpha1", "controlplane", _) => &[
                        "machine.install.disk",
                        "machine.install.image",
                        "cluster.extraManifests",
                        "cluster.inlineManifests",
                    ],
                    ("v1alpha1", _, _) => &["machine.install.disk", "machine.install.image"],
                    _ => &[],
                };
                let mut extra_sorted = extra.clone();
                extra_sorted.sort_unstable();
                let mut expected_sorted = expected.to_vec();
                expected_sorted.sort_unstable();
                assert_eq!(
                    extra_sorted, expected_sorted,
                    "{tag} {role} {kind}: extra keys"
                );
            }
        }
    }
}

/// The 1.14 contract's values that upstream's golden fixes regardless of the secrets: the
/// Kubernetes CA in PEM (issuing on control planes, accepted on workers), the service-account
/// issuer at the endpoint, the Secrets encryption key named `key2`, images of the chosen
/// Kubernetes (types/v1alpha1/testdata/stability/v1.14/base-*.yaml at v1.14.0-rc.1).
#[test]
fn v1_14_values_follow_upstreams_golden() {
    let made = MachineConfigs::generate(&input("v1.14.0", "1.37.0")).unwrap();
    let doc = |yaml: &str, kind: &str| -> ConfigNode {
        documents_of(yaml)
            .into_iter()
            .find(|d| section_of(d) == kind)
            .unwrap_or_else(|| panic!("no {kind}"))
    };
    let text = |node: &ConfigNode, path: &str| -> String {
        node.at(path)
            .and_then(ConfigNode::as_str)
            .unwrap_or_else(|| panic!("{path}"))
            .to_string()
    };
    let bundle = test_bundle();
    let cp_ca = doc(&made.controlplane, "KubeAPIServerCAConfig");
    assert_eq!(text(&cp_ca, "issuingCA.cert"), bundle.certs.k8s.crt_pem);
    assert_eq!(text(&cp_ca, "issuingCA.key"), bundle.certs.k8s.key_pem);
    let wk_ca = doc(&made.worker, "KubeAPIServerCAConfig");
    assert_eq!(
        wk_ca.get("acceptedCAs"),
        Some(&ConfigNode::strings(&[bundle.certs.k8s.crt_pem.as_str()]))
    );
    assert!(wk_ca.get("issuingCA").is_none());
    let cluster = doc(&made.worker, "KubeClusterConfig");
    assert_eq!(text(&cluster, "clusterName"), "lab");
    assert_eq!(text(&cluster, "endpoint"), "https://127.0.0.50:6443");
    let sa = doc(&made.controlplane, "KubeServiceAccountConfig");
    assert_eq!(text(&sa, "issuer.issuerURL"), "https://127.0.0.50:6443");
    assert_eq!(
        text(&sa, "issuer.privateKey"),
        bundle.certs.k8s_service_account_key
    );
    let encryption = doc(&made.controlplane, "KubeEtcdEncryptionConfig");
    let yaml = encryption.to_yaml().unwrap();
    assert!(yaml.contains("name: key2"), "{yaml}");
    assert_eq!(
        text(&doc(&made.worker, "KubeletConfig"), "image"),
        "ghcr.io/siderolabs/kubelet:v1.37.0"
    );
    assert_eq!(
        text(&doc(&made.controlplane, "KubeAPIServerConfig"), "image"),
        "registry.k8s.io/kube-apiserver:v1.37.0"
    );
    let identity = doc(&made.worker, "DiscoveryIdentityConfig");
    assert_eq!(text(&identity, "clusterID"), bundle.cluster.id);
    let v1alpha1 = &documents_of(&made.worker)[0];
    assert!(v1alpha1.at("machine.install").is_none());
    assert!(v1alpha1.at("cluster.id").is_none());
    assert_eq!(
        v1alpha1.at("cluster.token").and_then(ConfigNode::as_str),
        Some(bundle.bootstrap_token.as_str())
    );
}
