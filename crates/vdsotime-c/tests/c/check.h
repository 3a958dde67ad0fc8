/*
 * The check counter shared by the C test programs (api_test.c, random_test.c,
 * link_matrix.c): CHECK counts a check, and on failure counts it and prints the condition
 * and a message to stderr. Atomic, for checks made on several threads at once. Included by
 * one source file per program.
 */
#ifndef VDSOTIME_TEST_CHECK_H
#define VDSOTIME_TEST_CHECK_H

#include <stdio.h>

static _Atomic int checks, failures;

#define CHECK(cond, ...)                                                                 \
	do {                                                                             \
		checks++;                                                                \
		if (!(cond)) {                                                           \
			failures++;                                                      \
			fprintf(stderr, "FAIL %s:%d: (%s) ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                    \
			fputc('\n', stderr);                                             \
		}                                                                        \
	} while (0)

#endif
