/*
 * cons_rename.h: force-included (-include) into every Slurm source file of
 * select/cons_tres that the select/wasm shim compiles out of the configured
 * Slurm tree (cons_common/ *.c and cons_tres/ *.c, never copied into this
 * repository). It gives the plugin's identity and every function of the
 * select API a cons_ name, so that the shim's own definitions
 * (select_wasm.c) are the ones Slurm's plugin loader finds; each of them
 * calls the bookkeeping in use (cons_tres's or linear's) under its prefixed
 * name. Calls between the Slurm files go to the renamed functions too (a
 * rename applies to a whole translation unit).
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
#define select_p_job_begin cons_select_p_job_begin
#define select_p_job_ready cons_select_p_job_ready
#define select_p_job_expand cons_select_p_job_expand
#define select_p_job_resized cons_select_p_job_resized
#define select_p_job_signal cons_select_p_job_signal
#define select_p_job_fini cons_select_p_job_fini
#define select_p_job_suspend cons_select_p_job_suspend
#define select_p_job_resume cons_select_p_job_resume
#define select_p_step_pick_nodes cons_select_p_step_pick_nodes
#define select_p_step_start cons_select_p_step_start
#define select_p_step_finish cons_select_p_step_finish
#define select_p_select_nodeinfo_pack cons_select_p_select_nodeinfo_pack
#define select_p_select_nodeinfo_unpack cons_select_p_select_nodeinfo_unpack
#define select_p_select_nodeinfo_alloc cons_select_p_select_nodeinfo_alloc
#define select_p_select_nodeinfo_free cons_select_p_select_nodeinfo_free
#define select_p_select_nodeinfo_set_all cons_select_p_select_nodeinfo_set_all
#define select_p_select_nodeinfo_set cons_select_p_select_nodeinfo_set
#define select_p_select_nodeinfo_get cons_select_p_select_nodeinfo_get
#define select_p_select_jobinfo_alloc cons_select_p_select_jobinfo_alloc
#define select_p_select_jobinfo_free cons_select_p_select_jobinfo_free
#define select_p_select_jobinfo_set cons_select_p_select_jobinfo_set
#define select_p_select_jobinfo_get cons_select_p_select_jobinfo_get
#define select_p_select_jobinfo_copy cons_select_p_select_jobinfo_copy
#define select_p_select_jobinfo_pack cons_select_p_select_jobinfo_pack
#define select_p_select_jobinfo_unpack cons_select_p_select_jobinfo_unpack
#define select_p_select_jobinfo_sprint cons_select_p_select_jobinfo_sprint
#define select_p_select_jobinfo_xstrdup cons_select_p_select_jobinfo_xstrdup
#define select_p_get_info_from_plugin cons_select_p_get_info_from_plugin
#define select_p_update_node_config cons_select_p_update_node_config
#define select_p_reconfigure cons_select_p_reconfigure
#define select_p_resv_test cons_select_p_resv_test

#endif
