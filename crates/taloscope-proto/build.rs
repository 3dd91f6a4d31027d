//! Compiles taloscope's own subset of the Talos and COSI protocol definitions
//! (the workspace's top-level proto/) with protox, so no system protoc is needed.
//! Client stubs only with the `client` feature, server traits only with `server`.
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    println!("cargo:rerun-if-changed={}", proto.display());
    let files = [
        "common/common.proto",
        "cluster/cluster.proto",
        "machine/machine.proto",
        "machine/image.proto",
        "machine/lifecycle.proto",
        "v1alpha1/resource.proto",
        "v1alpha1/state.proto",
    ];
    let fds = protox::compile(files, [&proto])?;
    tonic_prost_build::configure()
        .build_server(std::env::var_os("CARGO_FEATURE_SERVER").is_some())
        .build_client(std::env::var_os("CARGO_FEATURE_CLIENT").is_some())
        .compile_fds(fds)?;
    Ok(())
}
