/* SPDX-License-Identifier: MIT */
/*
 * check.h - the assertion macros every urnic test uses.
 *
 * A failed CHECK prints file:line, the expression and errno (what a failed verb or
 * system call left there) and exits 1, so CTest sees the failure; tests are plain programs with
 * main(), one behaviour per named function.
 */
#ifndef URNIC_TESTS_CHECK_H
#define URNIC_TESTS_CHECK_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(expr)                                                                                \
	do {                                                                                       \
		if (!(expr)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s (errno %d)\n", __FILE__,          \
				__LINE__, #expr, errno);                                           \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b);                    \
		if (check_a_ != check_b_) {                                                        \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld != %lld)\n",       \
				__FILE__, __LINE__, #a, #b, check_a_, check_b_);                   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define RUN(test)                                                                                  \
	do {                                                                                       \
		test();                                                                            \
		printf("ok %s\n", #test);                                                          \
	} while (0)

#endif
