//! A process's CPU time and peak memory, read from `/proc`.

use e2e_tests::fixtures::BoxError;

/// Linux's USER_HZ: the unit of `utime` and `stime` in `/proc/<pid>/stat`.
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU the whole process used so far: the larger of the kernel's per-thread
/// run times (nanoseconds, live threads only) and its user plus system time
/// (exited threads too, in 10 ms ticks), so neither an exited thread nor the
/// ticks' coarseness makes it smaller than it was.
pub fn process_cpu_seconds(pid: u32) -> Result<f64, BoxError> {
    let threads = std::fs::read_dir(format!("/proc/{pid}/task"))?;
    let nanos: u64 = threads
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|line| line.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Ok((nanos as f64 / 1e9).max(ticked_cpu_seconds(pid)?))
}

fn ticked_cpu_seconds(pid: u32) -> Result<f64, BoxError> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name, which may hold spaces: state is the first.
    let rest = stat.rsplit_once(')').ok_or("unreadable /proc stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> Result<f64, BoxError> {
        Ok(fields.get(i).ok_or("short /proc stat")?.parse::<f64>()?)
    };
    Ok((ticks(11)? + ticks(12)?) / TICKS_PER_SECOND)
}

pub fn peak_rss_kib(pid: u32) -> Result<u64, BoxError> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).ok_or("no VmHWM")?;
    Ok(line.split_whitespace().nth(1).ok_or("no VmHWM value")?.parse()?)
}
