//! The `task_dist` encoding and srun's `--distribution` text (the
//! `slurm-wasm-srun` crate's, re-exported), and which task layout
//! `lllp_distribution` runs for them.

pub use srun::task_dist::*;

/// Which task layout `lllp_distribution` runs on a node (Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c
/// `lllp_distribution`, its switch on `task_dist & SLURM_DIST_NODESOCKMASK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LllpLayout {
    /// Fill each core and socket in abstract order.
    Block,
    /// Alternate sockets task by task; with `full` (`*:fcyclic`) CPU by CPU.
    Cyclic { full: bool },
}

/// The layout for `task_dist`: `block:block`, `cyclic:block` and `plane`
/// use block; a distribution without a socket level (block, cyclic,
/// arbitrary, unknown) uses block when `SelectTypeParameters` has
/// `CR_CORE_DEFAULT_DIST_BLOCK` (`default_block`) and cyclic otherwise;
/// everything else is cyclic, CPU by CPU for `*:fcyclic`.
pub fn lllp_layout(task_dist: u32, default_block: bool) -> LllpLayout {
    match task_dist & NODE_SOCKET_MASK {
        BLOCK_BLOCK | CYCLIC_BLOCK | PLANE => LllpLayout::Block,
        ARBITRARY | BLOCK | CYCLIC | UNKNOWN if default_block => LllpLayout::Block,
        level => LllpLayout::Cyclic {
            full: level == CYCLIC_CFULL || level == BLOCK_CFULL,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(arg: &str) -> u32 {
        parse(arg).unwrap().task_dist
    }

    #[test]
    fn layout_choice_follows_the_task_dist() {
        use LllpLayout::*;
        assert_eq!(lllp_layout(code("block:block"), false), Block);
        assert_eq!(lllp_layout(code("cyclic:block"), false), Block);
        assert_eq!(lllp_layout(code("cyclic:block:cyclic"), false), Block);
        assert_eq!(lllp_layout(code("plane=2"), false), Block);
        assert_eq!(lllp_layout(code("block"), false), Cyclic { full: false });
        assert_eq!(lllp_layout(code("block"), true), Block);
        assert_eq!(lllp_layout(UNKNOWN, true), Block);
        assert_eq!(
            lllp_layout(code("block:cyclic"), true),
            Cyclic { full: false }
        );
        assert_eq!(
            lllp_layout(code("block:fcyclic"), false),
            Cyclic { full: true }
        );
        assert_eq!(
            lllp_layout(code("cyclic:fcyclic"), true),
            Cyclic { full: true }
        );
        assert_eq!(
            lllp_layout(code("block,pack"), false),
            Cyclic { full: false }
        );
    }
}
