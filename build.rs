//! Links the release console without unwind tables (.eh_frame, .eh_frame_hdr, about 1.2 MB).
//! The release profile aborts on panic, so nothing unwinds; `-C force-unwind-tables=no` keeps
//! most of them (every function that inlined std's cleanup code keeps its personality and so its
//! table), so the linker discards them. Only the release and bench profiles' `taloscope` binary:
//! tests and debug builds unwind. The panic hook still restores the terminal and prints the
//! message with its file:line; a `RUST_BACKTRACE` backtrace is then empty (README "Benchmarks").
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("PROFILE").as_deref() != Ok("release") {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let script = out.join("discard-unwind-tables.ld");
    // INSERT keeps the linker's own default script; this one only adds the discard.
    std::fs::write(
        &script,
        "SECTIONS { /DISCARD/ : { *(.eh_frame) } } INSERT AFTER .text;\n",
    )
    .expect("write the linker script to OUT_DIR");
    println!("cargo:rustc-link-arg-bin=taloscope=-Wl,--no-eh-frame-hdr");
    println!(
        "cargo:rustc-link-arg-bin=taloscope=-Wl,-T,{}",
        script.display()
    );
}
