/*
 * noauxv [NAME=VALUE...] PROGRAM [ARG...]: runs PROGRAM as a kernel booted with vdso=0
 * would: its auxiliary vector has no AT_SYSINFO_EHDR (nor i386's AT_SYSINFO). The vDSO stays
 * mapped, but nothing that looks for it through the vector (the C library, the dynamic
 * linker, libvdsotime) finds it. The NAME=VALUE pairs go into PROGRAM's environment only
 * (LD_PRELOAD of a library for another C library than this launcher's, say).
 *
 * How: the child asks to be traced and execs PROGRAM; the kernel stops it just after the
 * exec, before the first instruction of the program or of its dynamic linker. The parent
 * walks the new stack (argc, argv, envp, then the vector), retypes those entries AT_IGNORE,
 * which every reader skips, detaches and waits. Exits with the program's status (128 +
 * signal if a signal killed it), or with 125 and a message on stderr if the program cannot
 * be started so (no ptrace: QEMU user mode, a seccomp sandbox, yama ptrace_scope 3; or not
 * x86, whose stack pointer this reads).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define CANNOT 125

static int cannot(pid_t pid, const char *what)
{
	fprintf(stderr, "noauxv: %s: %s\n", what, strerror(errno));
	if (pid > 0)
		kill(pid, SIGKILL);
	return CANNOT;
}

/* The word at `addr` in the stopped child; sets *ok to 0 on failure. */
static unsigned long peek(pid_t pid, unsigned long addr, int *ok)
{
	errno = 0;
	long v = ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL);
	if (errno != 0)
		*ok = 0;
	return (unsigned long)v;
}

static int exit_status(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	int first = 1;
	while (first < argc && strchr(argv[first], '=') != NULL)
		first++;
	if (first >= argc) {
		fprintf(stderr, "usage: noauxv [NAME=VALUE...] PROGRAM [ARG...]\n");
		return 2;
	}
#if !defined(__x86_64__) && !defined(__i386__)
	errno = ENOSYS;
	return cannot(0, "reading the stack pointer (x86 only)");
#else
	pid_t pid = fork();
	if (pid < 0)
		return cannot(0, "fork");
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) {
			perror("noauxv: PTRACE_TRACEME");
			_exit(CANNOT);
		}
		for (int i = 1; i < first; i++)
			putenv(argv[i]);
		execv(argv[first], argv + first);
		perror(argv[first]);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return cannot(pid, "waitpid");
	if (!WIFSTOPPED(status))
		return exit_status(status); /* PTRACE_TRACEME or the exec failed, and said why */
	if (WSTOPSIG(status) != SIGTRAP) {
		errno = EINVAL;
		return cannot(pid, "the child stopped for another signal than the exec's SIGTRAP");
	}

	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
		return cannot(pid, "PTRACE_GETREGS");
#ifdef __x86_64__
	unsigned long sp = regs.rsp;
#else
	unsigned long sp = (unsigned long)regs.esp;
#endif
	const unsigned long word = sizeof(long);
	int ok = 1;
	unsigned long nargs = peek(pid, sp, &ok);
	unsigned long p = sp + word * (nargs + 2); /* past argc, argv[] and its NULL */
	while (ok && peek(pid, p, &ok) != 0)
		p += word; /* envp[] */
	p += word;
	int hidden = 0;
	for (; ok; p += 2 * word) {
		unsigned long type = peek(pid, p, &ok);
		if (type == AT_NULL)
			break;
		if (type == AT_SYSINFO_EHDR || type == AT_SYSINFO) {
			if (ptrace(PTRACE_POKEDATA, pid, (void *)p, (void *)(unsigned long)AT_IGNORE) != 0)
				return cannot(pid, "PTRACE_POKEDATA");
			hidden++;
		}
	}
	if (!ok)
		return cannot(pid, "PTRACE_PEEKDATA of the auxiliary vector");
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL) != 0)
		return cannot(pid, "PTRACE_DETACH");
	if (waitpid(pid, &status, 0) != pid)
		return cannot(pid, "waitpid");
	if (hidden == 0)
		fprintf(stderr, "noauxv: the kernel gave %s no vDSO to hide\n", argv[first]);
	return exit_status(status);
#endif
}
