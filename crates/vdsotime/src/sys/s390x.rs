//! s390x: `svc 0`, number in r1, arguments in r2–r7, result in r2.

register_syscall!(
    "svc 0",
    nr = "r1",
    args = ["r2", "r3", "r4", "r5", "r6", "r7"]
);
