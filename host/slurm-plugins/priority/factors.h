/*
 * factors.h: the rows `sprio` shows, as the plugin last computed them.
 *
 * Slurm 22.05's sprio shows the factors of the last decay pass (or of the
 * job's submission), stored in the job; it never recomputes them. The shim
 * keeps the plugin's rows (get-priority-factors-list) of each pass and of
 * each priority_p_set, and answers priority_p_get_priority_factors_list
 * from them, filtered as Slurm's multifactor plugin filters jobs. Its own
 * mutex guards the rows; the sprio path takes the job read lock itself.
 */
#ifndef SWASM_PRIORITY_FACTORS_H
#define SWASM_PRIORITY_FACTORS_H

#include "src/common/slurm_priority.h"
#include "src/slurmctld/slurmctld.h"

#include "slurm_wasm.h"

/* Replaces every job's rows with `list` (a pass over all pending jobs). */
extern void factors_replace_all(const swasm_priority_factors_list *list);
/* Replaces the rows of the jobs in `list` (priority_p_set of one job);
 * `job_id` loses its rows when the list has none for it. */
extern void factors_replace_job(uint32_t job_id,
				const swasm_priority_factors_list *list);
/*
 * Writes a job's rows into the job as multifactor does: prio_factors (the
 * weighted factors of its partition) and, for a job in several partitions,
 * priority_array (one priority per partition, in the tier order Slurm's
 * scheduler reads). The caller holds the job write lock.
 */
extern void factors_apply(job_record_t *job_ptr);
/* priority_p_get_priority_factors_list (takes the job read lock). */
extern List factors_list(priority_factors_request_msg_t *req_msg, uid_t uid);
extern void factors_fini(void);

#endif
