/*
 * policy.c - priority/small_first's policy (see policy.h).
 */
#include "policy.h"

/*
 * The priority of a job of min_cpus CPUs under job_factor (see policy.h).
 * Cannot fail.
 */
uint32_t small_first_priority(uint32_t min_cpus, uint32_t job_factor)
{
	uint64_t size = 1000000 / (1 + (uint64_t) min_cpus);
	uint64_t priority = size * (job_factor ? job_factor : 1);

	return priority > UINT32_MAX ? UINT32_MAX : (uint32_t) priority;
}
