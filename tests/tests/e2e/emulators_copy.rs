//! `scripts/emulators.sh start` from a copy of the repository's scripts alone (no clone, no
//! `.venv`), with moto and redis already installed elsewhere and named by `MOTO_SERVER` and
//! `REDIS_SERVER`: it uses them, starts every emulator, and stops them. In the gate: it starts a
//! LocalStack of its own.

use std::path::Path;
use std::process::Command;

use e2e_tests::fixtures::unique;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn emulators(copy: &Path, command: &str) -> (Option<i32>, String) {
    let moto = Path::new(ROOT).join(".venv/bin/moto_server");
    let redis = std::env::var("E2E_REDIS_SERVER").expect("run under scripts/emulators.sh run");
    let output = Command::new(copy.join("scripts/emulators.sh"))
        .arg(command)
        .env("MOTO_SERVER", &moto)
        .env("REDIS_SERVER", &redis)
        .output()
        .unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn emulators_start_from_a_copy_with_moto_and_redis_already_installed() {
    let copy = std::env::temp_dir().join(unique("copy"));
    std::fs::create_dir_all(&copy).unwrap();
    let copied =
        Command::new("cp").arg("-r").arg(Path::new(ROOT).join("scripts")).arg(&copy).status();
    assert!(copied.unwrap().success());
    let (code, said) = emulators(&copy, "start");
    let env = std::fs::read_to_string(copy.join(".emulators/env")).unwrap_or_default();
    let stopped = emulators(&copy, "stop");
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("using the moto_server installed at"), "{said}");
    assert!(said.contains("using the redis-server installed at"), "{said}");
    assert!(!copy.join(".venv").exists(), "moto was installed anyway");
    assert!(env.contains("export AWS_ENDPOINT_URL_SQS=http://127.0.0.1:"), "{env}");
    assert_eq!(stopped.0, Some(0), "{}", stopped.1);
    std::fs::remove_dir_all(&copy).unwrap();
}
