/*
 * policy.h - task/one_cpu's policy, apart from the contract's bindings so
 * that a native test (test/test_policy.c) can call it.
 */
#ifndef POLICY_H
#define POLICY_H

#include <stddef.h>
#include <stdint.h>

/*
 * The abstract CPU task local_id is bound to: the first thread of the
 * step's cores taken in turn (cores: the step's ncores core indices on this
 * node, in order), mapped through the node's block_map (nmap entries,
 * abstract CPU -> OS CPU) with threads_per_core threads a core. -1 when the
 * step has no core here or the layout does not cover the core.
 */
int64_t one_cpu_for_task(const uint32_t *cores, size_t ncores,
			 uint32_t local_id, const uint32_t *block_map,
			 size_t nmap, uint16_t threads_per_core);

#endif /* POLICY_H */
