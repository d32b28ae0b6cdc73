/*
 * policy.h - gres/fpga's policy, apart from the contract's bindings so that
 * a native test (test/test_policy.c) can call it.
 */
#ifndef POLICY_H
#define POLICY_H

#include <stddef.h>
#include <stdint.h>

/* The variable a job or step holding some of the GRES sees. */
#define COUNT_ENV_KEY "SLURM_FPGA_COUNT"

/*
 * Writes the value of COUNT_ENV_KEY for count units on this node (decimal)
 * into value (size bytes, NUL-terminated). Returns the value's length, or
 * -1 when it does not fit.
 */
int count_env_value(uint64_t count, char *value, size_t size);

#endif /* POLICY_H */
