//! tests/c/signal_storm.c under the preload: the clocks called from signal handlers while
//! threads start and stop must neither deadlock (timeout) nor crash nor fail.

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use support::{cc, preload, run, scratch};

#[test]
fn clocks_in_signal_handlers_while_threads_start() {
    let dir = scratch("signals");
    let exe = dir.join("signal_storm");
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/signal_storm.c");
    cc(&[source], &exe, &["-pthread", "-ldl"]);
    let r = run(
        Command::new(&exe).env("LD_PRELOAD", preload()),
        &dir,
        Duration::from_secs(120),
    );
    assert!(r.status.success(), "{}\n{}{}", r.status, r.stdout, r.stderr);
    assert!(r.stdout.contains(" 0 errors"), "{}", r.stdout);
    println!("{}", r.stdout);
}
