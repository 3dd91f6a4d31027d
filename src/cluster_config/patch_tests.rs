use super::*;

fn yaml(text: &str) -> ConfigNode {
    serde_saphyr::from_str(text).unwrap()
}

fn patched(config: &str, patch: &str) -> Result<ConfigNode, PatchError> {
    let patch = ConfigPatch::parse(patch, Path::new("patch.yaml"), PatchTarget::All)?;
    let mut docs = vec![yaml(config)];
    patch.apply(&mut docs)?;
    Ok(docs.remove(0))
}

const CONFIG: &str =
    "machine:\n  type: worker\n  certSANs: [a, b]\n  install:\n    disk: /dev/sda\n";

#[test]
fn json6902_add_replace_remove() {
    let out = patched(
        CONFIG,
        "- op: add\n  path: /machine/certSANs/-\n  value: c\n\
         - op: add\n  path: /machine/certSANs/0\n  value: z\n\
         - op: replace\n  path: /machine/install/disk\n  value: /dev/vda\n\
         - op: remove\n  path: /machine/type\n\
         - op: add\n  path: /machine/network\n  value: {hostname: n1}\n",
    )
    .unwrap();
    assert_eq!(out.at("machine.certSANs"), Some(&yaml("[z, a, b, c]")));
    assert_eq!(
        out.at("machine.install.disk"),
        Some(&ConfigNode::str("/dev/vda"))
    );
    assert!(out.at("machine.type").is_none());
    assert_eq!(
        out.at("machine.network.hostname"),
        Some(&ConfigNode::str("n1"))
    );
}

#[test]
fn json6902_as_json_move_copy_test() {
    let out = patched(
        CONFIG,
        r#"[{"op": "test", "path": "/machine/type", "value": "worker"},
            {"op": "copy", "from": "/machine/install/disk", "path": "/machine/disk"},
            {"op": "move", "from": "/machine/certSANs", "path": "/machine/sans"}]"#,
    )
    .unwrap();
    assert_eq!(out.at("machine.disk"), Some(&ConfigNode::str("/dev/sda")));
    assert!(out.at("machine.certSANs").is_none());
    assert_eq!(out.at("machine.sans"), Some(&yaml("[a, b]")));
}

#[test]
fn failing_operations_name_the_file_index_and_op() {
    let err = patched(CONFIG, "- op: replace\n  path: /machine/nope\n  value: 1\n").unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("patch.yaml")
            && msg.contains("operation 0")
            && msg.contains("replace /machine/nope"),
        "{msg}"
    );
    let err = patched(
        CONFIG,
        "- op: test\n  path: /machine/type\n  value: controlplane\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("differs"));
    let err = patched(CONFIG, "- op: remove\n  path: /machine/certSANs/7\n").unwrap_err();
    assert!(err.to_string().contains("past the list's end"), "{err}");
    let err = ConfigPatch::parse(
        "- op: frobnicate\n  path: /x\n",
        Path::new("f.yaml"),
        PatchTarget::All,
    )
    .unwrap_err();
    assert!(err.to_string().contains("f.yaml") && err.to_string().contains("frobnicate"));
}

#[test]
fn strategic_merge_patches_merge_append_and_delete() {
    let out = patched(
        CONFIG,
        "machine:\n  certSANs: [c]\n  install:\n    $patch: delete\n",
    )
    .unwrap();
    assert_eq!(out.at("machine.certSANs"), Some(&yaml("[a, b, c]")));
    assert!(out.at("machine.install").is_none());
}

#[test]
fn load_reads_bounded_files_with_or_without_at() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.yaml");
    std::fs::write(&file, "machine:\n  install:\n    disk: /dev/vdb\n").unwrap();
    let with_at = ConfigPatch::load(&format!("@{}", file.display()), PatchTarget::Worker).unwrap();
    assert_eq!(with_at.file, file);
    assert_eq!(with_at.target, PatchTarget::Worker);
    ConfigPatch::load(&file.display().to_string(), PatchTarget::All).unwrap();
    let missing = ConfigPatch::load("/nonexistent/p.yaml", PatchTarget::All).unwrap_err();
    assert!(missing.to_string().contains("/nonexistent/p.yaml"));
    let fifo_like = ConfigPatch::load("/dev/zero", PatchTarget::All).unwrap_err();
    assert!(fifo_like.to_string().contains("/dev/zero"));
    let empty = ConfigPatch::parse("", Path::new("e.yaml"), PatchTarget::All).unwrap_err();
    assert!(empty.to_string().contains("e.yaml"));
    let scalar =
        ConfigPatch::parse("just text", Path::new("s.yaml"), PatchTarget::All).unwrap_err();
    assert!(scalar.to_string().contains("s.yaml"));
}
