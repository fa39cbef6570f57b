//! A worker of your own on its first run, as a newcomer meets it: the example
//! worker (built on `run_worker`, with no argument handling of its own for
//! `--help`) answers `--help` and `-h`; `healthcheck` says which file it
//! read and what changes it; and `scripts/emulators.sh install` waits for an
//! install already under way in the checkout rather than break it.

use std::process::Stdio;
use std::time::Duration;

use e2e_tests::fixtures::binary;
use e2e_tests::process::Process;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

const LIMIT: Duration = Duration::from_secs(30);

async fn example(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let output = Command::new(binary("examples/worker").unwrap())
        .args(args)
        .envs(env.iter().copied())
        .env_remove("HEALTH_FILE")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code(), text(&output.stdout), text(&output.stderr))
}

#[tokio::test]
async fn your_worker_answers_help_with_what_it_reads_and_exits_0() {
    for flag in ["--help", "-h"] {
        let (code, stdout, stderr) = example(&[flag], &[]).await;
        assert_eq!(code, Some(0), "{flag}: {stderr}");
        assert!(stdout.starts_with("thumbnails 1.0: "), "{flag}: {stdout}");
        for read in ["QUEUE_URL", "QUARANTINE_QUEUE_URL", "HEALTH_FILE", "healthcheck [PID]"] {
            assert!(stdout.contains(read), "{flag}: {read} missing from {stdout}");
        }
        assert!(!stdout.contains("DOWNSTREAM_URL"), "the forwarder's setting is not this worker's");
        assert!(!stderr.contains("invalid configuration"), "{flag}: {stderr}");
    }
    let (code, stdout, _) = example(&["--version"], &[]).await;
    assert_eq!((code, stdout.as_str()), (Some(0), "thumbnails 1.0\n"));
}

#[tokio::test]
async fn healthcheck_names_the_pid_argument_and_health_file() {
    let (code, _, stderr) = example(&["healthcheck", "999999"], &[]).await;
    assert_eq!(code, Some(1), "{stderr}");
    for named in ["process 999999", "healthcheck PID", "HEALTH_FILE"] {
        assert!(stderr.contains(named), "{named} not in {stderr}");
    }
    let missing = std::env::temp_dir().join(e2e_tests::fixtures::unique("no-stamp"));
    let file = missing.to_string_lossy().into_owned();
    let output = Command::new(binary("examples/worker").unwrap())
        .args(["healthcheck"])
        .env("HEALTH_FILE", &file)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&file) && stderr.contains("HEALTH_FILE"), "{stderr}");
}

#[tokio::test]
async fn an_emulator_install_waits_for_one_under_way() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let lock = format!("{root}/.emulators/install.lock");
    // Another install under way: the lock held until this test closes the holder's stdin.
    let mut holder = Command::new("flock")
        .args([lock.as_str(), "-c", "echo held; cat >/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut held = String::new();
    let stdout = holder.stdout.take().unwrap();
    tokio::io::AsyncBufReadExt::read_line(&mut tokio::io::BufReader::new(stdout), &mut held)
        .await
        .unwrap();
    assert_eq!(held, "held\n");
    let script = std::path::PathBuf::from(format!("{root}/scripts/emulators.sh"));
    let mut install = Process::spawn(&script, &["install"], &[]).unwrap();
    let waiting = install.wait_for_line("another install of the emulators", LIMIT).await;
    assert!(waiting.is_some(), "{:#?}", install.lines());
    assert!(install.exit(Duration::from_millis(200)).await.is_err(), "it waits for the lock");
    holder.stdin.take().unwrap().shutdown().await.unwrap();
    assert!(holder.wait().await.unwrap().success());
    let status = install.exit(LIMIT).await.unwrap();
    assert_eq!(status.code(), Some(0), "{:#?}", install.lines());
}
