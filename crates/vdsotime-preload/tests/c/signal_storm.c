/*
 * Run under LD_PRELOAD=libvdsotime_preload.so by tests/signals.rs, with a timeout: calls every
 * interposed function from signal handlers (SIGALRM from a 50 us interval timer, SIGUSR1 sent
 * with pthread_kill) while threads are being created, run and joined. The first clock call of
 * the process races between a handler and the new threads, and so does each new thread's first
 * getrandom (which takes the thread's vDSO state; its exit gives it back). A lock or malloc on the clock path
 * would deadlock (the handler interrupts malloc and thread creation); a fault would crash.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#if !defined(__GLIBC__)
/* musl has getcpu only since 1.2.4: a weak reference, which the preload's definition binds. */
int getcpu(unsigned int *cpu, unsigned int *node) __attribute__((weak));
#endif

#define ROUNDS 150
#define THREADS 4
#define ITERATIONS 2000

static atomic_long handler_calls, errors;
static pthread_t main_thread;

static const clockid_t clocks[] = {
	CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE, CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME,
	CLOCK_TAI, CLOCK_REALTIME_COARSE, CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
};

static int ts_lt(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Every interposed function once; `last` is this context's previous MONOTONIC reading. */
static void call_everything(struct timespec *last)
{
	struct timespec ts;
	for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++)
		if (clock_gettime(clocks[i], &ts) != 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
			atomic_fetch_add(&errors, 1);
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0 || ts_lt(&ts, last))
		atomic_fetch_add(&errors, 1);
	*last = ts;
	if (clock_gettime(-1, &ts) != -1 || errno != EINVAL)
		atomic_fetch_add(&errors, 1);
	if (clock_getres(CLOCK_MONOTONIC, &ts) != 0 || clock_getres(CLOCK_REALTIME, NULL) != 0)
		atomic_fetch_add(&errors, 1);
	struct timeval tv;
	struct timezone tz;
	if (gettimeofday(&tv, &tz) != 0 || tv.tv_sec < 1600000000)
		atomic_fetch_add(&errors, 1);
	time_t t = 0;
	if (time(&t) < 1600000000 || time(NULL) < t)
		atomic_fetch_add(&errors, 1);
	unsigned cpu, node;
	if (sched_getcpu() < 0 || getcpu(&cpu, &node) != 0 || getcpu(NULL, NULL) != 0)
		atomic_fetch_add(&errors, 1);
	/* A thread's first getrandom takes its vDSO state: here, often from a handler. */
	unsigned char r[32];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r || getentropy(r, 16) != 0)
		atomic_fetch_add(&errors, 1);
	if (getrandom(r, 8, GRND_INSECURE | GRND_RANDOM) != -1 || errno != EINVAL)
		atomic_fetch_add(&errors, 1);
}

static __thread struct timespec handler_last, thread_last;

static void handler(int sig)
{
	(void)sig;
	int saved = errno;
	call_everything(&handler_last);
	atomic_fetch_add(&handler_calls, 1);
	errno = saved;
}

static void *worker(void *arg)
{
	pthread_t sibling = *(pthread_t *)arg;
	for (int i = 0; i < ITERATIONS; i++) {
		call_everything(&thread_last);
		if (i % 200 == 0) {
			pthread_kill(main_thread, SIGUSR1);
			pthread_kill(sibling, SIGUSR1);
		}
	}
	return NULL;
}

int main(void)
{
	/* Every name must come from the preload, or this test proves nothing. */
	void *fns[] = { (void *)clock_gettime, (void *)clock_getres, (void *)gettimeofday,
			(void *)time,          (void *)sched_getcpu, (void *)getcpu,
			(void *)getrandom,     (void *)getentropy };
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		Dl_info info;
		if (!dladdr(fns[i], &info) || !info.dli_fname || !strstr(info.dli_fname, "libvdsotime_preload.so")) {
			fprintf(stderr, "function %zu is not bound to the preload (%s)\n", i,
				info.dli_fname ? info.dli_fname : "?");
			return 2;
		}
	}

	main_thread = pthread_self();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGALRM);
	sigaddset(&sa.sa_mask, SIGUSR1);
	if (sigaction(SIGALRM, &sa, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("sigaction");
		return 2;
	}
	/* The timer starts before the process's first clock call. */
	struct itimerval it = { .it_interval = { 0, 50 }, .it_value = { 0, 50 } };
	if (setitimer(ITIMER_REAL, &it, NULL) != 0) {
		perror("setitimer");
		return 2;
	}

	for (int round = 0; round < ROUNDS; round++) {
		pthread_t threads[THREADS];
		pthread_t ids[THREADS];
		for (int i = 0; i < THREADS; i++) {
			ids[i] = i == 0 ? main_thread : threads[i - 1];
			if (pthread_create(&threads[i], NULL, worker, &ids[i]) != 0) {
				perror("pthread_create");
				return 2;
			}
			pthread_kill(threads[i], SIGUSR1); /* while it starts */
		}
		/* Worker i signals worker i-1: join from the last, so no target is gone yet. */
		for (int i = THREADS - 1; i >= 0; i--)
			pthread_join(threads[i], NULL);
	}

	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	long calls = atomic_load(&handler_calls), errs = atomic_load(&errors);
	printf("signal_storm: %d rounds x %d threads, %ld handler calls, %ld errors\n", ROUNDS, THREADS,
	       calls, errs);
	return errs == 0 && calls > 0 ? 0 : 1;
}
