//! RISC-V 64: `ecall`, number in a7, arguments in a0–a5.

register_syscall!(
    "ecall",
    nr = "a7",
    args = ["a0", "a1", "a2", "a3", "a4", "a5"]
);
