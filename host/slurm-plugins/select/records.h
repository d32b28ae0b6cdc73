/*
 * records.h: slurmctld's records as the C ABI's structs (slurm_wasm.h) for
 * the select/wasm shim, and the component's job-test answer written back
 * into Slurm's records.
 *
 * What a translation points to: strings and bitmaps of the Slurm record
 * itself (valid while the caller holds the lock that guards it: every select
 * call runs under slurmctld's job and node locks), and arrays allocated in
 * an arena the caller frees after the library call.
 */
#ifndef SWASM_SELECT_RECORDS_H
#define SWASM_SELECT_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "src/slurmctld/slurmctld.h"

#include "slurm_wasm.h"
#include "swasm_partitions.h"

/*
 * The select configuration: slurm_conf's settings and the partition table
 * (part_list order), which node and job partition indices refer to from now
 * on. Caller holds the partition read lock or runs where nothing changes
 * partitions (node_init, reconfigure).
 */
extern void records_config(arena_t *arena, swasm_select_config *out);

/* Every node of node_record_table_ptr (holes skipped); *n is the count. */
extern swasm_node *records_nodes(arena_t *arena, size_t *n);

/*
 * `job_ptr` as a swasm_job: request details, GRES requests and, when
 * `with_resources` and the job has job_resrcs, its allocation (cores,
 * memory and the GRES of gres_list_alloc per node), copied into `arena`, so
 * that the record stays whole when the bookkeeping changes or frees the
 * job's job_resrcs (select_p_job_expand). Returns false, and logs, when the
 * job's partition is not in the table of the last records_config().
 */
extern bool records_job(arena_t *arena, job_record_t *job_ptr,
			bool with_resources, swasm_job *out);

/*
 * Writes a RUN_NOW answer into the job, as cons_common's _job_test does for
 * its own decision: job_ptr->job_resrcs (nodes, per-node CPUs, the core
 * bitmap, memory, node_req, cr_type, the CPU array) and, for each GRES
 * request of gres_list_req, gres_bit_select/gres_cnt_node_select indexed by
 * node (what gres_ctld_job_alloc copies at commit). `node_req` is the
 * NODE_CR_* requirement of the job. Returns SLURM_SUCCESS, or an error
 * (logged; job_resrcs left NULL) when the answer does not fit the nodes
 * (a core past a node's cores, a device past a node's GRES). With `linear`
 * the record is the one select/linear's bookkeeping keeps (ncpus is the CPUs
 * allocated, no node_req).
 */
extern int records_apply(job_record_t *job_ptr, const swasm_job_resources *res,
			 uint16_t node_req, uint16_t cr_type, bool linear);

/*
 * Checks an answer against what was asked: its nodes among the candidates
 * (`avail`, the job-test node bitmap on entry), per-node entries only for
 * those nodes, cores within each node's cores. Returns NULL when sound, else
 * a static description of the first fault.
 */
extern const char *records_check(const swasm_job_resources *res, bitstr_t *avail);

#endif
