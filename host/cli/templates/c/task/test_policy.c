/*
 * test_policy.c - task/one_cpu's policy, natively (`make test`), on a node
 * of 2 cores x 2 threads with CPUs numbered core by core (core c holds CPUs
 * 2c and 2c+1, so the first thread of core 1 is CPU 2), as the Rust and
 * Python one_cpu tests. Exits 1 on the first difference, naming it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "policy.h"

/* Compares one answer with its expectation; exits 1 when they differ. */
static void expect(const char *what, int64_t got, int64_t want)
{
	if (got != want) {
		fprintf(stderr, "FAIL %s: %lld, expected %lld\n", what,
			(long long) got, (long long) want);
		exit(1);
	}
	printf("ok   %s\n", what);
}

int main(void)
{
	static const uint32_t map[] = { 0, 1, 2, 3 };
	static const uint32_t core1[] = { 1 };
	static const uint32_t both[] = { 0, 1 };

	expect("task 0 on core 1", one_cpu_for_task(core1, 1, 0, map, 4, 2), 2);
	expect("task 1 on core 1 too", one_cpu_for_task(core1, 1, 1, map, 4, 2), 2);
	expect("task 1 of cores 0-1", one_cpu_for_task(both, 2, 1, map, 4, 2), 2);
	expect("task 2 of cores 0-1", one_cpu_for_task(both, 2, 2, map, 4, 2), 0);
	expect("no core", one_cpu_for_task(NULL, 0, 0, map, 4, 2), -1);
	expect("core past the layout", one_cpu_for_task(core1, 1, 0, map, 2, 2), -1);
	printf("6 passed, 0 failed\n");
	return 0;
}
