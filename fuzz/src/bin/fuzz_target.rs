//! The AFL++ harness: `FUZZ_TARGET=<name> cargo afl fuzz ... target/debug/fuzz-target`.

fn main() {
    let name = std::env::var("FUZZ_TARGET").unwrap_or_default();
    let Some(target) = backpressure_fuzz::target(&name) else {
        eprintln!(
            "FUZZ_TARGET={name:?} is not a target; choose one of {:?}",
            backpressure_fuzz::TARGETS.iter().map(|(n, _)| *n).collect::<Vec<_>>()
        );
        std::process::exit(2);
    };
    afl::fuzz!(|data: &[u8]| target(data));
}
