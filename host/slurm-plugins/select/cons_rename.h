/*
 * cons_rename.h: force-included (-include) into every Slurm source file of
 * select/cons_tres that the select/wasm shim compiles out of the configured
 * Slurm tree (cons_common/ *.c and cons_tres/ *.c, never copied into this
 * repository). It renames the plugin's identity and the select functions
 * the shim wraps, so that the shim's own definitions (select_wasm.c) are the
 * ones Slurm's plugin loader finds, and each wrapper calls cons_tres's
 * bookkeeping under its cons_ name. Calls between the Slurm files go to the
 * renamed functions too (a rename applies to a whole translation unit).
 *
 * plugin_id is renamed only in the two files that use the global (the
 * Makefile passes -Dplugin_id=cons_plugin_id to cons_common.c, whose
 * common_init() reads it to act as cons_tres, and select_cons_tres.c, which
 * defines it): the others use gres_state_t's field of the same name.
 */
#ifndef SWASM_CONS_RENAME_H
#define SWASM_CONS_RENAME_H

#define init cons_init
#define fini cons_fini
#define plugin_name cons_plugin_name
#define plugin_type cons_plugin_type
#define plugin_version cons_plugin_version
#define select_p_state_save cons_select_p_state_save
#define select_p_state_restore cons_select_p_state_restore
#define select_p_job_init cons_select_p_job_init
#define select_p_node_init cons_select_p_node_init
#define select_p_job_test cons_select_p_job_test
#define select_p_job_fini cons_select_p_job_fini
#define select_p_job_suspend cons_select_p_job_suspend
#define select_p_job_resume cons_select_p_job_resume
#define select_p_job_resized cons_select_p_job_resized
#define select_p_job_expand cons_select_p_job_expand
#define select_p_select_nodeinfo_set cons_select_p_select_nodeinfo_set
#define select_p_get_info_from_plugin cons_select_p_get_info_from_plugin
#define select_p_reconfigure cons_select_p_reconfigure
#define select_p_resv_test cons_select_p_resv_test

#endif
