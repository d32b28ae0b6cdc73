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
