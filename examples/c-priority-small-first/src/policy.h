/*
 * policy.h - priority/small_first's policy, apart from the contract's
 * bindings so that a native test (test/test_policy.c) can call it.
 */
#ifndef POLICY_H
#define POLICY_H

#include <stdint.h>

/*
 * The priority of a job asking for min_cpus CPUs in a partition whose
 * PriorityJobFactor is job_factor (0 counts as 1):
 * 1,000,000 / (1 + min_cpus) times the factor, saturating at 0xffffffff.
 * Never 0 for min_cpus below 999,999.
 */
uint32_t small_first_priority(uint32_t min_cpus, uint32_t job_factor);

#endif /* POLICY_H */
