//! Conversions between the host's binding types (wasmtime's `bindgen!`) and
//! the SDK's (wit-bindgen's): both are generated from the same WIT, so each
//! record, enum, variant and flags type has the same shape on both sides,
//! and converting is a field-by-field copy (no serialisation).
//!
//! Host to SDK goes by reference ([`ToSdk`]: the engine keeps its records
//! and passes them to the plugins, as it passes them to a component); SDK
//! to host goes by value ([`IntoHost`]: the plugins' answers are moved into
//! the engine's records).
//!
//! Only the types the [`Select`](slurm::controller::Select) and
//! [`Prioritizer`](crate::engine::Prioritizer) calls carry are listed. A
//! field added to one of them in the WIT is a compile error here (every
//! struct literal names every field, every match names every case); a flag
//! added to a flags type is caught by the `every_flag_converts` test.

use slurm_wasm_host::bindings::priority::exports::slurm::plugin::priority as host_priority;
use slurm_wasm_host::bindings::select::exports::slurm::plugin::select as host_select;
use slurm_wasm_host::types as host;
use slurm_wasm_sdk::priority as sdk_priority;
use slurm_wasm_sdk::select as sdk_select;
use slurm_wasm_sdk::types as sdk;

/// A host value as the SDK's type.
pub trait ToSdk {
    type Sdk;
    fn to_sdk(&self) -> Self::Sdk;
}

/// An SDK value as the host's type.
pub trait IntoHost {
    type Host;
    fn into_host(self) -> Self::Host;
}

/// Types that are the same Rust type on both sides.
macro_rules! same {
    ($($ty:ty),* $(,)?) => {$(
        impl ToSdk for $ty {
            type Sdk = $ty;
            fn to_sdk(&self) -> $ty {
                self.clone()
            }
        }
        impl IntoHost for $ty {
            type Host = $ty;
            fn into_host(self) -> $ty {
                self
            }
        }
    )*};
}

same!(bool, u8, u16, u32, u64, i32, i64, f64, String);

impl<T: ToSdk> ToSdk for Vec<T> {
    type Sdk = Vec<T::Sdk>;
    fn to_sdk(&self) -> Self::Sdk {
        self.iter().map(ToSdk::to_sdk).collect()
    }
}

impl<T: IntoHost> IntoHost for Vec<T> {
    type Host = Vec<T::Host>;
    fn into_host(self) -> Self::Host {
        self.into_iter().map(IntoHost::into_host).collect()
    }
}

impl<T: ToSdk> ToSdk for Option<T> {
    type Sdk = Option<T::Sdk>;
    fn to_sdk(&self) -> Self::Sdk {
        self.as_ref().map(ToSdk::to_sdk)
    }
}

impl<T: IntoHost> IntoHost for Option<T> {
    type Host = Option<T::Host>;
    fn into_host(self) -> Self::Host {
        self.map(IntoHost::into_host)
    }
}

/// Records: `host_module::Type => sdk_module::Type { field, ... }`.
macro_rules! records {
    ($($h:ident :: $ty:ident => $s:ident { $($field:ident),* $(,)? })*) => {$(
        impl ToSdk for $h::$ty {
            type Sdk = $s::$ty;
            fn to_sdk(&self) -> $s::$ty {
                $s::$ty { $($field: self.$field.to_sdk()),* }
            }
        }
        impl IntoHost for $s::$ty {
            type Host = $h::$ty;
            fn into_host(self) -> $h::$ty {
                $h::$ty { $($field: self.$field.into_host()),* }
            }
        }
    )*};
}

/// Enums and variants: `Case` or `Case(payload)`.
macro_rules! variants {
    ($($h:ident :: $ty:ident => $s:ident { $($case:ident $(($x:ident))?),* $(,)? })*) => {$(
        impl ToSdk for $h::$ty {
            type Sdk = $s::$ty;
            fn to_sdk(&self) -> $s::$ty {
                match self {
                    $($h::$ty::$case $(($x))? => $s::$ty::$case $(($x.to_sdk()))?,)*
                }
            }
        }
        impl IntoHost for $s::$ty {
            type Host = $h::$ty;
            fn into_host(self) -> $h::$ty {
                match self {
                    $($s::$ty::$case $(($x))? => $h::$ty::$case $(($x.into_host()))?,)*
                }
            }
        }
    )*};
}

/// Flags types: every flag, by its constant's name.
macro_rules! flags {
    ($($h:ident :: $ty:ident => $s:ident { $($flag:ident),* $(,)? })*) => {$(
        impl ToSdk for $h::$ty {
            type Sdk = $s::$ty;
            fn to_sdk(&self) -> $s::$ty {
                let mut out = $s::$ty::empty();
                $(if self.contains($h::$ty::$flag) {
                    out |= $s::$ty::$flag;
                })*
                out
            }
        }
        impl IntoHost for $s::$ty {
            type Host = $h::$ty;
            fn into_host(self) -> $h::$ty {
                let mut out = $h::$ty::empty();
                $(if self.contains($s::$ty::$flag) {
                    out |= $h::$ty::$flag;
                })*
                out
            }
        }
    )*};
}

records! {
    host::Bitmap => sdk { len, words }
    host::KeyValue => sdk { key, value }
    host::NodeState => sdk { base, flags }
    host::GresCount => sdk { name, type_name, count }
    host::GresDeviceGroup => sdk { name, type_name, count, cores, links }
    host::Node => sdk {
        index, name, cpus, boards, sockets, cores_per_socket, threads_per_core,
        real_memory, mem_spec_limit, core_spec_count, cpu_spec_list, tmp_disk,
        weight, features, gres, gres_topology, state, partitions,
    }
    host::Partition => sdk {
        index, name, nodes, oversubscribe, priority_job_factor, priority_tier, preempt_mode,
        max_time, default_time, max_nodes, min_nodes, default_memory,
        max_memory, max_cpus_per_node, lln, gpu_defaults,
    }
    host::GpuDefaults => sdk { cpus_per_gpu, mem_per_gpu }
    host::GresRequest => sdk { name, type_name, scope, count, cpus_per_gres, mem_per_gres }
    host::JobDetails => sdk {
        min_nodes, max_nodes, num_tasks, min_cpus, max_cpus, cpus_per_task,
        ntasks_per_node, ntasks_per_socket, ntasks_per_core, ntasks_per_board,
        threads_per_core, sockets_per_node, cores_per_socket, pn_min_cpus,
        memory, pn_min_tmp_disk, contiguous, share, core_spec, overcommit, spread_job,
        required_nodes, excluded_nodes, features, task_dist, plane_size,
        cpu_bind_type, gres, gres_flags, nice, begin_time, accrue_time,
        submit_time,
    }
    host::TresAmount => sdk { name, count }
    host::GresAllocation => sdk { name, type_name, count, devices, per_device }
    host::NodeResources => sdk { node_index, cores, cpus, memory, gres }
    host::JobResources => sdk { nodes, ncpus, per_node, whole_nodes }
    host::Job => sdk {
        job_id, array_job_id, array_task_id, name, user_id, group_id, account,
        assoc_id, partitions, qos, state, priority, direct_set_priority,
        site_factor, time_limit, time_min, start_time, end_time,
        suspended_seconds, details, tres_requested, tres_allocated,
        billable_tres, total_cpus, resources,
    }
    host::ClusterConfig => sdk {
        cluster_name, select_type_parameters, default_memory,
        scheduler_parameters, preempt_mode, over_time_limit, kill_wait,
        task_plugin_param, gres_types, gpu_defaults, raw,
    }
    host_select::SelectConfig => sdk_select { cluster, partitions }
    host_select::PreempteeCandidate => sdk_select { job_id, mode }
    host_select::JobTestRequest => sdk_select {
        job, candidates, min_nodes, max_nodes, req_nodes, mode, flags,
        preemptee_candidates, excluded_cores,
    }
    host_select::JobTestResult => sdk_select { resources, start_time, preemptees }
    host::TresUsage => sdk { name, usage }
    host::Association => sdk {
        id, parent_id, account, user, user_id, partition, shares, priority,
        usage_raw, usage_tres_raw, grp_used_tres_run_secs,
    }
    host_priority::PriorityConfig => sdk_priority {
        cluster, partitions, partition_tres, cluster_cpus, cluster_nodes, cluster_tres,
    }
}

variants! {
    host::NodeBaseState => sdk { Unknown, Down, Idle, Allocated, Error, Mixed, Future }
    host::Oversubscribe => sdk { No, Yes(n), Force(n), Exclusive }
    host::MemoryRequest => sdk { None, PerNode(mb), PerCpu(mb) }
    host::GresScope => sdk { PerJob, PerNode, PerSocket, PerTask }
    host::ShareRequest => sdk {
        PartitionDefault, Oversubscribe, Exclusive, ExclusiveUser, ExclusiveMcs,
    }
    host::JobState => sdk {
        Pending, Running, Suspended, Complete, Cancelled, Failed, Timeout,
        NodeFail, Preempted, BootFail, Deadline, OutOfMemory,
    }
    host_select::JobTestMode => sdk_select { RunNow, TestOnly, WillRun, Reservation }
    host_select::PreemptMode => sdk_select { Suspend, Requeue, Cancel }
    host::Shares => sdk { Raw(n), Parent }
    host_priority::AssociationUpdate => sdk_priority { Upsert(a), Remove(id) }
}

flags! {
    host::NodeStateFlags => sdk {
        DRAIN, COMPLETING, NO_RESPOND, POWER_SAVE, POWERING_UP, POWERING_DOWN,
        FAIL, MAINT, RESERVED, REBOOT_REQUESTED, CLOUD, DYNAMIC,
    }
    host::GresFlags => sdk { ENFORCE_BINDING, DISABLE_BINDING }
    host_select::JobTestFlags => sdk_select { PREEMPT, CHECK_FULL, IGNORE_ERRORS }
    host::SelectTypeParams => sdk {
        CPU, SOCKET, CORE, MEMORY, OTHER_CONS_RES, OTHER_CONS_TRES, ONE_TASK_PER_CORE,
        CORE_DEFAULT_DIST_BLOCK, LLN, PACK_NODES,
    }
    host::PreemptModes => sdk { SUSPEND, REQUEUE, CANCEL, WITHIN, GANG }
    host::TaskPluginParams => sdk {
        NONE, SOCKETS, CORES, THREADS, VERBOSE, AUTOBIND_THREADS, AUTOBIND_CORES,
        AUTOBIND_SOCKETS, SLURMD_OFF_SPEC,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bitmap(len: u32, words: &[u64]) -> host::Bitmap {
        host::Bitmap {
            len,
            words: words.to_vec(),
        }
    }

    /// A running two-node job with every optional part present: GRES
    /// requests and allocations (devices and MPS shares), node lists,
    /// resources, TRES, and non-default enums and flags.
    fn full_job() -> host::Job {
        let mut job = slurm_wasm_host::fixtures::job(42);
        job.array_job_id = 40;
        job.array_task_id = Some(2);
        job.name = "train".into();
        job.account = Some("physics".into());
        job.assoc_id = 7;
        job.partitions = vec![1, 0];
        job.qos = Some("high".into());
        job.state = host::JobState::Running;
        job.priority = 12_345;
        job.direct_set_priority = true;
        job.site_factor = -5;
        job.time_limit = Some(90);
        job.time_min = Some(30);
        job.start_time = 1_700_000_000;
        job.end_time = 1_700_005_400;
        job.suspended_seconds = 12;
        let d = &mut job.details;
        d.min_nodes = 2;
        d.max_nodes = Some(4);
        d.num_tasks = 8;
        d.min_cpus = 8;
        d.max_cpus = Some(16);
        d.cpus_per_task = 2;
        d.ntasks_per_node = 4;
        d.threads_per_core = 1;
        d.memory = host::MemoryRequest::PerCpu(2000);
        d.share = host::ShareRequest::ExclusiveUser;
        d.core_spec = Some(1);
        d.required_nodes = Some(bitmap(70, &[0b11, 0]));
        d.excluded_nodes = Some(bitmap(70, &[0, 1 << 3]));
        d.features = Some("a100&ib".into());
        d.gres = vec![
            host::GresRequest {
                name: "gpu".into(),
                type_name: Some("a100".into()),
                scope: host::GresScope::PerNode,
                count: 2,
                cpus_per_gres: Some(4),
                mem_per_gres: Some(8000),
            },
            host::GresRequest {
                name: "mps".into(),
                type_name: None,
                scope: host::GresScope::PerTask,
                count: 50,
                cpus_per_gres: None,
                mem_per_gres: None,
            },
        ];
        d.gres_flags = host::GresFlags::ENFORCE_BINDING;
        d.nice = -10;
        d.submit_time = 1_699_990_000;
        job.tres_requested = vec![host::TresAmount {
            name: "gres/gpu".into(),
            count: 4,
        }];
        job.tres_allocated = vec![host::TresAmount {
            name: "cpu".into(),
            count: 16,
        }];
        job.billable_tres = Some(16.5);
        job.total_cpus = Some(16);
        let node = |index: u32, cores: u64| host::NodeResources {
            node_index: index,
            cores: bitmap(8, &[cores]),
            cpus: 8,
            memory: 16_000,
            gres: vec![
                host::GresAllocation {
                    name: "gpu".into(),
                    type_name: Some("a100".into()),
                    count: 2,
                    devices: Some(bitmap(4, &[0b0110])),
                    per_device: vec![],
                },
                host::GresAllocation {
                    name: "mps".into(),
                    type_name: None,
                    count: 100,
                    devices: Some(bitmap(2, &[0b11])),
                    per_device: vec![60, 40],
                },
            ],
        };
        job.resources = Some(host::JobResources {
            nodes: bitmap(70, &[0b11, 0]),
            ncpus: 16,
            per_node: vec![node(0, 0xff), node(1, 0x0f)],
            whole_nodes: false,
        });
        job
    }

    #[test]
    fn a_full_job_round_trips() {
        // Same WIT on both sides: host -> SDK -> host is the identity. The
        // binding types have no PartialEq; their Debug output prints every
        // field.
        let job = full_job();
        let sdk_job = job.to_sdk();
        assert_eq!(
            format!("{:?}", sdk_job.clone().into_host()),
            format!("{job:?}")
        );
        // Spot checks on the SDK side: the values a plugin reads.
        assert!(matches!(
            sdk_job.details.memory,
            sdk::MemoryRequest::PerCpu(2000)
        ));
        assert_eq!(sdk_job.details.gres_flags, sdk::GresFlags::ENFORCE_BINDING);
        assert_eq!(sdk_job.details.share, sdk::ShareRequest::ExclusiveUser);
        assert_eq!(sdk_job.details.gres[1].scope, sdk::GresScope::PerTask);
        let res = sdk_job.resources.as_ref().unwrap();
        assert_eq!(res.per_node[1].cores.words, vec![0x0f]);
        assert_eq!(res.per_node[0].gres[1].per_device, vec![60, 40]);
        assert_eq!(
            res.per_node[0].gres[0].devices.as_ref().unwrap().words,
            vec![0b0110]
        );
    }

    #[test]
    fn a_node_and_a_request_round_trip() {
        let mut node = slurm_wasm_host::fixtures::node(3, "gpu03", 2, 4, 2, 64_000);
        node.state = host::NodeState {
            base: host::NodeBaseState::Mixed,
            flags: host::NodeStateFlags::DRAIN | host::NodeStateFlags::POWER_SAVE,
        };
        node.gres_topology = vec![host::GresDeviceGroup {
            name: "gpu".into(),
            type_name: Some("a100".into()),
            count: 2,
            cores: Some(bitmap(8, &[0x0f])),
            links: vec![-1, 2],
        }];
        assert_eq!(
            format!("{:?}", node.to_sdk().into_host()),
            format!("{node:?}")
        );
        let request = host_select::JobTestRequest {
            job: full_job(),
            candidates: bitmap(70, &[u64::MAX, 0x3f]),
            min_nodes: 2,
            max_nodes: 4,
            req_nodes: 4,
            mode: host_select::JobTestMode::WillRun,
            flags: host_select::JobTestFlags::PREEMPT | host_select::JobTestFlags::IGNORE_ERRORS,
            preemptee_candidates: vec![host_select::PreempteeCandidate {
                job_id: 9,
                mode: host_select::PreemptMode::Requeue,
            }],
            excluded_cores: Some(bitmap(3, &[0b101])),
        };
        assert_eq!(
            format!("{:?}", request.to_sdk().into_host()),
            format!("{request:?}")
        );
    }

    #[test]
    fn every_flag_converts() {
        // A flag the WIT adds but the list above misses would be dropped:
        // `all()` must survive the conversion in both directions.
        assert_eq!(
            host::NodeStateFlags::all().to_sdk(),
            sdk::NodeStateFlags::all()
        );
        assert_eq!(
            sdk::NodeStateFlags::all().into_host(),
            host::NodeStateFlags::all()
        );
        assert_eq!(host::GresFlags::all().to_sdk(), sdk::GresFlags::all());
        assert_eq!(sdk::GresFlags::all().into_host(), host::GresFlags::all());
        assert_eq!(
            host_select::JobTestFlags::all().to_sdk(),
            sdk_select::JobTestFlags::all()
        );
        assert_eq!(
            sdk_select::JobTestFlags::all().into_host(),
            host_select::JobTestFlags::all()
        );
    }
}
