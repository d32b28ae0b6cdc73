//! The conformance suite behind `slurm-wasm check`: what any plugin of a
//! kind must do, whoever wrote it.
//!
//! The suite loads the plugin into its slot with the capabilities that slot
//! may use, served by harmless providers (a fixed 1x4x1 topology, a cpuset
//! provider that only records, no GPUs), then exercises every function of
//! the kind's interface with benign input. A check fails when a call faults
//! (trap, limit), returns something the contract forbids, or breaks a rule
//! every Slurm plugin of that kind follows (named in the check).

use std::sync::Arc;

use crate::bindings::types::{JobState, PluginIdentity};
use crate::capabilities::cpuset::RecordingCpuset;
use crate::capabilities::topology::FixedTopology;
use crate::capabilities::{Grants, Services};
use crate::engine::{Host, HostOptions};
use crate::error::{CallError, LoadError};
use crate::fixtures;
use crate::inspect::inspect;
use crate::kinds::gres::{EnvFlags, NodeHardware};
use crate::kinds::priority::FactorsRequest;
use crate::kinds::select::{JobTestMode, PluginInfoField, SprintMode};
use crate::limits::FailurePolicy;
use crate::plugin::{PluginKind, PluginSettings, PluginSource, CONTRACT_VERSION};
use crate::{GresPlugin, PriorityPlugin, SelectPlugin, TaskPlugin};

/// One check and its outcome.
#[derive(Debug, Clone)]
pub struct Check {
    /// What is checked, as a sentence (`describe() answers`).
    pub name: &'static str,
    /// `Ok` when it passed; otherwise why not (the call's error or the
    /// rule broken).
    pub outcome: Result<(), String>,
}

/// The outcome of the suite for one plugin.
#[derive(Debug, Clone)]
pub struct Report {
    /// The component's name: its file path or `bundled <type>` (the
    /// source's debug form when it is not a component at all).
    pub source: String,
    /// The kind its exports make it; `None` when it exports no plugin
    /// interface or is not a component.
    pub slot: Option<PluginKind>,
    /// What its `describe` answered, when it could be called.
    pub identity: Option<PluginIdentity>,
    /// Every check run, in order; the suite stops early when the source
    /// is not a component or does not load into its slot.
    pub checks: Vec<Check>,
}

impl Report {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.outcome.is_ok())
    }

    /// The number of checks that failed.
    pub fn failures(&self) -> usize {
        self.checks.iter().filter(|c| c.outcome.is_err()).count()
    }
}

struct Suite {
    checks: Vec<Check>,
}

impl Suite {
    fn run(&mut self, name: &'static str, f: impl FnOnce() -> Result<(), String>) {
        self.checks.push(Check { name, outcome: f() });
    }
}

fn fault(e: CallError) -> String {
    e.to_string()
}

fn ensure(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(message())
    }
}

/// The host the suite runs plugins in: harmless capability providers.
/// The services the suite's host needs: a fixed 1 x 4 x 1 node for
/// `topology`, and a `cpuset` that records bindings instead of making them.
pub fn suite_services() -> Services {
    Services {
        topology: Arc::new(FixedTopology::new(1, 4, 1, false)),
        cpuset: Arc::new(RecordingCpuset::default()),
        ..Services::default()
    }
}

/// Runs the suite on `source` in a host of its own ([`suite_services`],
/// components compiled in memory). See [`check_on`].
pub fn check(source: &PluginSource) -> anyhow::Result<Report> {
    let host = Host::new(HostOptions {
        services: suite_services(),
        ..HostOptions::default()
    })?;
    check_on(&host, source)
}

/// Runs the suite on `source` in `host`, whose services must be
/// [`suite_services`] (a caller's own host, with its compiled-component
/// cache, say). Never panics on a misbehaving plugin: every problem becomes
/// a failed check. Fails when the source cannot be read.
pub fn check_on(host: &Host, source: &PluginSource) -> anyhow::Result<Report> {
    let mut suite = Suite { checks: Vec::new() };
    let inspection = match inspect(host, source) {
        Ok(i) => i,
        // Input that cannot be read is not a plugin that failed a check.
        Err(e @ (LoadError::Io { .. } | LoadError::UnknownBundled(..))) => return Err(e.into()),
        Err(e) => {
            suite.run("is a WebAssembly component", || Err(e.to_string()));
            return Ok(Report {
                source: format!("{source:?}"),
                slot: None,
                identity: None,
                checks: suite.checks,
            });
        }
    };
    let slot = inspection.slot;
    suite.run("exports one of the four plugin interfaces", || {
        ensure(slot.is_some(), || {
            "exports no slurm:plugin/{select,gres,priority,task}".into()
        })
    });
    let identity = inspection.identity.clone();
    suite.run("describe() answers", || {
        inspection.describe_error.clone().map_or(Ok(()), Err)
    });
    if let (Some(slot), Some(identity)) = (slot, &identity) {
        identity_checks(&mut suite, slot, identity);
        let settings = PluginSettings {
            grants: slot
                .allowed_capabilities()
                .iter()
                .copied()
                .collect::<Grants>(),
            failure: FailurePolicy::Restart { max_restarts: 1000 },
            ..PluginSettings::default()
        };
        match slot {
            PluginKind::Priority => priority_checks(&mut suite, host, source, settings),
            PluginKind::Task => task_checks(&mut suite, host, source, settings),
            PluginKind::Select => select_checks(&mut suite, host, source, settings),
            PluginKind::Gres => gres_checks(&mut suite, host, source, settings),
        }
    }
    Ok(Report {
        source: inspection.source,
        slot,
        identity,
        checks: suite.checks,
    })
}

fn identity_checks(suite: &mut Suite, slot: PluginKind, identity: &PluginIdentity) {
    let ty = identity.plugin_type.clone();
    suite.run("plugin type is `<kind>/<name>` of its slot", || {
        let (kind, name) = ty.split_once('/').unwrap_or(("", ""));
        ensure(
            kind == slot.name() && !name.is_empty() && !name.contains('/'),
            || format!("`{ty}` is not `{}/<name>`", slot.name()),
        )
    });
    suite.run("plugin name is set", || {
        ensure(!identity.plugin_name.trim().is_empty(), || {
            "empty plugin-name".into()
        })
    });
    suite.run("plugin version follows Slurm's rule", || {
        let v = identity.plugin_version;
        ensure(v >> 24 == 0 && v >> 16 > 0, || {
            format!("{v:#x} is not (major << 16) | (minor << 8) | micro")
        })
    });
    suite.run("contract version is compatible", || {
        ensure(
            identity
                .contract_version
                .split('.')
                .take(2)
                .eq(CONTRACT_VERSION.split('.').take(2)),
            || {
                format!(
                    "built against {}, host speaks {CONTRACT_VERSION}",
                    identity.contract_version
                )
            },
        )
    });
}

fn priority_checks(
    suite: &mut Suite,
    host: &Host,
    source: &PluginSource,
    settings: PluginSettings,
) {
    let plugin = match PriorityPlugin::load(host, source, settings) {
        Ok(p) => p,
        Err(e) => return suite.run("loads into the priority slot", || Err(e.to_string())),
    };
    let config = fixtures::priority_config();
    suite.run("init accepts a default configuration", || {
        plugin.init(&config).map_err(fault)
    });
    let mut job = fixtures::job(1);
    job.details.submit_time = 1_700_000_000;
    suite.run("set returns a priority in 1..=4294967295", || {
        plugin.set(0xffff_0000, &job).map(|_| ()).map_err(fault)
    });
    suite.run("set is deterministic", || {
        let a = plugin.set(0xffff_0000, &job).map_err(fault)?;
        let b = plugin.set(0xffff_0000, &job).map_err(fault)?;
        ensure(a == b, || format!("{a} then {b} for the same job"))
    });
    suite.run("set keeps a directly set priority", || {
        let mut direct = job.clone();
        direct.priority = 999;
        direct.direct_set_priority = true;
        let p = plugin.set(0xffff_0000, &direct).map_err(fault)?;
        ensure(p == 999, || {
            format!("returned {p} for a job with --priority=999")
        })
    });
    suite.run("positive nice never raises priority", || {
        let mut nice = job.clone();
        nice.details.nice = 100;
        let base = plugin.set(0xffff_0000, &job).map_err(fault)?;
        let with_nice = plugin.set(0xffff_0000, &nice).map_err(fault)?;
        ensure(with_nice <= base, || {
            format!("nice=100 gave {with_nice} > {base}")
        })
    });
    suite.run("get-priority-factors-list answers valid rows", || {
        let request = FactorsRequest {
            job_ids: Vec::new(),
            user_ids: Vec::new(),
            partitions: Vec::new(),
        };
        plugin
            .get_priority_factors_list(std::slice::from_ref(&job), &request, 0)
            .map(|_| ())
            .map_err(fault)
    });
    suite.run("state-save then state-restore round-trips", || {
        let data = plugin.state_save().map_err(fault)?;
        plugin.state_restore(&data).map_err(fault)
    });
    suite.run("state-restore refuses garbage with an error", || {
        refuses_garbage(plugin.state_restore(b"\xffgarbage\x00not a state"))
    });
    let mut ended = job.clone();
    ended.state = JobState::Complete;
    suite.run("job-end succeeds", || plugin.job_end(&ended).map_err(fault));
    suite.run("reconfig succeeds", || {
        plugin.reconfig(&config, false, &[]).map_err(fault)
    });
    suite.run("calculate does not fault", || {
        no_fault(plugin.calculate(&[], &[job.job_id]))
    });
    suite.run("recover does not fault", || {
        no_fault(plugin.recover(0, std::slice::from_ref(&job)))
    });
    suite.run("update-associations and update-qos succeed", || {
        plugin.update_associations(&[]).map_err(fault)?;
        plugin.update_qos(&[]).map_err(fault)
    });
    suite.run("association-usages does not fault", || {
        no_fault(plugin.association_usages())
    });
    suite.run(
        "set-assoc-usage does not fault on an unknown association",
        || no_fault(plugin.set_assoc_usage(u32::MAX)),
    );
    suite.run("fini succeeds", || plugin.fini().map_err(fault));
}

fn task_checks(suite: &mut Suite, host: &Host, source: &PluginSource, settings: PluginSettings) {
    let plugin = match TaskPlugin::load(host, source, settings) {
        Ok(p) => p,
        Err(e) => return suite.run("loads into the task slot", || Err(e.to_string())),
    };
    suite.run("init accepts a default configuration", || {
        plugin.init(&fixtures::task_config()).map_err(fault)
    });
    let launch = fixtures::launch_request(7, 1, 4);
    suite.run("slurmd-batch-request succeeds", || {
        plugin
            .slurmd_batch_request(&fixtures::batch_request(7, 4))
            .map(|_| ())
            .map_err(fault)
    });
    suite.run("slurmd-launch-request succeeds", || {
        plugin
            .slurmd_launch_request(&launch)
            .map(|_| ())
            .map_err(fault)
    });
    suite.run("slurmd-reserve-resources succeeds", || {
        plugin.slurmd_reserve_resources(&launch).map_err(fault)
    });
    suite.run("slurmd-suspend-job and slurmd-resume-job succeed", || {
        plugin.slurmd_suspend_job(7).map_err(fault)?;
        plugin.slurmd_resume_job(7).map_err(fault)
    });
    let mut step = fixtures::step(7, 0);
    step.cores = fixtures::bitmap(4, 0..4);
    step.task_pids = vec![4242];
    let task = fixtures::task(0, 4242);
    suite.run("pre-setuid succeeds", || {
        plugin.pre_setuid(&step).map_err(fault)
    });
    suite.run("pre-launch-priv succeeds", || {
        plugin.pre_launch_priv(&step, &task).map_err(fault)
    });
    suite.run("pre-launch succeeds", || {
        plugin.pre_launch(&step, &task).map_err(fault)
    });
    suite.run("post-term succeeds", || {
        plugin.post_term(&step, &task).map_err(fault)
    });
    suite.run("post-step succeeds", || {
        plugin.post_step(&step).map_err(fault)
    });
    suite.run("add-pid succeeds", || plugin.add_pid(4242).map_err(fault));
    suite.run("update-mem-limit succeeds", || {
        plugin.update_mem_limit(&step, 1000, 500).map_err(fault)
    });
    suite.run("slurmd-release-resources succeeds", || {
        plugin.slurmd_release_resources(7).map_err(fault)
    });
    suite.run("fini succeeds", || plugin.fini().map_err(fault));
}

/// The bundled plugins a select wrapper is checked over, the first this
/// host carries: the one a site's policy most often wraps, then linear.
const WRAPPED: [&str; 2] = ["select/cons_tres", "select/linear"];

fn select_checks(suite: &mut Suite, host: &Host, source: &PluginSource, settings: PluginSettings) {
    let plugin = match SelectPlugin::load(host, source, settings.clone()) {
        Ok(p) => p,
        // A select wrapper runs the same checks over a bundled plugin.
        Err(LoadError::WrapperWithoutInner { .. }) => {
            let inner = WRAPPED
                .into_iter()
                .find(|t| crate::bundled::find(host.bundled(), t).is_some());
            let Some(inner) = inner else {
                return suite.run("loads as a select wrapper over a bundled plugin", || {
                    Err(format!(
                        "it is a select wrapper, checked over a bundled {}; this host carries neither",
                        WRAPPED.join(" or ")
                    ))
                });
            };
            let stack = SelectPlugin::load(
                host,
                &PluginSource::Bundled(inner.into()),
                PluginSettings::default(),
            )
            .and_then(|inner| SelectPlugin::load_over(host, source, settings, inner));
            match stack {
                Ok(p) => {
                    suite.run("loads as a select wrapper over a bundled plugin", || Ok(()));
                    p
                }
                Err(e) => {
                    return suite.run("loads as a select wrapper over a bundled plugin", || {
                        Err(e.to_string())
                    })
                }
            }
        }
        Err(e) => return suite.run("loads into the select slot", || Err(e.to_string())),
    };
    let mut config = fixtures::select_config();
    config.partitions.push(crate::bindings::types::Partition {
        index: 0,
        name: "debug".into(),
        nodes: fixtures::bitmap(2, [0, 1]),
        oversubscribe: crate::bindings::types::Oversubscribe::No,
        priority_job_factor: 1,
        priority_tier: 1,
        preempt_mode: None,
        max_time: None,
        default_time: None,
        max_nodes: None,
        min_nodes: 1,
        default_memory: crate::bindings::types::MemoryRequest::None,
        max_memory: crate::bindings::types::MemoryRequest::None,
        max_cpus_per_node: None,
        lln: false,
        gpu_defaults: crate::bindings::types::GpuDefaults {
            cpus_per_gpu: None,
            mem_per_gpu: None,
        },
    });
    let nodes = [
        fixtures::node(0, "n1", 1, 4, 1, 4000),
        fixtures::node(1, "n2", 1, 4, 1, 4000),
    ];
    suite.run("init accepts a two-node configuration", || {
        plugin.init(&config).map_err(fault)
    });
    suite.run("node-init accepts the node table", || {
        plugin.node_init(&nodes).map_err(fault)
    });
    let job = fixtures::job(1);
    let request = |mode| fixtures::one_node_request(job.clone(), mode, fixtures::bitmap(2, [0, 1]));
    suite.run(
        "job-test test-only places a one-node job on an idle cluster",
        || {
            plugin
                .job_test(&request(JobTestMode::TestOnly))
                .map(|_| ())
                .map_err(fault)
        },
    );
    let placed = plugin.job_test(&request(JobTestMode::RunNow));
    suite.run(
        "job-test run-now places a one-node job on an idle cluster",
        || placed.as_ref().map(|_| ()).map_err(|e| fault(e.clone())),
    );
    if let Ok(result) = placed {
        let mut running = job.clone();
        running.state = JobState::Running;
        running.resources = Some(result.resources);
        suite.run("job-begin then job-fini succeed", || {
            plugin.job_begin(&running).map_err(fault)?;
            plugin.job_fini(&running).map_err(fault)
        });
    }
    suite.run("state-save then state-restore round-trips", || {
        let data = plugin.state_save().map_err(fault)?;
        plugin.state_restore(&data).map_err(fault)
    });
    suite.run("state-restore refuses garbage with an error", || {
        refuses_garbage(plugin.state_restore(b"\xffgarbage\x00not a state"))
    });
    suite.run("select-nodeinfo alloc, pack, unpack, free", || {
        let info = plugin.nodeinfo_alloc().map_err(fault)?;
        let packed = plugin.nodeinfo_pack(info, 0x2600).map_err(fault)?;
        let back = plugin.nodeinfo_unpack(&packed, 0x2600).map_err(fault)?;
        plugin.drop_resource(back).map_err(fault)?;
        plugin.drop_resource(info).map_err(fault)
    });
    suite.run(
        "select-jobinfo alloc, copy, pack, unpack, to-string, free",
        || {
            let info = plugin.jobinfo_alloc().map_err(fault)?;
            let copy = plugin.jobinfo_copy(info).map_err(fault)?;
            let packed = plugin.jobinfo_pack(copy, 0x2600).map_err(fault)?;
            let back = plugin.jobinfo_unpack(&packed, 0x2600).map_err(fault)?;
            plugin
                .jobinfo_to_string(back, SprintMode::Mixed)
                .map_err(fault)?;
            for r in [back, copy, info] {
                plugin.drop_resource(r).map_err(fault)?;
            }
            Ok(())
        },
    );
    suite.run("nodeinfo-set-all succeeds", || {
        plugin.nodeinfo_set_all().map_err(fault)
    });
    suite.run("get-info-from-plugin answers cr-plugin", || {
        plugin
            .get_info_from_plugin(PluginInfoField::CrPlugin, None)
            .map(|_| ())
            .map_err(fault)
    });
    suite.run("ba-get-dims does not fault", || {
        plugin.ba_get_dims().map(|_| ()).map_err(fault)
    });
    suite.run("fini succeeds", || plugin.fini().map_err(fault));
}

fn gres_checks(suite: &mut Suite, host: &Host, source: &PluginSource, settings: PluginSettings) {
    let plugin = match GresPlugin::load(host, source, settings) {
        Ok(p) => p,
        Err(e) => return suite.run("loads into the gres slot", || Err(e.to_string())),
    };
    suite.run("init accepts a default configuration", || {
        plugin.init(&fixtures::gres_config()).map_err(fault)
    });
    let node = NodeHardware {
        name: "n1".into(),
        cpus: 4,
        sockets: 1,
        cores_per_socket: 4,
        threads_per_core: 1,
        configured: Vec::new(),
    };
    suite.run("node-config-load accepts a node without this GRES", || {
        plugin
            .node_config_load(&[], &node)
            .map(|_| ())
            .map_err(fault)
    });
    suite.run(
        "job-set-env without an allocation gives valid edits",
        || {
            plugin
                .job_set_env(None, EnvFlags::empty())
                .map(|_| ())
                .map_err(fault)
        },
    );
    suite.run(
        "step-set-env without an allocation gives valid edits",
        || {
            plugin
                .step_set_env(None, EnvFlags::empty())
                .map(|_| ())
                .map_err(fault)
        },
    );
    suite.run(
        "task-set-env without an allocation gives valid edits",
        || {
            plugin
                .task_set_env(None, EnvFlags::empty())
                .map(|_| ())
                .map_err(fault)
        },
    );
    suite.run("send-stepd then recv-stepd round-trips", || {
        let data = plugin.send_stepd().map_err(fault)?;
        plugin.recv_stepd(&data).map_err(fault)
    });
    suite.run("get-devices succeeds", || {
        plugin.get_devices().map(|_| ()).map_err(fault)
    });
    suite.run("step-hardware-init and -fini without GPUs succeed", || {
        plugin.step_hardware_init(None, None).map_err(fault)?;
        plugin.step_hardware_fini().map_err(fault)
    });
    suite.run(
        "epilog-build-env for a job without GRES does not fault",
        || no_fault(plugin.epilog_build_env(&fixtures::job(1))),
    );
    suite.run("fini succeeds", || plugin.fini().map_err(fault));
}

/// A refusal must be the plugin's own error, not acceptance or a fault.
fn refuses_garbage(result: Result<(), CallError>) -> Result<(), String> {
    match result {
        Err(CallError::Plugin { .. }) => Ok(()),
        Ok(()) => Err("accepted bytes that are not a state it saved".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The plugin may answer with its own error, but must not fault.
fn no_fault<T>(result: Result<T, CallError>) -> Result<(), String> {
    match result {
        Err(CallError::Plugin { .. }) | Ok(_) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}
