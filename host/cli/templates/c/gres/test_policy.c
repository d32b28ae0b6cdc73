/*
 * test_policy.c - gres/fpga's policy, natively (`make test`): the count's
 * decimal text, as the Rust and Python fpga plugins write it. Exits 1 on
 * the first difference, naming it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/* Compares one answer with its expectation; exits 1 when they differ. */
static void expect(const char *what, const char *got, const char *want)
{
	if (strcmp(got, want)) {
		fprintf(stderr, "FAIL %s: %s, expected %s\n", what, got, want);
		exit(1);
	}
	printf("ok   %s\n", what);
}

int main(void)
{
	char value[32];

	count_env_value(3, value, sizeof(value));
	expect(COUNT_ENV_KEY " of 3", value, "3");
	count_env_value(18446744073709551615ULL, value, sizeof(value));
	expect("the largest count", value, "18446744073709551615");
	if (count_env_value(12345, value, 4) != -1) {
		fprintf(stderr, "FAIL a value too long fits\n");
		exit(1);
	}
	printf("ok   a value too long is refused\n");
	printf("3 passed, 0 failed\n");
	return 0;
}
