//! Building and booting at once: one thread builds each target (the first time a boot
//! needs it, in boot order) and writes each boot's initramfs, while `--jobs` threads boot
//! whatever is ready. A machine under TCG keeps about one core busy, and a build leaves
//! cores idle in its single-crate and link stretches: booting the first machines while the
//! later targets build fills them.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::kernel::{Kernel, Unbootable};
use super::machines::Machine;
use super::prepare::{self, Context, Preparer, Ready};
use super::verdict::{self, Booted};

/// The boots prepared so far, in order, and whether the preparing is over.
#[derive(Debug)]
struct Queue<T> {
    ready: VecDeque<T>,
    finished: bool,
}

/// A queue and the condition its readers wait on.
type Shared<T> = (Mutex<Queue<T>>, Condvar);

fn shared<T>() -> Shared<T> {
    let queue = Queue {
        ready: VecDeque::new(),
        finished: false,
    };
    (Mutex::new(queue), Condvar::new())
}

/// Builds, prepares and boots every machine (`jobs` boots at a time), printing each
/// boot's report as it ends; returns what they gave, in boot order, and the time spent
/// building.
pub fn build_and_boot(
    ctx: &Context,
    p: &mut Preparer,
    machines: &[Machine],
    kernels: Vec<Result<Kernel, Unbootable>>,
    jobs: usize,
) -> (Booted, Duration) {
    let order = prepare::boot_order(machines, kernels);
    let queue: Shared<(usize, Ready)> = shared();
    let results = Mutex::new(Vec::new());
    let building = std::thread::scope(|s| {
        let preparer = s.spawn(|| {
            // Even if preparing panics, the boot threads must learn it is over.
            let _finish = Finish(&queue);
            let before = p.building;
            for (i, (m, kernel, scenario)) in order.into_iter().enumerate() {
                let ready = p.prepare(m, kernel, scenario);
                push(&queue, |q| q.ready.push_back((i, ready)));
            }
            p.building - before
        });
        for _ in 0..jobs {
            s.spawn(|| {
                while let Some((i, ready)) = next(&queue) {
                    let (booted, text) = verdict::one(ctx, &ready);
                    print!("{text}");
                    if let Ok(mut r) = results.lock() {
                        r.push((i, booted));
                    }
                }
            });
        }
        preparer.join().unwrap_or_default()
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(i, _)| *i);
    let mut all = Booted::default();
    for (_, b) in results {
        all.lines.extend(b.lines);
        all.rows.extend(b.rows);
    }
    (all, building)
}

/// Marks the preparing over when dropped.
struct Finish<'q, T>(&'q Shared<T>);

impl<T> Drop for Finish<'_, T> {
    fn drop(&mut self) {
        push(self.0, |q| q.finished = true);
    }
}

/// Changes the queue and wakes every waiting boot thread.
fn push<T>(queue: &Shared<T>, change: impl FnOnce(&mut Queue<T>)) {
    change(&mut queue.0.lock().unwrap_or_else(|e| e.into_inner()));
    queue.1.notify_all();
}

/// The next boot to start, waiting for one to be prepared; `None` once all have started.
fn next<T>(queue: &Shared<T>) -> Option<T> {
    let mut q = queue.0.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if let Some(item) = q.ready.pop_front() {
            return Some(item);
        }
        if q.finished {
            return None;
        }
        q = queue.1.wait(q).unwrap_or_else(|e| e.into_inner());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Boot threads take what is ready in order, wait for what is not, and end once the
    /// preparing is over, even if it ended by a panic.
    #[test]
    fn boots_wait_for_what_is_prepared_and_end_with_the_preparing() {
        let queue: Shared<usize> = shared();
        let taken = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    while let Some(i) = next(&queue) {
                        taken.lock().unwrap().push(i);
                    }
                });
            }
            let preparer = s.spawn(|| {
                let _finish = Finish(&queue);
                for i in 0..5 {
                    std::thread::sleep(Duration::from_millis(5));
                    push(&queue, |q| q.ready.push_back(i));
                }
                panic!("a bug while preparing");
            });
            assert!(preparer.join().is_err());
        });
        let mut taken = taken.into_inner().unwrap();
        taken.sort();
        assert_eq!(taken, [0, 1, 2, 3, 4]);
    }
}
