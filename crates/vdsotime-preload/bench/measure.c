/* The interleaved measurement of bench.c and crates/vdsotime-c/bench/static.c; see measure.h. */
#include "measure.h"

#include <stdio.h>
#include <stdlib.h>

/* ns per call estimated by a warm-up of at least 200 µs (which also binds lazy PLT slots). */
static double calibrate(const struct lane *l)
{
	for (long calls = 64;; calls *= 4) {
		double t0 = l->now();
		double ns = l->trial(l, calls);
		if (l->now() - t0 >= 200e3 || calls >= 1L << 22)
			return ns;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The q-quantile of n sorted values, interpolated between the nearest ranks. */
static double quantile(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)pos, hi = lo + 1 < n ? lo + 1 : lo;
	return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

void measure(const struct lane *lanes, int n, int ref, const struct plan *plan, struct result *out)
{
	long *calls = calloc((size_t)n, sizeof *calls);
	double *ns = calloc((size_t)plan->rounds * n, sizeof *ns);
	double *ratio = calloc((size_t)plan->rounds, sizeof *ratio);
	if (!calls || !ns || !ratio) {
		perror("bench");
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		double est = calibrate(&lanes[i]);
		long c = (long)(plan->trial_ns / (est > 0.1 ? est : 0.1));
		calls[i] = plan->calls ? plan->calls : c < 100 ? 100 : c > 50000000 ? 50000000 : c;
	}
	for (int r = 0; r < plan->rounds; r++)
		for (int k = 0; k < n; k++) {
			int i = (r + k) % n; /* round r starts at lane r mod n */
			ns[r * n + i] = lanes[i].trial(&lanes[i], calls[i]);
		}
	for (int i = 0; i < n; i++) {
		out[i].ns = 1e300;
		for (int r = 0; r < plan->rounds; r++) {
			double v = ns[r * n + i];
			out[i].ns = v < out[i].ns ? v : out[i].ns;
			if (ref >= 0)
				ratio[r] = v / ns[r * n + ref];
		}
		out[i].med = out[i].q1 = out[i].q3 = -1;
		if (ref >= 0) {
			qsort(ratio, (size_t)plan->rounds, sizeof *ratio, cmp_double);
			out[i].med = quantile(ratio, plan->rounds, 0.5);
			out[i].q1 = quantile(ratio, plan->rounds, 0.25);
			out[i].q3 = quantile(ratio, plan->rounds, 0.75);
		}
	}
	free(calls);
	free(ns);
	free(ratio);
}
