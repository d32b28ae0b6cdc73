/*
 * test_policy.c - priority/small_first's policy, natively (`make test`).
 * Expectations: 1,000,000 / (1 + min_cpus) times the partition's
 * PriorityJobFactor, as the Rust and Python small_first plugins compute.
 * Exits 1 on the first difference, naming it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "policy.h"

/* Compares one answer with its expectation; exits 1 when they differ. */
static void expect(const char *what, uint32_t got, uint32_t want)
{
	if (got != want) {
		fprintf(stderr, "FAIL %s: %u, expected %u\n", what, got, want);
		exit(1);
	}
	printf("ok   %s\n", what);
}

int main(void)
{
	expect("1 CPU", small_first_priority(1, 1), 500000);
	expect("7 CPUs", small_first_priority(7, 1), 125000);
	expect("1 CPU, factor 2", small_first_priority(1, 2), 1000000);
	expect("factor 0 counts as 1", small_first_priority(1, 0), 500000);
	expect("saturates", small_first_priority(0, 65535), UINT32_MAX);
	printf("5 passed, 0 failed\n");
	return 0;
}
