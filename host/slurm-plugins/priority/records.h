/*
 * records.h: Slurm's records as the C ABI's structs (slurm_wasm.h), for the
 * priority/wasm shim.
 *
 * What a translation points to: strings and bitmaps of the Slurm record
 * itself (valid while the caller holds the lock that guards it), and arrays
 * allocated in an arena that the caller frees after the library call (the
 * library copies what it needs during the call).
 */
#ifndef SWASM_PRIORITY_RECORDS_H
#define SWASM_PRIORITY_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "src/common/assoc_mgr.h"
#include "src/slurmctld/slurmctld.h"

#include "slurm_wasm.h"
#include "swasm_partitions.h"

/*
 * The priority configuration from slurm_conf, the partition table and
 * assoc_mgr's TRES, and the partition table the jobs' partition indices
 * refer to from now on. The caller holds the partition read lock (or runs
 * where nothing changes partitions: the plugin's init). Takes the assoc_mgr
 * TRES read lock itself.
 */
extern void records_config(arena_t *arena, swasm_priority_config *out);

/* Whether partitions changed (last_part_update) since records_config(). */
extern bool records_partitions_changed(void);

/*
 * `job_ptr` as a swasm_job. Running jobs carry their allocated TRES and
 * billable TRES; every job its requested TRES. With `start_floor` non-zero,
 * a start time before it is given as `start_floor` (see the pass: a plugin
 * that does not know when usage was last charged). Returns false, and logs,
 * when the job names a partition that is not in the table of the last
 * records_config() (the caller then rebuilds the configuration).
 */
extern bool records_job(arena_t *arena, job_record_t *job_ptr,
			time_t start_floor, swasm_job *out);

/* What of a translated job the plugin's answers depend on, as a hash. */
extern uint64_t records_job_fingerprint(const swasm_job *job);

/* An association and a QOS (caller holds the assoc_mgr read locks; the
 * strings are copied, so the result outlives the locks). The fingerprint
 * covers what an update carries besides usage. */
extern void records_association(arena_t *arena, slurmdb_assoc_rec_t *assoc,
				swasm_association *out);
extern uint64_t records_association_fingerprint(const swasm_association *a);
extern void records_qos(arena_t *arena, slurmdb_qos_rec_t *qos, swasm_qos *out);
extern uint64_t records_qos_fingerprint(const swasm_qos *q);

/* The TRES index of `name` (case-insensitive), or -1. */
extern int records_tres_index(const char *name);

#endif
