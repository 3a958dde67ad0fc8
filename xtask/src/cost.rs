//! What a cold run of an expensive task costs (nothing installed, nothing cached), printed
//! before the task starts so that nobody starts one unawares. The figures live in
//! docs/testing.md ("What a cold run costs"), from a full CI run on a fresh 2-core
//! machine; a unit test keeps each notice's time equal to that table's.

/// A task's cold-run cost, as docs/testing.md states it.
pub struct Cost {
    /// The task, as `cargo xtask <task>` names it.
    pub task: &'static str,
    /// Seconds a cold run took on a fresh 2-core machine, in its place in CI (dist: with
    /// --test; kernels: every machine; fleet: with the packages `dist` had built and the
    /// tools the steps before it installed).
    pub seconds: u32,
    /// What it takes on disk.
    pub disk: &'static str,
    /// What it installs on the machine.
    pub installs: &'static str,
}

pub const DIST: Cost = Cost {
    task: "dist",
    seconds: 331,
    disk: "110 MiB for the amd64 packages' build; the arm64 build, the tarballs' and \
           --test's three mmdebstrap roots are not measured",
    installs: "with apt: debhelper, lintian, mmdebstrap, arch-test, clang and, for arm64, \
               the cross C library, binutils and backports' qemu-user (359 packages on a \
               minimal Debian 12, 376 with arm64); rustup: Rust's musl and aarch64 \
               standard libraries; a binfmt_misc handler for aarch64",
};

pub const KERNELS: Cost = Cost {
    task: "kernels",
    seconds: 1314,
    disk: "the kernel images under target/xtask-kernels/cache, and while the x86_64-aux \
           kernel builds, its source tree and objects there too (over 1.8 GiB, removed \
           after; the kernel is kept under ~/.cache/vdsotime/kernels)",
    installs: "with apt: backports' qemu-system for each architecture chosen, the linkers \
               `cargo xtask cross` uses, and for x86_64-aux the kernel's build tools \
               (flex, bison, bc, libelf-dev, xz-utils) and musl-tools; rustup: each \
               target's standard library",
};

pub const FLEET: Cost = Cost {
    task: "fleet",
    seconds: 264,
    disk: "534 MiB for the Debian 13 root under ~/.cache/vdsotime/fleet, 700 MiB under \
           target/fleet (a sparse 3 GiB disk image), and 110 MiB to build the amd64 \
           packages when target/packages has none (which adds about 345 s)",
    installs: "with apt: mmdebstrap, qemu-system-x86 and e2fsprogs, and what `cargo xtask \
               dist` installs for the amd64 packages when it must build them",
};

/// Prints `cost` before the task starts.
pub fn announce(cost: &Cost) {
    println!(
        "cargo xtask {}: a cold run (nothing installed or cached) took {} s ({} min) on \
         a 2-core machine.\n  disk: {}\n  installs: {}\n  (docs/testing.md, \"What a cold \
         run costs\"; a second run reuses the caches)\n",
        cost.task,
        cost.seconds,
        cost.seconds.div_ceil(60),
        cost.disk,
        cost.installs
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each task's row of docs/testing.md's table names the notice's time.
    #[test]
    fn the_notices_say_what_docs_testing_md_says() {
        let root = crate::toolchain::workspace_root();
        let doc = std::fs::read_to_string(root.join("docs/testing.md")).unwrap();
        let section = doc
            .split("## What a cold run costs")
            .nth(1)
            .expect("docs/testing.md: no section \"What a cold run costs\"");
        for cost in [DIST, KERNELS, FLEET] {
            let row = section
                .lines()
                .find(|l| l.starts_with(&format!("| `cargo xtask {}", cost.task)))
                .unwrap_or_else(|| panic!("no row for {}", cost.task));
            assert!(row.contains(&format!("| {} s", cost.seconds)), "{row}");
        }
    }
}
