//! Every fuzz target's function over its seed corpus (fuzz/corpus/NAME/), on
//! stable `cargo test`: CI exercises the targets without nightly or
//! libFuzzer. `scripts/fuzz` runs the same functions under libFuzzer.
#[path = "../fuzz/src/lib.rs"]
mod targets;

use std::path::Path;

#[test]
fn every_target_survives_its_seed_corpus() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for (name, target) in targets::TARGETS {
        let dir = corpus.join(name);
        let mut seeds: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        seeds.sort();
        assert!(!seeds.is_empty(), "no seeds for {name}");
        for seed in seeds {
            let bytes = std::fs::read(&seed).unwrap();
            target(&bytes);
            // Truncations of each seed reach the error paths too.
            for cut in [
                1,
                bytes.len() / 3,
                bytes.len() / 2,
                bytes.len().saturating_sub(1),
            ] {
                target(&bytes[..cut.min(bytes.len())]);
            }
        }
    }
}
