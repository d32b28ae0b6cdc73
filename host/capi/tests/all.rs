//! The C library's integration tests, one binary: the C programs built
//! against `slurm_wasm.h` and linked with the library (`c_program`,
//! `c_gres_select`) and the header's freshness (`header`).

mod support;

mod c_gres_select;
mod c_program;
mod header;
