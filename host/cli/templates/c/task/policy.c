/*
 * policy.c - task/one_cpu's policy (see policy.h).
 */
#include "policy.h"

/*
 * The CPU of task local_id (see policy.h); -1 without a core or a CPU for
 * it.
 */
int64_t one_cpu_for_task(const uint32_t *cores, size_t ncores,
			 uint32_t local_id, const uint32_t *block_map,
			 size_t nmap, uint16_t threads_per_core)
{
	uint64_t abstract;

	if (!ncores)
		return -1;
	abstract = (uint64_t) cores[local_id % ncores] * threads_per_core;
	if (abstract >= nmap)
		return -1;
	return block_map[abstract];
}
