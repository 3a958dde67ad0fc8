/* Interleaved rounds of trials, shared by bench.c and crates/vdsotime-c/bench/static.c: each
 * round runs one trial of every lane, in an order rotated by one lane each round (round r
 * starts at lane r mod n), so that a drifting machine slows every lane of a round alike. A
 * trial's call count is sized per lane from a warm-up. */
#ifndef VDSOTIME_BENCH_MEASURE_H
#define VDSOTIME_BENCH_MEASURE_H

#include "trial.h"

struct plan {
	int rounds;
	double trial_ns;
	long calls; /* 0: sized from trial_ns */
};

/* A lane's fastest trial (ns per call), and the median and quartiles over rounds of its
 * trial divided by the reference lane's trial in the same round. */
struct result {
	double ns, med, q1, q3; /* med < 0: no reference in the row */
};

/* Measures the `n` lanes in interleaved rounds, each against lane `ref` (if >= 0). */
void measure(const struct lane *lanes, int n, int ref, const struct plan *plan, struct result *out);

#endif
