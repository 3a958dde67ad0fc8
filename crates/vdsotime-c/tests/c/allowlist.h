/*
 * The sandbox of the C sandbox tests (sandbox.c, one_call.c): a seccomp allowlist whose
 * default action kills the process, allowing only write (a report) and exit_group (the
 * exit). A system call of another ABI (the arch field) is killed too. The architecture's
 * audit value and system call numbers come from the kernel's and the C library's headers.
 */
#ifndef VDSOTIME_TEST_ALLOWLIST_H
#define VDSOTIME_TEST_ALLOWLIST_H

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__i386__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_AARCH64
#elif defined(__arm__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_ARM
#elif defined(__riscv) && __riscv_xlen == 64
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_RISCV64
#elif defined(__s390x__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_S390X
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_PPC64LE
#else
#error "no audit architecture for this target: add it here"
#endif

/*
 * Installs the allowlist. Under QEMU user mode (VDSOTIME_EMULATOR set), which cannot
 * filter, prints SECCOMP_UNSUPPORTED and exits with success: the test then says SKIP.
 * Any other refusal exits with 3.
 */
static void kill_allowlist(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_NATIVE, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof insns / sizeof insns[0], .filter = insns };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0)
		return;
	if (getenv("VDSOTIME_EMULATOR") != NULL) {
		printf("SECCOMP_UNSUPPORTED\n");
		exit(0);
	}
	perror("seccomp filter refused");
	exit(3);
}

/* Under the allowlist: a system call it does not allow, which must kill the process. */
static inline void forbidden_call(void)
{
	syscall(SYS_getppid);
}

#endif
