/*
 * records.h: what the gres shims (gres_gpu.so, gres_mps.so) translate
 * between Slurm 22.05's gres records and the C ABI (slurm_wasm.h): gres.conf
 * records (gres_slurmd_conf_t) both ways, the node a gres.conf applies to,
 * allocations, environment edits on a `char ***`, device lists
 * (gres_device_t) and the job an epilog info describes.
 *
 * Translations into the ABI allocate in the caller's arena (freed after the
 * library call); translations back into Slurm allocate with xmalloc, as the
 * records Slurm frees expect.
 */
#ifndef SWASM_GRES_RECORDS_H
#define SWASM_GRES_RECORDS_H

#include "src/common/gres.h"
#include "src/common/list.h"

#include "slurm_wasm.h"

#include "swasm_records.h"

/* The node of this slurmd: its name, CPUs, sockets, cores and threads and
 * the Gres= of its slurm.conf line (from the node table slurmd built). In
 * another daemon (slurmctld's CLOUD nodes: node_config_load_t names no node)
 * only `cpu_cnt` is known. */
extern void records_node(arena_t *arena, uint32_t cpu_cnt,
			 swasm_node_hardware *out);

/* Every record of `gres_conf_list` as an ABI record (all GRES names: the
 * plugin picks its own). `cores` is the node's core count (the size of the
 * Cores= bitmaps). */
extern swasm_gres_conf_record *records_conf(arena_t *arena, List gres_conf_list,
					    uint32_t cores, size_t *n);

/*
 * Replaces the records of GRES `name` in `gres_conf_list` with those of
 * `result` (the plugin's answer), keeping the other GRES's records where
 * they are. A result record equal in name, type, files and count to one
 * Slurm parsed keeps Slurm's record (its flags and the rest), taking the
 * result's cores, links and unique id; any other becomes a new record built
 * from the result. `cores` is the node's core count. The records of
 * `name` take the place of the first one Slurm had.
 */
extern void records_conf_apply(List gres_conf_list, const char *name,
			       const swasm_node_config_result *result,
			       uint32_t cores, uint32_t cpu_cnt);

/* Applies environment edits in order: env_array_overwrite for a set,
 * unsetenvp for an unset. */
extern void records_env_apply(char ***env, const swasm_env_change_list *edits);

/* Slurm's gres_internal_flags_t as SWASM_GRES_ENV_* bits. */
extern uint32_t records_env_flags(gres_internal_flags_t flags);

/* Whether `list` (gres_device_t) holds the same devices as `devices`, in
 * order. */
extern bool records_devices_equal(List list, const swasm_gres_device_list *devices);

/* A new list of gres_device_t (destroy_gres_device frees them) from the
 * plugin's devices; block or character device from a stat of the path, as
 * Slurm's gres_common does. */
extern List records_devices(const swasm_gres_device_list *devices);

/*
 * The job of an epilog info: node `i` of the job (0 .. node_cnt-1) holds
 * gres_bit_alloc[i] / gres_cnt_node_alloc[i] of GRES `name`, the node
 * index being its position in the job.
 */
extern void records_epilog_job(arena_t *arena, const char *name,
			       gres_epilog_info_t *gres_ei, swasm_job *out);

#endif
