//! Replays the committed corpus (seeds and anything `make fuzz` found and
//! kept) through every target, so a regression fails `make test`.

use std::path::PathBuf;

#[test]
fn every_corpus_file_passes_its_target() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut replayed = 0;
    for (name, target) in backpressure_fuzz::TARGETS {
        let dir = root.join(name);
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{} is missing: {e}", dir.display()));
        let mut files = 0;
        for entry in entries {
            let path = entry.expect("a readable corpus entry").path();
            let data = std::fs::read(&path).expect("a readable corpus file");
            let result = std::panic::catch_unwind(|| target(&data));
            assert!(result.is_ok(), "{name}: {} breaks a promise", path.display());
            files += 1;
        }
        assert!(files > 0, "{name} has no seeds");
        replayed += files;
    }
    println!("replayed {replayed} corpus files");
}
