//! Compiles taloscope's own subset of the Talos and COSI protocol definitions
//! (proto/) with protox, so no system protoc is needed.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let files = [
        "proto/common/common.proto",
        "proto/machine/machine.proto",
        "proto/machine/image.proto",
        "proto/machine/lifecycle.proto",
        "proto/v1alpha1/resource.proto",
        "proto/v1alpha1/state.proto",
    ];
    let fds = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}
