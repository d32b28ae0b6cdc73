//! Marks libslurm_wasm.so `NODELETE`: the library registers `pthread_atfork`
//! handlers and starts threads (the epoch ticker), so unmapping it while the
//! process lives would leave both pointing at unmapped code. Slurm
//! `dlclose`s a plugin whose `init` fails; with this flag `dlclose` keeps the
//! library mapped however the shim opened it.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
