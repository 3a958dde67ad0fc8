//! LoongArch 64: `syscall 0`, number in a7, arguments in a0–a5; t0–t8 are clobbered.

register_syscall!(
    "syscall 0",
    nr = "$a7",
    args = ["$a0", "$a1", "$a2", "$a3", "$a4", "$a5"],
    clobbers = ["$t0", "$t1", "$t2", "$t3", "$t4", "$t5", "$t6", "$t7", "$t8"]
);
