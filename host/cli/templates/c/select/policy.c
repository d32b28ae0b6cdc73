/*
 * policy.c - select/first_fit's choice of nodes (see policy.h). Plain C,
 * no bindings: the component (plugin.c) and the native test call it.
 */
#include <stdbool.h>

#include "policy.h"

/* See policy.h. */
uint64_t first_fit_memory(const struct ff_job *job, const struct ff_node *node)
{
	if (job->mem_per_node)
		return job->mem_per_node;
	return job->mem_per_cpu * node->cpus;
}

/* Whether node can hold one node's share of job, free by time. */
static bool usable(const struct ff_node *node, const struct ff_job *job,
		   int64_t time)
{
	return node->free_at <= time && node->cpus >= job->pn_min_cpus &&
	       node->tmp_disk >= job->tmp_disk &&
	       first_fit_memory(job, node) <= node->memory;
}

/* Whether index is one of job's required nodes. */
static bool required(const struct ff_job *job, uint32_t index)
{
	for (size_t i = 0; i < job->n_required; i++)
		if (job->required[i] == index)
			return true;
	return false;
}

/* See policy.h. */
size_t first_fit(const struct ff_node *nodes, size_t n,
		 const struct ff_job *job, int64_t time, uint32_t *out)
{
	uint32_t want = job->min_nodes ? job->min_nodes : 1;
	size_t chosen = 0;
	uint64_t cpus = 0;

	for (size_t r = 0; r < job->n_required; r++) {
		size_t i = 0;

		while (i < n && nodes[i].index != job->required[r])
			i++;
		if (i == n || !usable(&nodes[i], job, time))
			return 0;
		out[chosen++] = nodes[i].index;
		cpus += nodes[i].cpus;
	}
	for (size_t i = 0; i < n; i++) {
		if (chosen >= want && cpus >= job->min_cpus)
			break;
		if (required(job, nodes[i].index) ||
		    !usable(&nodes[i], job, time))
			continue;
		out[chosen++] = nodes[i].index;
		cpus += nodes[i].cpus;
	}
	if (chosen < want || cpus < job->min_cpus ||
	    (job->max_nodes && chosen > job->max_nodes))
		return 0;
	for (size_t i = 1; i < chosen; i++)	/* ascending */
		for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
			uint32_t t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return chosen;
}
