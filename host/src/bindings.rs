//! Host-side bindings of the `slurm:plugin` worlds.
//!
//! `base` holds the shared `types`, `log` and `clock`; each kind's world
//! reuses them, so a `Job` is the same Rust type for every kind.

/// The shared interfaces (`plugin-imports` world).
pub mod base {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "plugin-imports",
    });
}

/// The `select-plugin` world.
pub mod select {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "select-plugin",
        with: {
            "slurm:plugin/types": crate::bindings::base::slurm::plugin::types,
            "slurm:plugin/log": crate::bindings::base::slurm::plugin::log,
            "slurm:plugin/clock": crate::bindings::base::slurm::plugin::clock,
        },
    });
}

/// The `gres-plugin` world.
pub mod gres {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "gres-plugin",
        with: {
            "slurm:plugin/types": crate::bindings::base::slurm::plugin::types,
            "slurm:plugin/log": crate::bindings::base::slurm::plugin::log,
            "slurm:plugin/clock": crate::bindings::base::slurm::plugin::clock,
        },
    });
}

/// The `priority-plugin` world.
pub mod priority {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "priority-plugin",
        with: {
            "slurm:plugin/types": crate::bindings::base::slurm::plugin::types,
            "slurm:plugin/log": crate::bindings::base::slurm::plugin::log,
            "slurm:plugin/clock": crate::bindings::base::slurm::plugin::clock,
        },
    });
}

/// The `task-plugin` world.
pub mod task {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "task-plugin",
        with: {
            "slurm:plugin/types": crate::bindings::base::slurm::plugin::types,
            "slurm:plugin/log": crate::bindings::base::slurm::plugin::log,
            "slurm:plugin/clock": crate::bindings::base::slurm::plugin::clock,
        },
    });
}

pub use base::slurm::plugin::types;

impl types::Bitmap {
    /// A bitmap of `len` bits with `bits` set.
    ///
    /// # Panics
    /// If a bit is at or past `len`.
    pub fn with_ones(len: u32, bits: impl IntoIterator<Item = u32>) -> types::Bitmap {
        let mut words = vec![0u64; (len as usize).div_ceil(64)];
        for bit in bits {
            assert!(bit < len, "bit {bit} outside a bitmap of {len}");
            words[(bit / 64) as usize] |= 1 << (bit % 64);
        }
        types::Bitmap { len, words }
    }

    /// The set bits, ascending, found a word at a time (bits at or past
    /// the length are not given): the host reads cluster-sized node maps
    /// in every select answer it checks.
    pub fn ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.words
            .iter()
            .zip(0u32..)
            .flat_map(|(&word, w)| {
                std::iter::successors(Some(word).filter(|&x| x != 0), |&x| {
                    Some(x & (x - 1)).filter(|&y| y != 0)
                })
                .map(move |x| w * 64 + x.trailing_zeros())
            })
            .take_while(move |&i| i < self.len)
    }
}
