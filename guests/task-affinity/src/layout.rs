//! The two task layouts of `lllp_distribution` (Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `_task_layout_lllp_block`/`_task_layout_lllp_cyclic`): which abstract
//! CPUs each task of the node gets, then the expansion of those CPUs to the
//! bind unit.
//!
//! Abstract CPUs run socket by socket, core by core, thread by thread, so
//! the block layout just walks them in order; the cyclic layout keeps a
//! cursor per socket and moves to the next socket after each task (after
//! each CPU for `fcyclic`).

use std::fmt;

use slurm_wasm_sdk::Bitmap;

use crate::bind_type::{ONE_THREAD_PER_CORE, TO_CORES, TO_SOCKETS, TO_THREADS};
use crate::dist::LllpLayout;
use crate::hardware::Hardware;

/// What a layout needs to know about the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutRequest {
    /// Tasks on this node.
    pub tasks: usize,
    pub cpus_per_task: usize,
    /// `cpu_bind_type`, with the bind unit already chosen.
    pub bind: u32,
    /// `--ntasks-per-core`, 0 for no limit.
    pub ntasks_per_core: usize,
    /// `--ntasks-per-socket`, 0 for no limit (the block layout only).
    pub ntasks_per_socket: usize,
    /// `--threads-per-core`, 0 when not given.
    pub threads_per_core: usize,
    pub layout: LllpLayout,
}

/// The tasks' abstract CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// One mask per task, in local task order, `block_map_size` bits wide,
    /// expanded to the bind unit.
    pub masks: Vec<Bitmap>,
    /// CPUs per task actually laid out: fewer than requested when the step
    /// overcommits its CPUs ("reset cpus_per_task").
    pub cpus_per_task: usize,
}

/// Why no layout was found (`ESLURMD_CPU_LAYOUT_ERROR`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    /// `--threads-per-core` needs more CPUs than the step has.
    ThreadsPerCore { have: usize, need: usize },
    /// Fewer CPUs than tasks.
    TooFewCpus { have: usize, tasks: usize },
    /// A whole pass over the CPUs placed no task.
    NoProgress(&'static str),
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::ThreadsPerCore { have, need } => write!(
                f,
                "only {have} bits in avail_map, threads_per_core requires {need}!"
            ),
            LayoutError::TooFewCpus { have, tasks } => {
                write!(f, "only {have} bits in avail_map for {tasks} tasks!")
            }
            LayoutError::NoProgress(layout) => write!(f, "{layout} failure"),
        }
    }
}

impl std::error::Error for LayoutError {}

/// Lays the tasks out on the allocated abstract CPUs `avail` and expands
/// each task's CPUs to its bind unit.
pub fn lay_out(
    request: &LayoutRequest,
    avail: &Bitmap,
    hw: &Hardware,
) -> Result<Layout, LayoutError> {
    let threads_per_core = if request.threads_per_core != 0 {
        request.threads_per_core
    } else {
        usize::from(request.bind & ONE_THREAD_PER_CORE != 0)
    };
    let have = avail.count();
    let hw_threads = usize::from(hw.threads);
    if let Some(per_task) = hw_threads.checked_div(threads_per_core) {
        let need = request.cpus_per_task * per_task;
        if have < need {
            return Err(LayoutError::ThreadsPerCore { have, need });
        }
    }
    if have < request.tasks {
        return Err(LayoutError::TooFewCpus {
            have,
            tasks: request.tasks,
        });
    }
    let mut cpus_per_task = request.cpus_per_task;
    if have < request.tasks * cpus_per_task {
        cpus_per_task = have / request.tasks;
        slurm_wasm_sdk::info!(
            "reset cpus_per_task from {} to {cpus_per_task}",
            request.cpus_per_task
        );
    }
    let walk = Walk {
        request,
        avail,
        hw,
        cpus_per_task,
        threads_per_core,
    };
    let mut masks = match request.layout {
        LllpLayout::Block => walk.block()?,
        LllpLayout::Cyclic { full } => walk.cyclic(full)?,
    };
    for mask in &mut masks {
        expand(mask, request.bind, avail, hw);
    }
    Ok(Layout {
        masks,
        cpus_per_task,
    })
}

/// One run of a layout, with the counters both layouts keep.
struct Walk<'a> {
    request: &'a LayoutRequest,
    avail: &'a Bitmap,
    hw: &'a Hardware,
    cpus_per_task: usize,
    threads_per_core: usize,
}

/// Tasks and threads placed per core, tasks per socket.
struct Counters {
    core_tasks: Vec<usize>,
    core_threads: Vec<usize>,
    socket_tasks: Vec<usize>,
}

impl Counters {
    fn new(hw: &Hardware) -> Self {
        let threads = usize::from(hw.threads);
        let cores = hw.total_cores().max(hw.size().div_ceil(threads));
        let sockets = usize::from(hw.sockets).max(hw.size().div_ceil(hw.socket_width()));
        Counters {
            core_tasks: vec![0; cores],
            core_threads: vec![0; cores],
            socket_tasks: vec![0; sockets],
        }
    }

    fn clear(&mut self) {
        self.core_tasks.fill(0);
        self.core_threads.fill(0);
        self.socket_tasks.fill(0);
    }
}

impl Walk<'_> {
    /// After a task's last CPU, binding to cores (or one task per core)
    /// skips the rest of that core: `T - cpt` CPUs when a task is smaller
    /// than a core, `cpt mod T` otherwise.
    fn threads_to_skip(&self) -> usize {
        let r = self.request;
        if r.bind & TO_CORES == 0 && r.ntasks_per_core != 1 {
            return 0;
        }
        let threads = usize::from(self.hw.threads);
        if self.cpus_per_task < threads {
            threads - self.cpus_per_task
        } else {
            self.cpus_per_task % threads
        }
    }

    /// May core `core` take one more CPU of a task? Not when it holds
    /// `--ntasks-per-core` tasks or gives `--threads-per-core` threads.
    fn core_has_room(&self, counters: &Counters, core: usize) -> bool {
        let r = self.request;
        let tasks_full = r.ntasks_per_core != 0 && counters.core_tasks[core] >= r.ntasks_per_core;
        let threads_full =
            self.threads_per_core != 0 && counters.core_threads[core] >= self.threads_per_core;
        !tasks_full && !threads_full
    }

    /// Block: walk the abstract CPUs in order, repeatedly; every pass after
    /// the first starts with cleared counters (oversubscription).
    fn block(&self) -> Result<Vec<Bitmap>, LayoutError> {
        let r = self.request;
        let size = self.hw.size();
        let threads = usize::from(self.hw.threads);
        let socket_width = self.hw.socket_width();
        let skip = self.threads_to_skip();
        let mut masks = vec![Bitmap::new(size); r.tasks];
        let mut counters = Counters::new(self.hw);
        let (mut task, mut placed) = (0, 0);
        let mut last_task = None;
        while task < r.tasks {
            if last_task == Some(task) {
                return Err(LayoutError::NoProgress("_task_layout_lllp_block"));
            }
            if task > 0 {
                counters.clear();
            }
            last_task = Some(task);
            let mut i = 0;
            while i < size {
                let cpu = i;
                i += 1;
                if !self.avail.get(cpu) {
                    continue;
                }
                let core = cpu / threads;
                let socket = cpu / socket_width;
                if !self.core_has_room(&counters, core)
                    || (r.ntasks_per_socket != 0
                        && counters.socket_tasks[socket] >= r.ntasks_per_socket)
                {
                    continue;
                }
                masks[task].set(cpu);
                counters.core_threads[core] += 1;
                placed += 1;
                if placed < self.cpus_per_task {
                    continue;
                }
                counters.core_tasks[core] += 1;
                counters.socket_tasks[socket] += 1;
                i += skip;
                placed = 0;
                task += 1;
                if task >= r.tasks {
                    break;
                }
            }
        }
        Ok(masks)
    }

    /// Cyclic: a cursor per socket; after a task (or, with `full`, after
    /// every CPU) move to the next socket. When every socket's cursor has
    /// run out, all cursors and counters restart (oversubscription).
    fn cyclic(&self, full: bool) -> Result<Vec<Bitmap>, LayoutError> {
        let r = self.request;
        let size = self.hw.size();
        let threads = usize::from(self.hw.threads);
        let sockets = usize::from(self.hw.sockets);
        let socket_width = self.hw.socket_width();
        let skip = self.threads_to_skip();
        let mut masks = vec![Bitmap::new(size); r.tasks];
        let mut counters = Counters::new(self.hw);
        let mut cursor = vec![0usize; sockets];
        let (mut socket, mut task, mut placed) = (0, 0, 0);
        let mut last_task = None;
        while task < r.tasks {
            if last_task == Some(task) {
                return Err(LayoutError::NoProgress("_task_layout_lllp_cyclic"));
            }
            last_task = Some(task);
            for _ in 0..size {
                let first = socket;
                while cursor[socket] >= socket_width {
                    socket = (socket + 1) % sockets;
                    if socket == first {
                        counters.clear();
                        cursor.fill(0);
                    }
                }
                let cpu = (cursor[socket] + socket * socket_width) % size;
                cursor[socket] += 1;
                if !self.avail.get(cpu) {
                    continue;
                }
                let core = cpu / threads;
                if !self.core_has_room(&counters, core) {
                    continue;
                }
                masks[task].set(cpu);
                let switched = full;
                if full {
                    socket = (socket + 1) % sockets;
                }
                counters.core_threads[core] += 1;
                placed += 1;
                if placed < self.cpus_per_task {
                    continue;
                }
                counters.core_tasks[core] += 1;
                cursor[socket] += skip;
                placed = 0;
                if !switched {
                    socket = (socket + 1) % sockets;
                }
                task += 1;
                if task >= r.tasks {
                    break;
                }
            }
        }
        Ok(masks)
    }
}

/// Widens a task's CPUs to its bind unit (`_expand_masks`): threads stay;
/// cores (on nodes with 2+ threads per core) take every allocated thread of
/// each core touched; sockets (on nodes with 2+ CPUs per socket) every
/// allocated CPU of each socket touched, a socket being `size / sockets`
/// CPUs wide. Locality domains are widened later, on OS ids.
fn expand(mask: &mut Bitmap, bind: u32, avail: &Bitmap, hw: &Hardware) {
    let width = if bind & TO_THREADS != 0 {
        return;
    } else if bind & TO_CORES != 0 {
        if hw.threads < 2 {
            return;
        }
        usize::from(hw.threads)
    } else if bind & TO_SOCKETS != 0 {
        if hw.socket_width() < 2 {
            return;
        }
        (hw.size() / usize::from(hw.sockets)).max(1)
    } else {
        return;
    };
    let touched: Vec<usize> = mask.ones().map(|cpu| cpu / width).collect();
    for unit in touched {
        for cpu in unit * width..(unit + 1) * width {
            if avail.get(cpu) {
                mask.set(cpu);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bind_type::TO_LDOMS;
    use crate::hardware::testing::identity;

    fn request(tasks: usize, cpt: usize, bind: u32, layout: LllpLayout) -> LayoutRequest {
        LayoutRequest {
            tasks,
            cpus_per_task: cpt,
            bind,
            ntasks_per_core: 0,
            ntasks_per_socket: 0,
            threads_per_core: 0,
            layout,
        }
    }

    fn hex(layout: &Layout) -> Vec<String> {
        layout.masks.iter().map(Bitmap::to_hex_mask).collect()
    }

    const CYCLIC: LllpLayout = LllpLayout::Cyclic { full: false };

    #[test]
    fn too_few_cpus_is_a_layout_error() {
        let hw = identity(1, 2, 1);
        let avail = Bitmap::full(2);
        let err = lay_out(&request(3, 1, TO_THREADS, CYCLIC), &avail, &hw).unwrap_err();
        assert_eq!(err.to_string(), "only 2 bits in avail_map for 3 tasks!");
        let mut r = request(1, 2, TO_THREADS, CYCLIC);
        r.threads_per_core = 1;
        let hw = identity(1, 1, 4);
        let avail = Bitmap::from_bits(4, [0, 1, 2]);
        assert_eq!(
            lay_out(&r, &avail, &hw).unwrap_err(),
            LayoutError::ThreadsPerCore { have: 3, need: 8 }
        );
    }

    #[test]
    fn overcommit_reduces_cpus_per_task() {
        let hw = identity(1, 4, 1);
        let layout = lay_out(
            &request(2, 3, TO_THREADS, LllpLayout::Block),
            &Bitmap::full(4),
            &hw,
        )
        .unwrap();
        assert_eq!(layout.cpus_per_task, 2);
        assert_eq!(hex(&layout), ["0x3", "0xC"]);
    }

    #[test]
    fn more_tasks_than_cores_oversubscribe() {
        // One task per core on 2 cores: the second pass restarts the counters.
        let hw = identity(1, 2, 2);
        let mut r = request(4, 1, TO_THREADS, LllpLayout::Block);
        r.ntasks_per_core = 1;
        let layout = lay_out(&r, &Bitmap::full(4), &hw).unwrap();
        assert_eq!(hex(&layout), ["0x1", "0x4", "0x1", "0x4"]);
        // Cyclic on one socket: the cursor runs out and restarts.
        let layout = lay_out(&request(4, 1, TO_CORES, CYCLIC), &Bitmap::full(4), &hw).unwrap();
        assert_eq!(hex(&layout), ["0x3", "0xC", "0x3", "0xC"]);
    }

    #[test]
    fn ntasks_per_socket_limits_the_block_layout() {
        let hw = identity(2, 2, 1);
        let mut r = request(2, 1, TO_THREADS, LllpLayout::Block);
        r.ntasks_per_socket = 1;
        let layout = lay_out(&r, &Bitmap::full(4), &hw).unwrap();
        assert_eq!(hex(&layout), ["0x1", "0x4"]);
    }

    #[test]
    fn one_thread_per_core_skips_siblings() {
        let hw = identity(1, 2, 2);
        let layout = lay_out(
            &request(2, 1, TO_THREADS | ONE_THREAD_PER_CORE, LllpLayout::Block),
            &Bitmap::full(4),
            &hw,
        )
        .unwrap();
        assert_eq!(hex(&layout), ["0x1", "0x4"]);
    }

    #[test]
    fn ldoms_are_not_expanded_here() {
        let hw = identity(2, 2, 2);
        let layout = lay_out(
            &request(1, 1, TO_LDOMS, LllpLayout::Block),
            &Bitmap::full(8),
            &hw,
        )
        .unwrap();
        assert_eq!(hex(&layout), ["0x01"]);
    }
}
