/*
 * A plugin built from the static archive (tests/support/matrix.rs, Link::Plugin): a shared
 * object that links libvdsotime.a as `pkg-config --static --libs vdsotime-static` gives it,
 * without -z nodelete. Referring to every function pulls the archive's code in, and the
 * plugin exports the names as its own; link_matrix.c (-DVIA_DLOPEN) dlopens it, uses it on
 * threads that outlive its dlclose, and must survive their exit.
 */
#include <vdsotime.h>

void *const vdsotime_plugin_functions[] = {
	(void *)vdsotime_clock_gettime,	  (void *)vdsotime_clock_getres,
	(void *)vdsotime_gettimeofday,	  (void *)vdsotime_time,
	(void *)vdsotime_clock_gettime64, (void *)vdsotime_clock_getres64,
	(void *)vdsotime_gettimeofday64,  (void *)vdsotime_time64,
	(void *)vdsotime_getcpu,	  (void *)vdsotime_sched_getcpu,
	(void *)vdsotime_getrandom,	  (void *)vdsotime_getentropy,
};
