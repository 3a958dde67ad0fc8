//! arm64: `svc #0`, number in x8, arguments in x0–x5.

register_syscall!(
    "svc 0",
    nr = "x8",
    args = ["x0", "x1", "x2", "x3", "x4", "x5"]
);
