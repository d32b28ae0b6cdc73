//! What Slurm's commands show, written as they write it: a job and a
//! reservation (`scontrol show`, [`job`], with the per-node view of an
//! allocation in [`allocation`]), job priorities (`sprio -l`, [`sprio`]) and
//! the share tree (`sshare -a -l`, [`sshare`]).

pub mod allocation;
pub mod job;
pub mod sprio;
pub mod sshare;

/// Right-aligns (Slurm's `%.N`), cutting to the width.
fn right(text: &str, width: usize) -> String {
    let cut: String = text.chars().take(width).collect();
    format!("{cut:>width$}")
}

/// Left-aligns (Slurm's `%N`), cutting to the width.
fn left(text: &str, width: usize) -> String {
    let cut: String = text.chars().take(width).collect();
    format!("{cut:<width$}")
}
