/*
 * usage.h: Slurm's own usage bookkeeping for the priority/wasm shim (see
 * usage.c). Locks: as Slurm's multifactor plugin takes them; usage_charge()
 * needs the job write lock held by the caller, the rest take what they need.
 */
#ifndef SWASM_PRIORITY_USAGE_H
#define SWASM_PRIORITY_USAGE_H

#include <stdbool.h>
#include <time.h>

#include "src/slurmctld/slurmctld.h"

/* Reads the Priority* settings of slurm_conf (weights, flags, decay). */
extern void usage_setup(void);
/* Reads StateSaveLocation/priority_last_decay_ran (last pass, last usage
 * reset) and gives back the run-seconds running jobs used before it, as
 * multifactor does at start-up. */
extern void usage_start(time_t *last_reset);
/* When the last pass ran (0: never). */
extern time_t usage_last_ran(void);
extern bool usage_fair_tree(void);
/* PriorityWeightTRES by TRES index (NULL when none), for sprio. */
extern const double *usage_tres_weights(void);
/* PriorityUsageResetPeriod: clears association and QOS usage. */
extern void usage_reset(void);
extern time_t usage_next_reset(uint16_t reset_period, time_t last_reset);
/* Decays association and QOS usage from the last pass to `now`; false when
 * no time passed or no pass ran before (nothing decayed). */
extern bool usage_decay(time_t now);
/* Whether a pass charges `job_ptr` (running, or pending with
 * CALCULATE_RUNNING, with a start time and an association). */
extern bool usage_charged(job_record_t *job_ptr);
/* Charges `job_ptr` from the last pass to `now` (usage_raw, usage_tres_raw,
 * grp_used_wall, grp_used_tres_run_secs of its associations and QOS). */
extern void usage_charge(job_record_t *job_ptr, time_t now);
/* Records the pass at `now` in StateSaveLocation/priority_last_decay_ran. */
extern void usage_pass_done(time_t now, time_t last_reset);
/* priority_p_job_end of multifactor: the last stretch of usage, and the
 * run-seconds the job no longer holds. */
extern void usage_job_end(job_record_t *job_ptr);
/* priority_p_job_end without usage (a plugin that keeps none, as
 * priority/basic): gives back the run-seconds reserved to the time limit. */
extern void usage_job_end_unused(job_record_t *job_ptr);
/* priority_p_reconfig's bookkeeping: settings read again, shares
 * renormalised when Fair Tree was switched, run-seconds rebuilt when
 * `assoc_clear`. */
extern void usage_reconfig(bool assoc_clear);
extern void usage_fini(void);

#endif
