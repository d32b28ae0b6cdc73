/*
 * policy.h - select/first_fit's policy, apart from the contract's bindings
 * so that a native test (test/test_policy.c) can call it: whole nodes,
 * first fit in index order, the job's required nodes first.
 */
#ifndef POLICY_H
#define POLICY_H

#include <stddef.h>
#include <stdint.h>

/* A candidate node as the policy sees it. */
struct ff_node {
	uint32_t index;		/* in the node table */
	uint16_t cpus;		/* configured CPUs */
	uint64_t memory;	/* RealMemory, MB */
	uint64_t tmp_disk;	/* TmpDisk, MB */
	int64_t free_at;	/* when no job holds it any more */
};

/* What the policy reads of a job. */
struct ff_job {
	uint32_t min_nodes;	/* at least 1 is taken */
	uint32_t max_nodes;	/* 0: no maximum */
	uint32_t min_cpus;	/* over all its nodes */
	uint16_t pn_min_cpus;	/* per node */
	uint64_t mem_per_node;	/* --mem, MB (0: none) */
	uint64_t mem_per_cpu;	/* --mem-per-cpu, MB (0: none) */
	uint64_t tmp_disk;	/* --tmp, MB */
	const uint32_t *required;	/* -w nodes, ascending */
	size_t n_required;
};

/*
 * MB of memory job asks for on node: --mem, or --mem-per-cpu times the
 * node's CPUs, 0 for none.
 */
uint64_t first_fit_memory(const struct ff_job *job, const struct ff_node *node);

/*
 * Whole nodes for job among the n candidates (in index order) that are
 * free by time: every required node, then the first candidates that can
 * hold one node's share of the job (CPUs, memory, TmpDisk) until it has
 * min_nodes and min_cpus, never more than max_nodes. Writes their indices
 * ascending into out (room for n) and returns how many; 0 when the
 * candidates free by time cannot give that (a required node missing, busy
 * or too small, too few nodes or CPUs).
 */
size_t first_fit(const struct ff_node *nodes, size_t n,
		 const struct ff_job *job, int64_t time, uint32_t *out);

#endif /* POLICY_H */
