/*
 * swasm_partitions.h: slurmctld's partition table as the select and
 * priority shims give it to their plugin, and the identity of a job. Only for shims that run in
 * slurmctld: it reads part_list, which no other daemon has (a task or gres
 * shim that referenced it would not load in slurmd).
 */
#ifndef SWASM_PARTITIONS_H
#define SWASM_PARTITIONS_H

#include "src/slurmctld/slurmctld.h"

#include "swasm_records.h"

/*
 * slurmctld's partitions in part_list order, a partition's index being its
 * position: the table the select and priority shims give their plugin's
 * init, and the index by which a job or node names its partitions.
 */
typedef struct {
	part_record_t **parts;
	int n;
} swasm_part_table_t;

/*
 * Rebuilds `t` from part_list and returns every partition's record in the
 * arena (t->n of them; an array of one zeroed record when there is none):
 * nodes, OverSubscribe as max_share holds it, PriorityJobFactor and Tier,
 * the time, node-count, memory and CPU limits, LLN. Only in slurmctld; the
 * caller holds the partition read lock.
 */
extern swasm_partition *swasm_records_partitions(arena_t *arena,
						 swasm_part_table_t *t);

/* The index of `part` in `t`, or -1 when the table does not hold it. */
extern int swasm_records_part_index(const swasm_part_table_t *t,
				    part_record_t *part);

/* A job record with only the job's identity filled (the rest zeroed): id,
 * array ids, name, user and group, account and association; the strings
 * are the job record's. */
extern void swasm_records_job_identity(job_record_t *job_ptr, swasm_job *out);

#endif
