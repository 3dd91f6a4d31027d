use base64::Engine as _;
use std::os::unix::fs::PermissionsExt as _;

use super::*;
use crate::cluster_config::test_bundle;

#[test]
fn tokens_and_ids_have_upstream_shapes() {
    let b = test_bundle();
    for token in [&b.bootstrap_token, &b.trustd_token] {
        let (a, z) = token.split_once('.').unwrap();
        assert_eq!((a.len(), z.len()), (6, 16), "{token}");
        assert!(
            token
                .chars()
                .all(|c| c == '.' || c.is_ascii_digit() || c.is_ascii_lowercase())
        );
    }
    let id = base64::engine::general_purpose::URL_SAFE
        .decode(&b.cluster.id)
        .unwrap();
    assert_eq!(id.len(), 32);
    let secret = base64::engine::general_purpose::STANDARD
        .decode(&b.cluster.secret)
        .unwrap();
    assert_eq!(secret.len(), 32);
    assert!(matches!(b.encryption, EncryptionSecret::Secretbox(_)));
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(b.encryption_secret())
            .unwrap()
            .len(),
        32
    );
}

#[test]
fn key_types_are_upstreams() {
    let b = test_bundle();
    let label = |pem: &str| pki::pem_decode(pem, "x").unwrap().0;
    assert_eq!(label(&b.certs.os.key_pem), "ED25519 PRIVATE KEY");
    assert_eq!(label(&b.certs.k8s.key_pem), "EC PRIVATE KEY");
    assert_eq!(label(&b.certs.etcd.key_pem), "EC PRIVATE KEY");
    assert_eq!(label(&b.certs.k8s_aggregator.key_pem), "EC PRIVATE KEY");
    assert_eq!(label(&b.certs.k8s_service_account_key), "RSA PRIVATE KEY");
    assert_eq!(label(&b.certs.os.crt_pem), "CERTIFICATE");
}

#[test]
fn yaml_round_trips_in_talosctls_shape() {
    let b = test_bundle();
    let text = b.to_yaml();
    let node: crate::cluster_config::ConfigNode = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(
        node.key_paths(),
        [
            "cluster",
            "cluster.id",
            "cluster.secret",
            "secrets",
            "secrets.bootstraptoken",
            "secrets.secretboxencryptionsecret",
            "trustdinfo",
            "trustdinfo.token",
            "certs",
            "certs.etcd",
            "certs.etcd.crt",
            "certs.etcd.key",
            "certs.k8s",
            "certs.k8s.crt",
            "certs.k8s.key",
            "certs.k8saggregator",
            "certs.k8saggregator.crt",
            "certs.k8saggregator.key",
            "certs.k8sserviceaccount",
            "certs.k8sserviceaccount.key",
            "certs.os",
            "certs.os.crt",
            "certs.os.key",
        ]
        .map(String::from)
    );
    let back = SecretsBundle::from_yaml_str(&text, Path::new("secrets.yaml")).unwrap();
    assert_eq!(&back, b);
}

#[test]
fn reads_upstreams_testdata_bundle() {
    // siderolabs/talos pkg/machinery/config/generate/secrets/testdata/secrets.yaml (v1.11.3).
    let text = include_str!("testdata/upstream_secrets.yaml");
    let b = SecretsBundle::from_yaml_str(text, Path::new("upstream.yaml")).unwrap();
    assert_eq!(b.bootstrap_token, "2psnp2.lry8e9gycdix3bpa");
    assert!(
        b.certs
            .os
            .key_pem
            .starts_with("-----BEGIN ED25519 PRIVATE KEY-----")
    );
}

#[test]
fn save_is_0600_and_loads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secrets.yaml");
    std::fs::write(&path, "old").unwrap();
    test_bundle().save(&path).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(&SecretsBundle::from_yaml(&path).unwrap(), test_bundle());
    let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(leftovers, 1, "no temporary file left beside it");
}

#[test]
fn bad_bundles_name_the_file_and_field() {
    let text = test_bundle()
        .to_yaml()
        .replace("secretboxencryptionsecret", "other");
    let err = SecretsBundle::from_yaml_str(&text, Path::new("/x/s.yaml")).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("/x/s.yaml") && msg.contains("secretboxencryptionsecret"),
        "{msg}"
    );
    let missing = SecretsBundle::from_yaml(Path::new("/nonexistent/s.yaml")).unwrap_err();
    assert!(missing.to_string().contains("/nonexistent/s.yaml"));
}

#[test]
fn yaml_errors_never_quote_the_bundle() {
    let b = test_bundle();
    let text = b.to_yaml().replacen("certs:", "certs: [", 1);
    let err = SecretsBundle::from_yaml_str(&text, Path::new("s.yaml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("s.yaml") && err.contains("line"), "{err}");
    let wrong_type = format!("cluster: {}\n", b.cluster.secret);
    let err = SecretsBundle::from_yaml_str(&wrong_type, Path::new("s.yaml"))
        .unwrap_err()
        .to_string();
    assert!(!err.contains(&b.cluster.secret), "{err}");
}

#[test]
fn debug_never_shows_secrets() {
    let b = test_bundle();
    let shown = format!("{b:?} {:?}", b.certs.os);
    assert!(!shown.contains(&b.bootstrap_token));
    assert!(!shown.contains(&b.cluster.secret));
    assert!(!shown.contains("PRIVATE KEY"));
}

#[test]
fn unsupported_versions_are_refused() {
    let old = TalosVersion::parse("v1.8.4").unwrap();
    assert!(matches!(
        SecretsBundle::generate(&old),
        Err(SecretsError::Version(_))
    ));
}
