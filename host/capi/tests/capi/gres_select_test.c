/*
 * A C caller of libslurm_wasm's gres and select kinds, as the gres_gpu.so,
 * gres_mps.so and select/wasm shims would be: driven by
 * tests/c_gres_select.rs, which writes the host configurations (and a fake
 * GPU inventory served through `gpu = "file:gpus.toml"`) into the
 * directory given as argv[1], compiles this file with the system cc, runs
 * it and compares what it prints with what the Rust API answers for the
 * same input.
 *
 * Output: one result per line, `<key> <values...>`; bitmaps as their set
 * bits joined by commas ("-" for none); doubles as %.17g. Exit status 0
 * unless a call that must succeed failed (the reason on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm_wasm.h"
#include "common.h"


/* ---- helpers ---- */




/* An error line: `error.<name> <code> <message>`; the call must have failed. */
static void expect_error(const char *name, int rc, const swasm_error *err)
{
	if (rc == SWASM_SUCCESS) {
		fprintf(stderr, "FAIL: error.%s: the call succeeded\n", name);
		exit(1);
	}
	printf("error.%s %d %s\n", name, err->code, err->message ? err->message : "(null)");
}

/* `<key> <code>`: 0 on success, else the error's code. */

/* Words for the bitmaps this program builds (each at most 64 bits). */
static uint64_t word_pool[256];
static int word_next;

static swasm_bitmap bm(uint32_t len, uint64_t mask)
{
	swasm_bitmap b = { len, NULL };
	if (len) {
		if (word_next == 256)
			die("word pool exhausted", NULL);
		word_pool[word_next] = mask;
		b.words = &word_pool[word_next++];
	}
	return b;
}

static void print_bits(const swasm_bitmap *b)
{
	int any = 0;
	for (uint32_t i = 0; b && i < b->len; i++) {
		if (b->words[i / 64] >> (i % 64) & 1) {
			printf("%s%u", any ? "," : "", i);
			any = 1;
		}
	}
	if (!any)
		printf("-");
}

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

static void print_strings(const char *const *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? "," : "", items[i]);
	if (!n)
		printf("-");
}

/* ---- records, as tests/c_gres_select.rs builds them with the host's fixtures ---- */

static const char *gres_types[] = { "gpu", "mps" };

static swasm_cluster_config cluster(void)
{
	swasm_cluster_config c = {
		.cluster_name = "cluster",
		.kill_wait = 30,
		.gres_types = gres_types,
		.n_gres_types = 2,
	};
	return c;
}


/* fixtures::step(job, 0) */
static swasm_step step(uint32_t job_id)
{
	swasm_step s = {
		.job_id = job_id,
		.user_id = 1000,
		.group_id = 1000,
		.node_name = "n1",
		.local_tasks = 1,
		.total_tasks = 1,
		.cpus_per_task = 1,
		.cpu_bind = "",
	};
	return s;
}

/* ---- gres ---- */

static void print_env(const char *key, const swasm_env_change_list *l)
{
	for (size_t i = 0; i < l->n_items; i++) {
		const swasm_env_change *c = &l->items[i];
		if (c->kind == SWASM_ENV_SET)
			printf("%s %s=%s\n", key, c->key, c->value);
		else
			printf("%s -%s\n", key, c->key);
	}
	if (!l->n_items)
		printf("%s (none)\n", key);
}

static void print_node_config(const char *key, const swasm_node_config_result *r)
{
	for (size_t i = 0; i < r->n_records; i++) {
		const swasm_gres_conf_record *g = &r->records[i];
		printf("%s.record %s %s %s ", key, g->origin, g->name, or_dash(g->type_name));
		print_strings(g->files, g->n_files);
		printf(" %llu ", (unsigned long long)g->count);
		print_bits(g->cores);
		printf(" %s ", or_dash(g->links));
		print_strings(g->flags, g->n_flags);
		printf(" %s\n", or_dash(g->unique_id));
	}
	for (size_t i = 0; i < r->n_warnings; i++)
		printf("%s.warning %s\n", key, r->warnings[i]);
}

static swasm_gres_allocation gpu_alloc(const char *name, const swasm_bitmap *devices,
				       uint64_t count)
{
	swasm_gres_allocation a = { .name = name, .count = count, .devices = devices };
	return a;
}

static void set_env(const char *key, int rc, swasm_env_change_list *env, swasm_error *err)
{
	check(rc, key, err);
	print_env(key, env);
	swasm_env_change_list_free(env);
}

static void gres(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_host *h = swasm_host_open(path_of("gres.toml"), 0, SWASM_LOG_INFO, NULL, NULL, &err);
	if (!h)
		die("gres.toml", &err);

	/* gres/gpu, its GPUs detected through the `gpu` grant from the
	 * inventory the host configuration names. */
	swasm_gres_plugin *gpu = swasm_gres_open(h, "gres.gpu", &err);
	if (!gpu)
		die("open gres.gpu", &err);
	swasm_plugin_identity id = { 0 };
	check(swasm_gres_identity(gpu, &id, &err), "gres identity", &err);
	printf("gres.gpu.identity %s %#x\n", id.plugin_type, id.plugin_version);
	swasm_plugin_identity_free(&id);

	swasm_gres_config config = { .cluster = cluster(), .auto_detect = "nvml" };
	check(swasm_gres_init(gpu, &config, &err), "gres init", &err);
	swasm_gres_count gpu2 = { "gpu", NULL, 2 };
	swasm_node_hardware hw = {
		.name = "n1",
		.cpus = 8,
		.sockets = 1,
		.cores_per_socket = 8,
		.threads_per_core = 1,
		.configured = &gpu2,
		.n_configured = 1,
	};
	swasm_node_config_result loaded = { 0 };
	check(swasm_gres_node_config_load(gpu, NULL, 0, &hw, &loaded, &err), "node_config_load",
	      &err);
	print_node_config("gres.gpu", &loaded);
	swasm_node_config_result_free(&loaded);

	swasm_bitmap dev1 = bm(2, 0x2), dev01 = bm(2, 0x3);
	swasm_gres_allocation one = gpu_alloc("gpu", &dev1, 1), both = gpu_alloc("gpu", &dev01, 2);
	swasm_env_change_list env = { 0 };
	set_env("gres.gpu.job_env", swasm_gres_job_set_env(gpu, &one, 0, &env, &err), &env, &err);
	set_env("gres.gpu.step_env",
		swasm_gres_step_set_env(gpu, &both, SWASM_GRES_ENV_VERBOSE, &env, &err), &env,
		&err);
	set_env("gres.gpu.task_env", swasm_gres_task_set_env(gpu, &both, &dev1, 0, &env, &err),
		&env, &err);
	set_env("gres.gpu.job_env_none", swasm_gres_job_set_env(gpu, NULL, 0, &env, &err), &env,
		&err);
	set_env("gres.gpu.job_env_protected",
		swasm_gres_job_set_env(gpu, NULL, SWASM_GRES_ENV_PROTECT_ENV, &env, &err), &env,
		&err);

	swasm_gres_device_list devices = { 0 };
	check(swasm_gres_get_devices(gpu, &devices, &err), "get_devices", &err);
	for (size_t i = 0; i < devices.n_items; i++) {
		const swasm_gres_device *d = &devices.items[i];
		printf("gres.gpu.device %u %d %u %u %s %s\n", d->index, d->dev_num, d->major,
		       d->minor, d->path, or_dash(d->unique_id));
	}
	swasm_gres_device_list_free(&devices);

	swasm_gres_info_value info = { 0 };
	check(swasm_gres_job_info(gpu, &both, SWASM_GRES_INFO_COUNT, &info, &err), "job_info",
	      &err);
	printf("gres.gpu.job_info_count %u %llu\n", info.kind, (unsigned long long)info.count);
	swasm_gres_info_value_free(&info);
	check(swasm_gres_job_info(gpu, &both, SWASM_GRES_INFO_BITMAP, &info, &err), "job_info",
	      &err);
	printf("gres.gpu.job_info_bitmap %u ", info.kind);
	print_bits(&info.devices);
	printf("\n");
	swasm_gres_info_value_free(&info);
	check(swasm_gres_step_info(gpu, &one, SWASM_GRES_INFO_COUNT, &info, &err), "step_info",
	      &err);
	printf("gres.gpu.step_info_count %u %llu\n", info.kind, (unsigned long long)info.count);
	swasm_gres_info_value_free(&info);

	/* slurmd hands its state to slurmstepd: another instance of the slot. */
	swasm_bytes stepd = { 0 };
	check(swasm_gres_send_stepd(gpu, &stepd, &err), "send_stepd", &err);
	swasm_gres_plugin *stepd_gpu = swasm_gres_open(h, "gres.gpu", &err);
	if (!stepd_gpu)
		die("open gres.gpu for the step", &err);
	check(swasm_gres_init(stepd_gpu, &config, &err), "stepd init", &err);
	check(swasm_gres_recv_stepd(stepd_gpu, stepd.data, stepd.len, &err), "recv_stepd", &err);
	swasm_bytes_free(&stepd);
	set_env("gres.gpu.stepd_env", swasm_gres_step_set_env(stepd_gpu, &one, 0, &env, &err),
		&env, &err);

	print_rc("gres.gpu.hw_init",
		 swasm_gres_step_hardware_init(gpu, &dev1, "gpu:high,memory=high", &err), &err);
	print_rc("gres.gpu.hw_fini", swasm_gres_step_hardware_fini(gpu, &err), &err);

	/* The epilog of a job holding both GPUs of node 0. */
	swasm_node_resources on_node = {
		.node_index = 0,
		.cores = bm(8, 0x3),
		.cpus = 2,
		.gres = &both,
		.n_gres = 1,
	};
	swasm_job_resources resources = {
		.nodes = bm(1, 0x1),
		.ncpus = 2,
		.per_node = &on_node,
		.n_per_node = 1,
	};
	swasm_job epilog_job = job(5, "job5");
	epilog_job.state = SWASM_JOB_RUNNING;
	epilog_job.resources = &resources;
	swasm_gres_epilog_info *epilog = NULL;
	check(swasm_gres_epilog_build_env(gpu, &epilog_job, &epilog, &err), "epilog_build_env",
	      &err);
	printf("gres.gpu.epilog_info %d\n", epilog != NULL);
	if (epilog) {
		/* An info belongs to the handle that made it. */
		expect_error("epilog_other_handle",
			     swasm_gres_epilog_set_env(stepd_gpu, epilog, 0, &env, &err), &err);
		set_env("gres.gpu.epilog_env", swasm_gres_epilog_set_env(gpu, epilog, 0, &env, &err),
			&env, &err);
		print_rc("gres.gpu.epilog_free", swasm_gres_epilog_info_free(gpu, epilog, &err),
			 &err);
	}
	swasm_step s = step(5);
	print_rc("gres.gpu.step_context", swasm_gres_step_context(gpu, &s, &err), &err);
	print_rc("gres.gpu.fini", swasm_gres_fini(gpu, &err), &err);

	/* gres/mps from gres.conf records. */
	swasm_gres_plugin *mps = swasm_gres_open(h, "gres.mps", &err);
	if (!mps)
		die("open gres.mps", &err);
	swasm_gres_config plain = { .cluster = cluster() };
	check(swasm_gres_init(mps, &plain, &err), "mps init", &err);
	const char *files[] = { "/dev/nvidia0", "/dev/nvidia1" };
	swasm_gres_conf_record conf = {
		.origin = "gres.conf:1",
		.name = "gpu",
		.files = files,
		.n_files = 2,
		.count = 2,
	};
	swasm_gres_count configured[] = { { "gpu", NULL, 2 }, { "mps", NULL, 200 } };
	swasm_node_hardware mps_hw = hw;
	mps_hw.configured = configured;
	mps_hw.n_configured = 2;
	check(swasm_gres_node_config_load(mps, &conf, 1, &mps_hw, &loaded, &err),
	      "mps node_config_load", &err);
	print_node_config("gres.mps", &loaded);
	swasm_node_config_result_free(&loaded);
	swasm_bitmap dev0 = bm(2, 0x1);
	swasm_gres_allocation shares = gpu_alloc("mps", &dev0, 100);
	set_env("gres.mps.job_env", swasm_gres_job_set_env(mps, &shares, 0, &env, &err), &env,
		&err);
	print_rc("gres.mps.fini", swasm_gres_fini(mps, &err), &err);

	/* Errors: a call before init, a bad gres.conf line, unknown flag bits,
	 * usable devices without an allocation, a slot of another kind. */
	swasm_gres_plugin *fresh = swasm_gres_open(h, "gres.gpu", &err);
	if (!fresh)
		die("open gres.gpu again", &err);
	expect_error("gres_before_init", swasm_gres_job_set_env(fresh, &one, 0, &env, &err), &err);
	check(swasm_gres_init(fresh, &plain, &err), "init again", &err);
	swasm_gres_conf_record bad = conf;
	bad.origin = "gres.conf:4";
	bad.count = 3;
	expect_error("bad_gres_conf", swasm_gres_node_config_load(fresh, &bad, 1, &hw, &loaded, &err),
		     &err);
	expect_error("bad_env_flags", swasm_gres_job_set_env(fresh, &one, 4, &env, &err), &err);
	expect_error("usable_without_allocation",
		     swasm_gres_task_set_env(fresh, NULL, &dev1, 0, &env, &err), &err);
	if (swasm_gres_open(h, "select", &err))
		die("a select slot opened as a gres slot", NULL);
	expect_error("gres_wrong_slot_kind", SWASM_ERROR, &err);

	swasm_gres_close(fresh);
	swasm_gres_close(mps);
	swasm_gres_close(stepd_gpu);
	swasm_gres_close(gpu);
	swasm_host_close(h);
	swasm_error_clear(&err);
}

/* ---- select ---- */

/* A table of three nodes, 2 sockets x 2 cores, 4000 MB; n0 and n1 hold two
 * GPUs each, one per socket. */
#define NODES 3
static swasm_node nodes[NODES];
static swasm_gres_count node_gpus = { "gpu", NULL, 2 };
static swasm_gres_device_group gpu_groups[2];
static swasm_bitmap socket_cores[2];
static char node_names[NODES][8];

static void build_nodes(void)
{
	socket_cores[0] = bm(4, 0x3);
	socket_cores[1] = bm(4, 0xc);
	for (int g = 0; g < 2; g++) {
		swasm_gres_device_group group = {
			.name = "gpu",
			.count = 1,
			.cores = &socket_cores[g],
		};
		gpu_groups[g] = group;
	}
	for (uint32_t i = 0; i < NODES; i++) {
		snprintf(node_names[i], sizeof(node_names[i]), "n%u", i);
		swasm_node n = {
			.index = i,
			.name = node_names[i],
			.cpus = 4,
			.boards = 1,
			.sockets = 2,
			.cores_per_socket = 2,
			.threads_per_core = 1,
			.real_memory = 4000,
			.weight = 1,
			.state = SWASM_NODE_STATE_IDLE,
			.partitions = partition_zero,
			.n_partitions = 1,
		};
		if (i < 2) {
			n.gres = &node_gpus;
			n.n_gres = 1;
			n.gres_topology = gpu_groups;
			n.n_gres_topology = 2;
		}
		nodes[i] = n;
	}
}

static swasm_select_config select_config(uint16_t param, const char *type,
					 swasm_partition *part, swasm_key_value *raw)
{
	raw->key = "SelectType";
	raw->value = type;
	swasm_partition p = {
		.index = 0,
		.name = "debug",
		.nodes = bm(NODES, (1u << NODES) - 1),
		.oversubscribe = SWASM_OVERSUBSCRIBE_NO,
		.priority_job_factor = 1,
		.priority_tier = 1,
		.min_nodes = 1,
	};
	*part = p;
	swasm_select_config c = {
		.cluster = cluster(),
		.partitions = part,
		.n_partitions = 1,
	};
	c.cluster.select_type_parameters = param;
	c.cluster.raw = raw;
	c.cluster.n_raw = 1;
	return c;
}

static swasm_job_test_request request(const swasm_job *j, uint32_t mode)
{
	swasm_job_test_request r = {
		.job = j,
		.candidates = bm(NODES, (1u << NODES) - 1),
		.min_nodes = j->details.min_nodes,
		.max_nodes = j->details.min_nodes,
		.req_nodes = j->details.min_nodes,
		.mode = mode,
	};
	return r;
}

static void print_result(const char *key, int rc, const swasm_job_test_result *r,
			 const swasm_error *err)
{
	if (rc != SWASM_SUCCESS) {
		printf("%s err %d\n", key, err->code);
		return;
	}
	printf("%s ok ", key);
	print_bits(&r->resources.nodes);
	printf(" %u %zu %d", r->resources.ncpus, r->resources.n_per_node,
	       r->resources.whole_nodes);
	if (r->has_start_time)
		printf(" start=%lld", (long long)r->start_time);
	for (size_t i = 0; i < r->n_preemptees; i++)
		printf(" preempt=%u", r->preemptees[i]);
	printf("\n");
	for (size_t i = 0; i < r->resources.n_per_node; i++) {
		const swasm_node_resources *n = &r->resources.per_node[i];
		printf("%s.node %u ", key, n->node_index);
		print_bits(&n->cores);
		printf(" %u %llu\n", n->cpus, (unsigned long long)n->memory);
		for (size_t g = 0; g < n->n_gres; g++) {
			const swasm_gres_allocation *a = &n->gres[g];
			printf("%s.gres %u %s %s %llu ", key, n->node_index, a->name,
			       or_dash(a->type_name), (unsigned long long)a->count);
			print_bits(a->devices);
			printf("\n");
		}
	}
}

static void print_nodeinfo(const char *key, int rc, swasm_nodeinfo_value *v,
			   const swasm_error *err)
{
	if (rc != SWASM_SUCCESS) {
		printf("%s err %d\n", key, err->code);
		return;
	}
	printf("%s %u %u %llu %s %.17g\n", key, v->kind, v->count, (unsigned long long)v->memory,
	       or_dash(v->text), v->weighted);
	swasm_nodeinfo_value_free(v);
}

static void print_jobinfo(const char *key, int rc, swasm_jobinfo_value *v,
			  const swasm_error *err)
{
	if (rc != SWASM_SUCCESS) {
		printf("%s err %d\n", key, err->code);
		return;
	}
	printf("%s %u %s %d %u\n", key, v->kind, or_dash(v->text), v->flag, v->count);
	swasm_jobinfo_value_free(v);
}

static void print_text(const char *key, int rc, char **text, const swasm_error *err)
{
	if (rc != SWASM_SUCCESS) {
		printf("%s err %d\n", key, err->code);
		return;
	}
	printf("%s [%s]\n", key, *text);
	swasm_string_free(*text);
	*text = NULL;
}

/* Every contract function of one select plugin, keys `sel.<tag>.*`. */
static void select_plugin(const char *toml, const char *tag, uint16_t param,
			  const char *type, int with_gres)
{
	char key[128];
#define K(name) (snprintf(key, sizeof(key), "sel.%s.%s", tag, name), key)
	swasm_error err = SWASM_ERROR_INIT;
	swasm_host *h = swasm_host_open(path_of(toml), 0, SWASM_LOG_INFO, NULL, NULL, &err);
	if (!h)
		die(toml, &err);
	swasm_select_plugin *p = swasm_select_open(h, NULL, &err);
	if (!p)
		die("open select", &err);

	swasm_plugin_identity id = { 0 };
	check(swasm_select_identity(p, &id, &err), "select identity", &err);
	printf("%s %s %u %u\n", K("identity"), id.plugin_type, id.has_plugin_id, id.plugin_id);
	swasm_plugin_identity_free(&id);

	swasm_partition part;
	swasm_key_value raw;
	swasm_select_config config = select_config(param, type, &part, &raw);
	check(swasm_select_init(p, &config, &err), "select init", &err);
	check(swasm_select_node_init(p, nodes, NODES, &err), "node_init", &err);
	check(swasm_select_job_init(p, NULL, 0, &err), "job_init", &err);

	swasm_plugin_info_value pi = { 0 };
	const uint32_t fields[] = { SWASM_SELECT_CR_PLUGIN, SWASM_SELECT_SINGLE_JOB_TEST,
				    SWASM_SELECT_CONFIG_INFO };
	for (int f = 0; f < 3; f++) {
		int rc = swasm_select_get_info_from_plugin(p, fields[f], NULL, &pi, &err);
		if (rc != SWASM_SUCCESS) {
			printf("%s %u err %d\n", K("info"), fields[f], err.code);
			continue;
		}
		printf("%s %u %u %d %u", K("info"), fields[f], pi.kind, pi.flag, pi.number);
		for (size_t i = 0; i < pi.n_config; i++)
			printf(" %s=%s", pi.config[i].key, pi.config[i].value);
		printf("\n");
		swasm_plugin_info_value_free(&pi);
	}

	/* Job 1: two nodes, a task and 1000 MB on each (and a GPU). */
	swasm_gres_request gpu_per_node = {
		.name = "gpu",
		.scope = SWASM_GRES_PER_NODE,
		.count = 1,
	};
	swasm_job j1 = job(1, "job1");
	j1.details.min_nodes = 2;
	j1.details.num_tasks = 2;
	j1.details.min_cpus = 2;
	j1.details.memory.kind = SWASM_MEMORY_PER_NODE;
	j1.details.memory.mb = 1000;
	if (with_gres) {
		j1.details.gres = &gpu_per_node;
		j1.details.n_gres = 1;
	}
	swasm_job_test_request req = request(&j1, SWASM_SELECT_MODE_RUN_NOW);
	swasm_job_test_result r1 = { 0 };
	int rc = swasm_select_job_test(p, &req, &r1, &err);
	print_result(K("run_now"), rc, &r1, &err);
	check(rc, "job_test run now", &err);

	/* The result's resources go back in as the running job's. */
	j1.state = SWASM_JOB_RUNNING;
	j1.start_time = 1000;
	j1.end_time = 4000000000;
	j1.has_time_limit = true;
	j1.time_limit = 60;
	j1.resources = &r1.resources;
	print_rc(K("job_begin"), swasm_select_job_begin(p, &j1, &err), &err);
	print_rc(K("nodeinfo_set"), swasm_select_nodeinfo_set(p, &j1, &err), &err);
	print_rc(K("set_all_begin"), swasm_select_nodeinfo_set_all(p, &err), &err);

	swasm_select_nodeinfo *ni = NULL, *back = NULL;
	swasm_nodeinfo_value nv = { 0 };
	check(swasm_select_node_nodeinfo(p, 0, &ni, &err), "node_nodeinfo", &err);
	print_nodeinfo(K("ni.subcnt"),
		       swasm_select_nodeinfo_get(p, ni, SWASM_SELECT_NODEDATA_SUBCNT,
						 SWASM_NODE_STATE_ALLOCATED, &nv, &err),
		       &nv, &err);
	print_nodeinfo(K("ni.mem"),
		       swasm_select_nodeinfo_get(p, ni, SWASM_SELECT_NODEDATA_MEM_ALLOC, 0, &nv,
						 &err),
		       &nv, &err);
	print_nodeinfo(K("ni.tres"),
		       swasm_select_nodeinfo_get(p, ni, SWASM_SELECT_NODEDATA_TRES_ALLOC_FMT_STR, 0,
						 &nv, &err),
		       &nv, &err);
	print_nodeinfo(K("ni.weighted"),
		       swasm_select_nodeinfo_get(p, ni, SWASM_SELECT_NODEDATA_TRES_ALLOC_WEIGHTED,
						 0, &nv, &err),
		       &nv, &err);
	swasm_bytes packed = { 0 };
	check(swasm_select_nodeinfo_pack(p, ni, 38 << 8, &packed, &err), "nodeinfo pack", &err);
	check(swasm_select_nodeinfo_unpack(p, packed.data, packed.len, 38 << 8, &back, &err),
	      "nodeinfo unpack", &err);
	print_nodeinfo(K("ni.unpacked_tres"),
		       swasm_select_nodeinfo_get(p, back, SWASM_SELECT_NODEDATA_TRES_ALLOC_FMT_STR,
						 0, &nv, &err),
		       &nv, &err);
	swasm_select_nodeinfo *truncated = NULL;
	rc = swasm_select_nodeinfo_unpack(p, packed.data, packed.len / 2, 38 << 8, &truncated,
					  &err);
	printf("%s %d\n", K("ni.truncated"), rc == SWASM_SUCCESS ? 0 : err.code);
	swasm_select_nodeinfo_free(p, truncated, NULL);
	swasm_bytes_free(&packed);
	print_rc(K("ni.free"), swasm_select_nodeinfo_free(p, back, &err), &err);
	print_rc(K("ni.free"), swasm_select_nodeinfo_free(p, ni, &err), &err);
	check(swasm_select_nodeinfo_alloc(p, &ni, &err), "nodeinfo alloc", &err);
	print_nodeinfo(K("ni.empty"),
		       swasm_select_nodeinfo_get(p, ni, SWASM_SELECT_NODEDATA_SUBCNT,
						 SWASM_NODE_STATE_ALLOCATED, &nv, &err),
		       &nv, &err);
	print_rc(K("ni.free"), swasm_select_nodeinfo_free(p, ni, &err), &err);

	/* Job 2 needs every core of the three nodes: busy now, after job 1
	 * ends, or now when job 1 may be preempted. */
	swasm_job j2 = job(2, "job2");
	j2.details.min_nodes = 3;
	j2.details.num_tasks = 12;
	j2.details.min_cpus = 12;
	swasm_job_test_result r = { 0 };
	const struct {
		const char *name;
		uint32_t mode;
	} modes[] = {
		{ "busy", SWASM_SELECT_MODE_RUN_NOW },
		{ "will_run", SWASM_SELECT_MODE_WILL_RUN },
		{ "test_only", SWASM_SELECT_MODE_TEST_ONLY },
	};
	for (int m = 0; m < 3; m++) {
		req = request(&j2, modes[m].mode);
		rc = swasm_select_job_test(p, &req, &r, &err);
		print_result(K(modes[m].name), rc, &r, &err);
		swasm_job_test_result_free(&r);
	}
	swasm_preemptee_candidate victim = { 1, SWASM_PREEMPT_MODE_REQUEUE };
	req = request(&j2, SWASM_SELECT_MODE_RUN_NOW);
	req.preemptee_candidates = &victim;
	req.n_preemptee_candidates = 1;
	rc = swasm_select_job_test(p, &req, &r, &err);
	print_result(K("preempt"), rc, &r, &err);
	swasm_job_test_result_free(&r);

	/* jobinfo: get, set, text, pack/unpack round trip, copy. */
	swasm_select_jobinfo *ji = NULL, *ji_back = NULL, *ji_copy = NULL;
	swasm_jobinfo_value jv = { 0 };
	char *text = NULL;
	check(swasm_select_jobinfo_alloc(p, &ji, &err), "jobinfo alloc", &err);
	print_jobinfo(K("ji.network"),
		      swasm_select_jobinfo_get(p, ji, SWASM_SELECT_JOBDATA_NETWORK, &jv, &err), &jv,
		      &err);
	swasm_jobinfo_value cleaning = { .kind = SWASM_JOBINFO_FLAG, .flag = true };
	print_rc(K("ji.set_cleaning"),
		 swasm_select_jobinfo_set(p, ji, SWASM_SELECT_JOBDATA_CLEANING, &cleaning, &err),
		 &err);
	print_jobinfo(K("ji.cleaning"),
		      swasm_select_jobinfo_get(p, ji, SWASM_SELECT_JOBDATA_CLEANING, &jv, &err), &jv,
		      &err);
	print_text(K("ji.text"),
		   swasm_select_jobinfo_to_string(p, ji, SWASM_SELECT_PRINT_MIXED, &text, &err),
		   &text, &err);
	check(swasm_select_jobinfo_pack(p, ji, 38 << 8, &packed, &err), "jobinfo pack", &err);
	printf("%s %zu\n", K("ji.packed_bytes"), packed.len);
	check(swasm_select_jobinfo_unpack(p, packed.data, packed.len, 38 << 8, &ji_back, &err),
	      "jobinfo unpack", &err);
	swasm_bytes_free(&packed);
	print_jobinfo(K("ji.unpacked_cleaning"),
		      swasm_select_jobinfo_get(p, ji_back, SWASM_SELECT_JOBDATA_CLEANING, &jv, &err),
		      &jv, &err);
	check(swasm_select_jobinfo_copy(p, ji_back, &ji_copy, &err), "jobinfo copy", &err);
	print_text(K("ji.copy_text"),
		   swasm_select_jobinfo_to_string(p, ji_copy, SWASM_SELECT_PRINT_DATA, &text, &err),
		   &text, &err);
	print_rc(K("ji.free"), swasm_select_jobinfo_free(p, ji_copy, &err), &err);
	print_rc(K("ji.free"), swasm_select_jobinfo_free(p, ji_back, &err), &err);
	print_rc(K("ji.free"), swasm_select_jobinfo_free(p, ji, &err), &err);

	/* A one-node reservation among the three. */
	swasm_reservation_request resv = {
		.node_count = 1,
		.available = bm(NODES, (1u << NODES) - 1),
	};
	swasm_reservation_result rr = { 0 };
	rc = swasm_select_resv_test(p, &resv, &rr, &err);
	if (rc == SWASM_SUCCESS) {
		printf("%s ok ", K("resv"));
		print_bits(&rr.nodes);
		printf(" ");
		print_bits(rr.cores);
		printf("\n");
		swasm_reservation_result_free(&rr);
	} else {
		printf("%s err %d\n", K("resv"), err.code);
	}

	/* The rest of the contract. */
	swasm_step s = step(1);
	bool flag = false;
	swasm_bitmap picked = { 0 };
	rc = swasm_select_step_pick_nodes(p, &j1, &s, 1, NULL, &flag, &picked, &err);
	if (rc == SWASM_SUCCESS) {
		printf("%s ok %d ", K("pick"), flag);
		print_bits(flag ? &picked : NULL);
		printf("\n");
		swasm_bitmap_free(&picked);
	} else {
		printf("%s err %d\n", K("pick"), err.code);
	}
	rc = swasm_select_job_ready(p, &j1, &flag, &err);
	printf("%s %d %d\n", K("ready"), rc == SWASM_SUCCESS ? 0 : err.code,
	       rc == SWASM_SUCCESS && flag);
	rc = swasm_select_job_expand_allow(p, &flag, &err);
	printf("%s %d %d\n", K("expand_allow"), rc == SWASM_SUCCESS ? 0 : err.code,
	       rc == SWASM_SUCCESS && flag);
	swasm_u32_list weights = { 0 };
	rc = swasm_select_node_ranking(p, nodes, NODES, &flag, &weights, &err);
	printf("%s %d %d %zu\n", K("ranking"), rc == SWASM_SUCCESS ? 0 : err.code,
	       rc == SWASM_SUCCESS && flag, weights.n_items);
	swasm_u32_list_free(&weights);
	rc = swasm_select_ba_get_dims(p, &flag, &weights, &err);
	printf("%s %d %d %zu\n", K("dims"), rc == SWASM_SUCCESS ? 0 : err.code,
	       rc == SWASM_SUCCESS && flag, weights.n_items);
	swasm_u32_list_free(&weights);
	print_rc(K("ba_init"), swasm_select_ba_init(p, nodes, NODES, false, &err), &err);
	print_rc(K("signal"), swasm_select_job_signal(p, &j1, 9, &err), &err);
	print_rc(K("mem_confirm"), swasm_select_job_mem_confirm(p, &j1, &err), &err);
	print_rc(K("suspend"), swasm_select_job_suspend(p, &j1, false, &err), &err);
	print_rc(K("resume"), swasm_select_job_resume(p, &j1, false, &err), &err);
	print_rc(K("step_finish"), swasm_select_step_finish(p, &s, false, &err), &err);
	print_rc(K("update_node_config"), swasm_select_update_node_config(p, &nodes[2], &err),
		 &err);
	print_rc(K("update_node_state"), swasm_select_update_node_state(p, &nodes[2], &err),
		 &err);
	print_rc(K("state_save"), swasm_select_state_save(p, NULL, &err), &err);
	print_rc(K("state_restore"), swasm_select_state_restore(p, NULL, &err), &err);

	print_rc(K("job_fini"), swasm_select_job_fini(p, &j1, &err), &err);
	swasm_job_test_result_free(&r1);
	print_rc(K("set_all"), swasm_select_nodeinfo_set_all(p, &err), &err);
	check(swasm_select_node_nodeinfo(p, 0, &ni, &err), "node_nodeinfo after fini", &err);
	print_nodeinfo(K("ni.after_fini"),
		       swasm_select_nodeinfo_get(p, ni, SWASM_SELECT_NODEDATA_SUBCNT,
						 SWASM_NODE_STATE_ALLOCATED, &nv, &err),
		       &nv, &err);
	/* This nodeinfo is freed after its plugin handle closed (which dropped
	 * the plugin's side): only the handle is left to free. */
	print_rc(K("reconfigure"), swasm_select_reconfigure(p, &config, NULL, 0, &err), &err);
	print_rc(K("fini"), swasm_select_fini(p, &err), &err);
	swasm_select_close(p);
	print_rc(K("ni.free_after_close"), swasm_select_nodeinfo_free(NULL, ni, &err), &err);
	swasm_host_close(h);
	swasm_error_clear(&err);
#undef K
}

static void select_errors(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_host *h = swasm_host_open(path_of("tres.toml"), 0, SWASM_LOG_INFO, NULL, NULL, &err);
	if (!h)
		die("tres.toml", &err);
	swasm_select_plugin *p = swasm_select_open(h, NULL, &err);
	swasm_select_plugin *other = swasm_select_open(h, NULL, &err);
	if (!p || !other)
		die("open select", &err);
	swasm_job j = job(1, "job1");
	swasm_job_test_request req = request(&j, SWASM_SELECT_MODE_RUN_NOW);
	swasm_job_test_result r = { 0 };
	expect_error("select_before_init", swasm_select_job_test(p, &req, &r, &err), &err);

	swasm_partition part;
	swasm_key_value raw;
	swasm_select_config config = select_config(SWASM_CR_CORE | SWASM_CR_MEMORY,
						   "select/cons_tres", &part, &raw);
	check(swasm_select_init(p, &config, &err), "init", &err);
	check(swasm_select_init(other, &config, &err), "init other", &err);

	/* A node state whose base value is not one of Slurm's. */
	nodes[1].state = 9;
	expect_error("bad_node_state", swasm_select_node_init(p, nodes, NODES, &err), &err);
	nodes[1].state = SWASM_NODE_STATE_IDLE | SWASM_NODE_STATE_DRAIN;
	check(swasm_select_node_init(p, nodes, NODES, &err), "node_init", &err);
	nodes[1].state = SWASM_NODE_STATE_IDLE;

	req.mode = 3;
	expect_error("bad_mode", swasm_select_job_test(p, &req, &r, &err), &err);
	req.mode = SWASM_SELECT_MODE_RUN_NOW | 0x800;
	expect_error("bad_mode_flag", swasm_select_job_test(p, &req, &r, &err), &err);
	req.mode = SWASM_SELECT_MODE_RUN_NOW;

	/* Bitmaps whose words do not match their length. */
	req.candidates.words = NULL;
	expect_error("bitmap_without_words", swasm_select_job_test(p, &req, &r, &err), &err);
	req.candidates = bm(NODES + 2, 0x1f);
	expect_error("bitmap_of_another_length", swasm_select_job_test(p, &req, &r, &err), &err);
	req.candidates = bm(NODES, 0xff);
	int rc = swasm_select_job_test(p, &req, &r, &err);
	printf("bitmap.tail_bits_ignored %s ", rc == SWASM_SUCCESS ? "ok" : "err");
	print_bits(&r.resources.nodes);
	printf("\n");
	swasm_job_test_result_free(&r);

	swasm_select_nodeinfo *ni = NULL;
	swasm_nodeinfo_value nv = { 0 };
	check(swasm_select_node_nodeinfo(p, 0, &ni, &err), "node_nodeinfo", &err);
	expect_error("bad_nodeinfo_field", swasm_select_nodeinfo_get(p, ni, 99, 0, &nv, &err),
		     &err);
	expect_error("nodeinfo_other_handle",
		     swasm_select_nodeinfo_get(other, ni, SWASM_SELECT_NODEDATA_SUBCNT, 0, &nv,
					       &err),
		     &err);
	expect_error("nodeinfo_free_other_handle", swasm_select_nodeinfo_free(other, ni, &err),
		     &err);

	if (swasm_select_open(NULL, NULL, &err))
		die("a select slot of no host", NULL);
	expect_error("select_null_host", SWASM_ERROR, &err);
	swasm_select_close(other);
	swasm_select_close(p);
	swasm_host_close(h);

	/* A slot of another kind, and a .wasm of another kind in the select
	 * slot. */
	h = swasm_host_open(path_of("gres.toml"), 0, SWASM_LOG_INFO, NULL, NULL, &err);
	if (!h)
		die("gres.toml", &err);
	if (swasm_select_open(h, "gres.gpu", &err))
		die("a gres slot opened as a select slot", NULL);
	expect_error("select_wrong_slot_kind", SWASM_ERROR, &err);
	swasm_host_close(h);
	h = swasm_host_open(path_of("wrongkind.toml"), 0, SWASM_LOG_INFO, NULL, NULL, &err);
	if (!h)
		die("wrongkind.toml", &err);
	p = swasm_select_open(h, NULL, &err);
	if (!p)
		die("open wrongkind", &err);
	expect_error("select_wrong_wasm_kind", swasm_select_load(p, &err), &err);
	swasm_select_close(p);
	swasm_host_close(h);
	swasm_error_clear(&err);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s <directory of the host configurations>\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	if (swasm_abi_version() != SWASM_ABI_VERSION)
		die("ABI version", NULL);
	gres();
	build_nodes();
	select_plugin("tres.toml", "tres", SWASM_CR_CORE | SWASM_CR_MEMORY, "select/cons_tres",
		      1);
	select_plugin("linear.toml", "linear", SWASM_CR_MEMORY, "select/linear", 0);
	select_errors();
	printf("done\n");
	return 0;
}
