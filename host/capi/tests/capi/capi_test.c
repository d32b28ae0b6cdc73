/*
 * A C caller of libslurm_wasm, as a shim plugin would be: driven by
 * tests/c_program.rs, which writes the host configurations into the
 * directory given as argv[1], compiles this file with the system cc, runs it
 * and compares what it prints with what the Rust API answers for the same
 * input.
 *
 * Output: one result per line, `<key> <values...>`; doubles as %.17g so the
 * Rust side can compare them exactly. Exit status 0 unless a call that must
 * succeed failed (the reason on stderr).
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slurm_wasm.h"
#include "common.h"


/* ---- logs: kept per host (the context pointer is the host's tag) ---- */

#define MAX_LOGS 256
static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;
static char *logs[MAX_LOGS];
static int n_logs;

static void log_cb(void *ctx, swasm_log_level level, const char *message)
{
	char line[4096];
	snprintf(line, sizeof(line), "log %s %u %s", (const char *)ctx, level, message);
	pthread_mutex_lock(&log_mutex);
	if (n_logs < MAX_LOGS)
		logs[n_logs++] = strdup(line);
	pthread_mutex_unlock(&log_mutex);
}

static void print_logs(void)
{
	pthread_mutex_lock(&log_mutex);
	for (int i = 0; i < n_logs; i++) {
		printf("%s\n", logs[i]);
		free(logs[i]);
	}
	n_logs = 0;
	pthread_mutex_unlock(&log_mutex);
}

/* ---- helpers ---- */




/* An error line: `error.<name> <code> <message>`. */
static void print_error(const char *name, const swasm_error *err)
{
	printf("error.%s %d %s\n", name, err->code, err->message ? err->message : "(null)");
}

/* ---- records, as tests/c_program.rs builds them with the host's fixtures ---- */

static swasm_cluster_config cluster(const swasm_key_value *raw, size_t n_raw)
{
	swasm_cluster_config c = {
		.cluster_name = "cluster",
		.kill_wait = 30,
		.raw = raw,
		.n_raw = n_raw,
	};
	return c;
}

/* fixtures::partition(0, "debug", nodes) */
static uint64_t partition_words[2];
static swasm_partition partition(uint32_t nodes)
{
	memset(partition_words, 0, sizeof(partition_words));
	for (uint32_t bit = 0; bit < nodes; bit++)
		partition_words[bit / 64] |= (uint64_t)1 << (bit % 64);
	swasm_partition p = {
		.index = 0,
		.name = "debug",
		.nodes = { .len = nodes, .words = partition_words },
		.oversubscribe = SWASM_OVERSUBSCRIBE_NO,
		.priority_job_factor = 1,
		.priority_tier = 1,
		.min_nodes = 1,
	};
	return p;
}


/* ---- error paths ---- */

static void error_paths(void)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (swasm_host_open(path_of("bad.toml"), 0, SWASM_LOG_INFO, log_cb, "E", &err))
		die("bad.toml opened", NULL);
	print_error("bad_toml", &err);

	if (swasm_host_open(path_of("absent.toml"), 0, SWASM_LOG_INFO, log_cb, "E", &err))
		die("absent.toml opened", NULL);
	print_error("absent_toml", &err);

	if (swasm_host_open(path_of("nocache.toml"), 0, SWASM_LOG_INFO, log_cb, "E", &err))
		die("nocache.toml opened without SWASM_OPEN_ALLOW_NO_CACHE", NULL);
	print_error("no_cache", &err);
	swasm_host *h = swasm_host_open(path_of("nocache.toml"), SWASM_OPEN_ALLOW_NO_CACHE,
					SWASM_LOG_INFO, log_cb, "E", &err);
	if (!h)
		die("nocache.toml with SWASM_OPEN_ALLOW_NO_CACHE", &err);
	swasm_host_close(h);

	if (swasm_host_open(NULL, 0, 0, NULL, NULL, &err))
		die("NULL path opened", NULL);
	print_error("null_path", &err);

	/* A missing .wasm: found when the slot is opened. */
	h = swasm_host_open(path_of("missing.toml"), 0, SWASM_LOG_INFO, log_cb, "E", &err);
	if (!h)
		die("missing.toml", &err);
	if (swasm_priority_open(h, NULL, &err))
		die("a slot with a missing .wasm opened", NULL);
	print_error("missing_wasm", &err);
	if (swasm_task_open(h, NULL, &err))
		die("a task slot opened where there is none", NULL);
	print_error("no_task_slot", &err);
	swasm_host_close(h);

	/* A malformed .wasm and one of the wrong kind: found when loaded, and
	 * the same failure again at every later call. */
	const char *cases[][2] = { { "junk.toml", "junk_wasm" }, { "wrongkind.toml", "wrong_kind" } };
	for (int i = 0; i < 2; i++) {
		h = swasm_host_open(path_of(cases[i][0]), 0, SWASM_LOG_INFO, log_cb, "E", &err);
		if (!h)
			die(cases[i][0], &err);
		swasm_priority_plugin *p = swasm_priority_open(h, NULL, &err);
		if (!p)
			die("open", &err);
		if (swasm_priority_load(p, &err) == SWASM_SUCCESS)
			die("a bad .wasm loaded", NULL);
		print_error(cases[i][1], &err);
		uint32_t prio = 0;
		swasm_job j = job(1, "job1");
		if (swasm_priority_set(p, 0xffff0000u, &j, &prio, &err) == SWASM_SUCCESS)
			die("a call on a plugin that failed to load succeeded", NULL);
		char name[64];
		snprintf(name, sizeof(name), "%s_again", cases[i][1]);
		print_error(name, &err);
		swasm_priority_close(p);
		swasm_host_close(h);
	}

	/* NULL handles and arguments, unknown enum values. */
	uint32_t prio;
	if (swasm_priority_set(NULL, 1, NULL, &prio, &err) == SWASM_SUCCESS)
		die("NULL handle", NULL);
	print_error("null_handle", &err);
	swasm_error_clear(&err);
	if (err.code != 0 || err.message != NULL)
		die("swasm_error_clear", NULL);
}

/* ---- priority/basic, state files, fork ---- */

static swasm_priority_plugin *basic;
static volatile int hammering = 1;

static void *hammer(void *arg)
{
	(void)arg;
	swasm_error err = SWASM_ERROR_INIT;
	swasm_job j = job(1, "job1");
	while (hammering) {
		uint32_t prio;
		check(swasm_priority_set(basic, 0xffff0000u, &j, &prio, &err), "hammer set", &err);
	}
	swasm_error_clear(&err);
	return NULL;
}

/* Forks while another thread calls the plugin: each child calls it too and
 * must not find a plugin lock held (it would hang: the alarm kills it). */
static void fork_test(void)
{
	pthread_t thread;
	pthread_create(&thread, NULL, hammer, NULL);
	int ok = 0;
	const int forks = 8;
	for (int i = 0; i < forks; i++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			alarm(10);
			swasm_error err = SWASM_ERROR_INIT;
			swasm_job j = job(1, "job1");
			uint32_t prio = 0;
			int rc = swasm_priority_set(basic, 0xffff0000u, &j, &prio, &err);
			_exit(rc == SWASM_SUCCESS && prio == 4294901759u ? 0 : 1);
		}
		int status;
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			ok++;
		else
			fprintf(stderr, "fork child %d: status %#x\n", i, status);
	}
	hammering = 0;
	pthread_join(thread, NULL);
	printf("fork.children_ok %d of %d\n", ok, forks);
}

static void priority_basic(void)
{
	swasm_error err = SWASM_ERROR_INIT;

	/* Logs below the host's level are not delivered: priority/basic logs
	 * "priority/basic loaded" at debug in init. */
	swasm_host *debug_host = swasm_host_open(path_of("basic.toml"), 0, SWASM_LOG_DEBUG, log_cb,
						 "D", &err);
	if (!debug_host)
		die("basic.toml at debug", &err);
	swasm_host *h = swasm_host_open(path_of("basic.toml"), 0, SWASM_LOG_INFO, log_cb, "I",
					&err);
	if (!h)
		die("basic.toml", &err);

	swasm_partition part = partition(1);
	swasm_tres_list no_tres = { 0 };
	swasm_priority_config config = {
		.cluster = cluster(NULL, 0),
		.partitions = &part,
		.n_partitions = 1,
		.partition_tres = &no_tres,
		.n_partition_tres = 1,
		.cluster_cpus = 8,
		.cluster_nodes = 1,
	};

	swasm_priority_plugin *d = swasm_priority_open(debug_host, NULL, &err);
	if (!d)
		die("open at debug", &err);
	check(swasm_priority_init(d, &config, &err), "init at debug", &err);
	swasm_priority_close(d);
	swasm_host_close(debug_host);

	basic = swasm_priority_open(h, "priority", &err);
	if (!basic)
		die("open priority/basic", &err);
	/* The host handle may be closed: the kind handle keeps the host. */
	swasm_host_close(h);

	swasm_plugin_identity id = { 0 };
	check(swasm_priority_identity(basic, &id, &err), "identity", &err);
	printf("basic.identity %s %#x %s\n", id.plugin_type, id.plugin_version,
	       id.contract_version);
	swasm_plugin_identity_free(&id);

	uint32_t prio = 0;
	swasm_job j1 = job(1, "job1");
	if (swasm_priority_set(basic, 0xffff0000u, &j1, &prio, &err) == SWASM_SUCCESS)
		die("set before init", NULL);
	print_error("before_init", &err);

	check(swasm_priority_init(basic, &config, &err), "init", &err);
	if (swasm_priority_state_restore(basic, NULL, &err) == SWASM_SUCCESS)
		die("restore without a state file", NULL);
	print_error("restore_missing", &err);

	check(swasm_priority_set(basic, 0xffff0000u, &j1, &prio, &err), "set", &err);
	printf("basic.set %u\n", prio);
	check(swasm_priority_state_save(basic, NULL, &err), "state save", &err);
	check(swasm_priority_state_restore(basic, NULL, &err), "state restore", &err);
	printf("basic.state ok\n");

	/* An unknown enum value is refused, naming the field. */
	swasm_job bad = job(2, "job2");
	bad.state = 99;
	if (swasm_priority_set(basic, 0xffff0000u, &bad, &prio, &err) == SWASM_SUCCESS)
		die("job.state 99 accepted", NULL);
	print_error("bad_state", &err);

	fork_test();
	check(swasm_priority_fini(basic, &err), "fini", &err);
	swasm_priority_close(basic);
	swasm_error_clear(&err);
}

/* ---- priority/multifactor: every contract function ---- */

static void print_list(const char *key, const swasm_job_priority_list *l)
{
	for (size_t i = 0; i < l->n_items; i++)
		printf("%s %u %u\n", key, l->items[i].job_id, l->items[i].priority);
}

static void print_usage(const char *key, const swasm_association_usage *u)
{
	printf("%s %u %.17g %.17g %.17g %.17g %.17g %d %.17g\n", key, u->id, u->usage_raw,
	       u->usage_norm, u->usage_effective, u->shares_norm, u->fair_share, u->has_level_fs,
	       u->level_fs);
}

static swasm_association assoc(uint32_t id, int has_parent, uint32_t parent, const char *account,
			       const char *user, uint32_t shares, double usage)
{
	swasm_association a = {
		.id = id,
		.has_parent_id = has_parent,
		.parent_id = parent,
		.account = account,
		.user = user,
		.shares = SWASM_SHARES_RAW,
		.shares_raw = shares,
		.usage_raw = usage,
	};
	return a;
}

static void priority_multifactor(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_host *h = swasm_host_open(path_of("multifactor.toml"), 0, SWASM_LOG_INFO, log_cb,
					"M", &err);
	if (!h)
		die("multifactor.toml", &err);
	swasm_priority_plugin *p = swasm_priority_open(h, NULL, &err);
	if (!p)
		die("open priority/multifactor", &err);

	const swasm_key_value raw[] = {
		{ "AccountingStorageType", "accounting_storage/slurmdbd" },
		{ "PriorityFlags", "NO_FAIR_TREE" },
		{ "PriorityWeightAge", "1000" },
		{ "PriorityMaxAge", "7-0" },
		{ "PriorityWeightFairshare", "10000" },
		{ "PriorityWeightJobSize", "1000" },
		{ "PriorityWeightPartition", "1000" },
		{ "PriorityWeightQOS", "2000" },
		{ "PriorityWeightTRES", "CPU=2000" },
	};
	swasm_partition part = partition(100);
	swasm_tres_amount cpu = { "cpu", 1000 };
	swasm_tres_list part_tres = { &cpu, 1 };
	swasm_priority_config config = {
		.cluster = cluster(raw, sizeof(raw) / sizeof(raw[0])),
		.partitions = &part,
		.n_partitions = 1,
		.partition_tres = &part_tres,
		.n_partition_tres = 1,
		.cluster_cpus = 1000,
		.cluster_nodes = 100,
		.cluster_tres = &cpu,
		.n_cluster_tres = 1,
	};
	check(swasm_priority_init(p, &config, &err), "mf init", &err);

	swasm_qos normal = { .name = "normal", .id = 1, .priority = 10, .usage_factor = 1.0 };
	swasm_qos high = { .name = "high", .id = 2, .priority = 100, .usage_factor = 1.0 };
	swasm_qos_update qos[] = {
		{ SWASM_UPDATE_UPSERT, 0, &normal },
		{ SWASM_UPDATE_UPSERT, 0, &high },
	};
	check(swasm_priority_update_qos(p, qos, 2, &err), "update_qos", &err);

	swasm_association tree[] = {
		assoc(1, 0, 0, "root", NULL, 1, 0.0),
		assoc(2, 1, 1, "a", NULL, 40, 0.0),
		assoc(3, 1, 2, "a", "u1", 1, 20.0),
		assoc(4, 1, 1, "b", NULL, 60, 0.0),
		assoc(5, 1, 4, "b", "u2", 1, 25.0),
	};
	swasm_association_update updates[5];
	for (int i = 0; i < 5; i++) {
		updates[i].kind = SWASM_UPDATE_UPSERT;
		updates[i].id = 0;
		updates[i].association = &tree[i];
	}
	check(swasm_priority_update_associations(p, updates, 5, &err), "update_associations",
	      &err);

	swasm_tres_amount cpu4 = { "cpu", 4 }, cpu100 = { "cpu", 100 };
	swasm_job jobs[2] = { job(1, "job1"), job(2, "job2") };
	jobs[0].assoc_id = 3;
	jobs[0].account = "a";
	jobs[0].qos = "normal";
	jobs[0].details.accrue_time = 1;
	jobs[0].details.num_tasks = 4;
	jobs[0].details.min_cpus = 4;
	jobs[0].tres_requested = &cpu4;
	jobs[0].n_tres_requested = 1;
	jobs[1].assoc_id = 5;
	jobs[1].account = "b";
	jobs[1].qos = "high";
	jobs[1].tres_requested = &cpu100;
	jobs[1].n_tres_requested = 1;

	for (int i = 0; i < 2; i++) {
		uint32_t prio;
		check(swasm_priority_set(p, 0xffff0000u, &jobs[i], &prio, &err), "mf set", &err);
		jobs[i].priority = prio;
		printf("mf.set %u %u\n", jobs[i].job_id, prio);
	}

	const uint32_t pending[] = { 1, 2 };
	swasm_job_priority_list calc = { 0 };
	check(swasm_priority_calculate(p, NULL, 0, pending, 2, &calc, &err), "calculate", &err);
	print_list("mf.calc", &calc);
	for (size_t i = 0; i < calc.n_items; i++)
		for (int k = 0; k < 2; k++)
			if (jobs[k].job_id == calc.items[i].job_id)
				jobs[k].priority = calc.items[i].priority;
	swasm_job_priority_list_free(&calc);
	swasm_job_priority_list_free(&calc); /* freeing twice is harmless: it was emptied */

	swasm_priority_factors_list rows = { 0 };
	check(swasm_priority_get_priority_factors_list(p, jobs, 2, NULL, 0, &rows, &err), "sprio",
	      &err);
	for (size_t i = 0; i < rows.n_items; i++) {
		const swasm_priority_factors *r = &rows.items[i];
		printf("mf.sprio %u %u %s %s %s %d %.17g %.17g %.17g %.17g %.17g %.17g %lld %d %u",
		       r->job_id, r->user_id, r->account ? r->account : "-", r->partition,
		       r->qos ? r->qos : "-", r->has_direct_priority, r->age, r->association,
		       r->fair_share, r->job_size, r->partition_factor, r->qos_factor,
		       (long long)r->site, r->nice, r->priority);
		for (size_t t = 0; t < r->n_tres; t++)
			printf(" %s=%.17g", r->tres[t].name, r->tres[t].value);
		printf("\n");
	}
	swasm_priority_factors_list_free(&rows);

	const uint32_t only_job2[] = { 2 };
	swasm_factors_request request = { .job_ids = only_job2, .n_job_ids = 1 };
	check(swasm_priority_get_priority_factors_list(p, jobs, 2, &request, 0, &rows, &err),
	      "sprio -j 2", &err);
	printf("mf.sprio_job2 %zu %u\n", rows.n_items, rows.n_items ? rows.items[0].job_id : 0);
	swasm_priority_factors_list_free(&rows);

	swasm_association_usage usage;
	check(swasm_priority_set_assoc_usage(p, 3, &usage, &err), "set_assoc_usage", &err);
	print_usage("mf.assoc_usage", &usage);

	swasm_association_usage_list usages = { 0 };
	check(swasm_priority_association_usages(p, &usages, &err), "association_usages", &err);
	for (size_t i = 0; i < usages.n_items; i++)
		print_usage("mf.usages", &usages.items[i]);
	swasm_association_usage_list_free(&usages);

	uint32_t boost = 0;
	swasm_job_priority_list recovered = { 0 };
	check(swasm_priority_recover(p, 1000, jobs, 2, &boost, &recovered, &err), "recover", &err);
	printf("mf.recover_boost %u\n", boost);
	print_list("mf.recover", &recovered);
	swasm_job_priority_list_free(&recovered);

	check(swasm_priority_reconfig(p, &config, false, NULL, 0, &err), "reconfig", &err);
	swasm_association_update removal = { SWASM_UPDATE_REMOVE, 5, NULL };
	check(swasm_priority_update_associations(p, &removal, 1, &err), "remove association",
	      &err);
	swasm_qos_update qos_removal = { SWASM_UPDATE_REMOVE, 2, NULL };
	check(swasm_priority_update_qos(p, &qos_removal, 1, &err), "remove qos", &err);

	jobs[0].state = SWASM_JOB_COMPLETE;
	check(swasm_priority_job_end(p, &jobs[0], &err), "job_end", &err);
	check(swasm_priority_fini(p, &err), "mf fini", &err);
	printf("mf.done ok\n");
	swasm_priority_close(p);
	swasm_host_close(h);
	swasm_error_clear(&err);
}

/* ---- task/affinity ---- */

static void print_binding(const char *key, const swasm_cpu_binding *b)
{
	printf("%s %#x %s\n", key, b->cpu_bind_type, b->cpu_bind);
	for (size_t i = 0; i < b->n_env; i++)
		printf("%s.env %s=%s\n", key, b->env[i].key, b->env[i].value);
	for (size_t i = 0; i < b->n_messages; i++)
		printf("%s.message %s\n", key, b->messages[i]);
}


static void task_affinity(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_host *h = swasm_host_open(path_of("basic.toml"), 0, SWASM_LOG_INFO, log_cb, "T",
					&err);
	if (!h)
		die("basic.toml for the task slot", &err);
	/* No slot name: the configuration's only task slot, task.affinity. */
	swasm_task_plugin *t = swasm_task_open(h, NULL, &err);
	if (!t)
		die("open task/affinity", &err);
	swasm_plugin_identity id = { 0 };
	check(swasm_task_identity(t, &id, &err), "task identity", &err);
	printf("task.identity %s\n", id.plugin_type);
	swasm_plugin_identity_free(&id);

	swasm_task_config config = { .cluster = cluster(NULL, 0), .node_name = "n1" };
	check(swasm_task_init(t, &config, &err), "task init", &err);

	/* fixtures::launch_request(6, 2, 2), bound to cores, verbose. */
	const uint64_t cores = 0x3;
	const uint32_t gids[] = { 0, 1 };
	swasm_launch_request req = {
		.job_id = 6,
		.user_id = 1000,
		.group_id = 1000,
		.node_count = 1,
		.node_name = "n1",
		.total_tasks = 2,
		.global_task_ids = gids,
		.n_global_task_ids = 2,
		.cpus_per_task = 1,
		.cpu_bind_type = 0x4 | 0x1,
		.step_cores = { 2, &cores },
		.job_cores = { 2, &cores },
		.sockets = 1,
		.cores_per_socket = 2,
		.threads_per_core_conf = 1,
		.cpus_conf = 2,
	};
	swasm_cpu_binding binding = { 0 };
	check(swasm_task_slurmd_launch_request(t, &req, &binding, &err), "launch request", &err);
	print_binding("task.launch", &binding);
	swasm_cpu_binding_free(&binding);

	/* map_cpu:5 on a node of two CPUs: the plugin's own refusal, whose
	 * message a shim hands to srun as a C plugin would */
	swasm_launch_request outside = req;
	outside.cpu_bind_type = 0x80; /* CPU_BIND_MAP */
	outside.cpu_bind = "5";
	if (!swasm_task_slurmd_launch_request(t, &outside, &binding, &err))
		die("a map outside the step was accepted", NULL);
	printf("refused.code %d\n", err.code);
	printf("refused.message %s\n", err.message);
	printf("refused.plugin_message %s\n",
	       err.plugin_message ? err.plugin_message : "(null)");
	swasm_error_clear(&err);
	if (err.message || err.plugin_message)
		die("swasm_error_clear left a message", NULL);

	swasm_batch_request batch = {
		.job_id = 7,
		.user_id = 1000,
		.node_name = "n1",
		.job_cores = { 2, &cores },
		.sockets = 1,
		.cores_per_socket = 2,
		.threads_per_core_conf = 1,
		.cpus_conf = 2,
	};
	check(swasm_task_slurmd_batch_request(t, &batch, &binding, &err), "batch request", &err);
	print_binding("task.batch", &binding);
	swasm_cpu_binding_free(&binding);

	/* fixtures::step(6, 0) and fixtures::task(0, 4242) */
	swasm_step step = {
		.job_id = 6,
		.user_id = 1000,
		.group_id = 1000,
		.node_name = "n1",
		.local_tasks = 1,
		.total_tasks = 1,
		.cpus_per_task = 1,
		.cpu_bind = "",
	};
	swasm_task task = { 0, 0, 4242 };
	print_rc("task.reserve", swasm_task_slurmd_reserve_resources(t, &req, &err), &err);
	print_rc("task.suspend", swasm_task_slurmd_suspend_job(t, 6, &err), &err);
	print_rc("task.resume", swasm_task_slurmd_resume_job(t, 6, &err), &err);
	print_rc("task.pre_setuid", swasm_task_pre_setuid(t, &step, &err), &err);
	print_rc("task.pre_launch", swasm_task_pre_launch(t, &step, &task, &err), &err);
	print_rc("task.post_term", swasm_task_post_term(t, &step, &task, &err), &err);
	print_rc("task.add_pid", swasm_task_add_pid(t, 4242, &err), &err);
	print_rc("task.update_mem_limit", swasm_task_update_mem_limit(t, &step, 100, 50, &err),
		 &err);
	print_rc("task.post_step", swasm_task_post_step(t, &step, &err), &err);
	print_rc("task.release", swasm_task_slurmd_release_resources(t, 6, &err), &err);
	print_rc("task.fini", swasm_task_fini(t, &err), &err);
	swasm_task_close(t);
	swasm_host_close(h);
	swasm_error_clear(&err);
}

/* ---- reload: the slot's component replaced from the host configuration ---- */

static void write_file(const char *name, const char *text)
{
	char *path = path_of(name);
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		die("writing a host configuration", NULL);
}

static void print_identity(const char *key, swasm_task_plugin *t)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_plugin_identity id = { 0 };
	check(swasm_task_identity(t, &id, &err), "identity", &err);
	printf("%s %s\n", key, id.plugin_type);
	swasm_plugin_identity_free(&id);
}

static void task_reload(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	const char *head = "cache_dir = \"cache\"\n[plugins.task]\n";
	char text[256];
	snprintf(text, sizeof text, "%sbundled = \"task/affinity\"\ngrants = [\"topology\"]\n", head);
	write_file("reload.toml", text);
	swasm_host *h = swasm_host_open(path_of("reload.toml"), 0, SWASM_LOG_INFO, log_cb, "R",
					&err);
	if (!h)
		die("reload.toml", &err);
	swasm_task_plugin *t = swasm_task_open(h, NULL, &err);
	if (!t)
		die("open the reload slot", &err);
	swasm_host_close(h);
	swasm_task_config config = { .cluster = cluster(NULL, 0), .node_name = "n1" };
	check(swasm_task_init(t, &config, &err), "reload init", &err);

	bool replaced = true;
	check(swasm_task_reload(t, &replaced, &err), "reload, unchanged", &err);
	printf("reload.unchanged %d\n", replaced);

	snprintf(text, sizeof text, "%sbundled = \"task/none\"\n", head);
	write_file("reload.toml", text);
	check(swasm_task_reload(t, &replaced, &err), "reload to task/none", &err);
	printf("reload.replaced %d\n", replaced);
	print_identity("reload.identity", t);

	/* Bytes that are no component: refused, task/none goes on. */
	snprintf(text, sizeof text, "%swasm = \"junk.wasm\"\n", head);
	write_file("reload.toml", text);
	if (swasm_task_reload(t, &replaced, &err) == SWASM_SUCCESS)
		die("reload to junk.wasm", NULL);
	print_error("reload_junk", &err);
	print_identity("reload.after_junk", t);
	check(swasm_task_fini(t, &err), "reload fini", &err);
	swasm_task_close(t);
	swasm_error_clear(&err);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s <directory of the host configurations>\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	printf("abi %u %s\n", swasm_abi_version(), swasm_contract_version());
	if (swasm_abi_version() != SWASM_ABI_VERSION)
		die("ABI version", NULL);
	error_paths();
	priority_basic();
	priority_multifactor();
	task_affinity();
	task_reload();
	print_logs();
	printf("done\n");
	return 0;
}
