/*
 * swasm_partitions.c: slurmctld's partitions and a job's identity as the C
 * ABI's records (see swasm_partitions.h).
 */
#include "config.h"

#include "src/common/list.h"
#include "src/common/xmalloc.h"

#include "swasm_partitions.h"

/* One partition's record (the table's `index`-th). */
static void _partition(int index, part_record_t *p, swasm_partition *out)
{
	out->index = index;
	out->name = p->name;
	out->nodes = swasm_records_bitmap(p->node_bitmap);
	/* max_share as slurmctld's partition reader stores OverSubscribe */
	if (p->max_share & SHARED_FORCE) {
		out->oversubscribe = SWASM_OVERSUBSCRIBE_FORCE;
		out->oversubscribe_count = p->max_share & ~SHARED_FORCE;
	} else if (p->max_share == 0) {
		out->oversubscribe = SWASM_OVERSUBSCRIBE_EXCLUSIVE;
	} else if (p->max_share > 1) {
		out->oversubscribe = SWASM_OVERSUBSCRIBE_YES;
		out->oversubscribe_count = p->max_share;
	} else {
		out->oversubscribe = SWASM_OVERSUBSCRIBE_NO;
	}
	out->priority_job_factor = p->priority_job_factor;
	out->priority_tier = p->priority_tier;
	/* NO_VAL16: the line sets no PreemptMode; the SWASM_PREEMPT_MODE_*
	 * bits are slurm.h's PREEMPT_MODE_* values */
	out->has_preempt_mode = (p->preempt_mode != NO_VAL16);
	out->preempt_mode = out->has_preempt_mode ? p->preempt_mode : 0;
	out->has_max_time = (p->max_time != INFINITE) && (p->max_time != NO_VAL);
	out->max_time = p->max_time;
	out->has_default_time = (p->default_time != INFINITE) &&
				(p->default_time != NO_VAL);
	out->default_time = p->default_time;
	out->has_max_nodes = (p->max_nodes != INFINITE) && (p->max_nodes != NO_VAL);
	out->max_nodes = p->max_nodes;
	out->min_nodes = p->min_nodes;
	out->default_memory = swasm_records_memory(p->def_mem_per_cpu);
	out->max_memory = swasm_records_memory(p->max_mem_per_cpu);
	out->has_max_cpus_per_node = (p->max_cpus_per_node != INFINITE) &&
				     (p->max_cpus_per_node != NO_VAL);
	out->max_cpus_per_node = p->max_cpus_per_node;
	out->lln = p->flags & PART_FLAG_LLN;
}

extern swasm_partition *swasm_records_partitions(arena_t *arena,
						 swasm_part_table_t *t)
{
	swasm_partition *out;
	part_record_t *p;
	ListIterator itr;
	int cap = part_list ? list_count(part_list) : 0, i = 0;

	xfree(t->parts);
	t->parts = xcalloc(cap ? cap : 1, sizeof(*t->parts));
	out = arena_alloc(arena, (cap ? cap : 1) * sizeof(*out));
	if (part_list) {
		itr = list_iterator_create(part_list);
		while ((p = list_next(itr)) && (i < cap)) {
			t->parts[i] = p;
			_partition(i, p, &out[i]);
			i++;
		}
		list_iterator_destroy(itr);
	}
	t->n = i;
	return out;
}

extern int swasm_records_part_index(const swasm_part_table_t *t,
				    part_record_t *part)
{
	for (int i = 0; i < t->n; i++) {
		if (t->parts[i] == part)
			return i;
	}
	return -1;
}

extern void swasm_records_job_identity(job_record_t *job_ptr, swasm_job *out)
{
	memset(out, 0, sizeof(*out));
	out->job_id = job_ptr->job_id;
	out->array_job_id = job_ptr->array_job_id;
	out->has_array_task_id = (job_ptr->array_task_id != NO_VAL);
	out->array_task_id = job_ptr->array_task_id;
	out->name = job_ptr->name;
	out->user_id = job_ptr->user_id;
	out->group_id = job_ptr->group_id;
	out->account = job_ptr->account;
	out->assoc_id = job_ptr->assoc_id;
}
