/*
 * policy.c - gres/fpga's policy (see policy.h).
 */
#include <stdio.h>

#include "policy.h"

/* COUNT_ENV_KEY's value for count (see policy.h); -1 when it does not fit. */
int count_env_value(uint64_t count, char *value, size_t size)
{
	int n = snprintf(value, size, "%llu", (unsigned long long) count);

	return n < 0 || (size_t) n >= size ? -1 : n;
}
