//! The `task_dist` encoding (Slurm 22.05.8 slurm/slurm.h `task_dist_states_t`) and srun's `--distribution` text.
//!
//! A distribution has up to three levels, `node:socket:core`, encoded as
//! `node | socket << 4 | core << 8` with cyclic = 1, block = 2 and fcyclic
//! (Slurm's `CFULL`) = 3; `arbitrary` (3) and `plane` (4) exist only at the
//! node level. `-m block:cyclic` is 0x12, `-m cyclic:block` 0x21,
//! `-m block:fcyclic` 0x32.

/// `SLURM_DIST_CYCLIC`: tasks round-robin over nodes.
pub const CYCLIC: u32 = 0x1;
/// `SLURM_DIST_BLOCK`.
pub const BLOCK: u32 = 0x2;
/// `SLURM_DIST_ARBITRARY` (`arbitrary`, `hostfile`).
pub const ARBITRARY: u32 = 0x3;
/// `SLURM_DIST_PLANE` (`plane=<size>`).
pub const PLANE: u32 = 0x4;
/// `SLURM_DIST_UNKNOWN`: no distribution given.
pub const UNKNOWN: u32 = 0x2000;
/// `SLURM_DIST_PACK_NODES` (`,Pack`).
pub const PACK_NODES: u32 = 0x80_0000;
/// `SLURM_DIST_NO_PACK_NODES` (`,NoPack`).
pub const NO_PACK_NODES: u32 = 0x40_0000;
/// `SLURM_DIST_NODESOCKMASK`: the node and socket levels (and the plane,
/// arbitrary and unknown values), what `lllp_distribution` looks at.
pub const NODE_SOCKET_MASK: u32 = 0xF0FF;

/// `SLURM_DIST_BLOCK_BLOCK`.
pub const BLOCK_BLOCK: u32 = 0x22;
/// `SLURM_DIST_CYCLIC_BLOCK`.
pub const CYCLIC_BLOCK: u32 = 0x21;
/// `SLURM_DIST_BLOCK_CFULL` (`block:fcyclic`).
pub const BLOCK_CFULL: u32 = 0x32;
/// `SLURM_DIST_CYCLIC_CFULL` (`cyclic:fcyclic`).
pub const CYCLIC_CFULL: u32 = 0x31;

/// A parsed `--distribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Distribution {
    /// `task_dist`, flags included.
    pub task_dist: u32,
    /// The size of `plane=<size>`.
    pub plane_size: Option<u32>,
}

/// Parses `--distribution` as srun 22.05 does.
///
/// `*` at a level takes its default: block for nodes, cyclic for sockets,
/// the socket level's value for cores. A `,Pack` or `,NoPack` suffix adds
/// its flag; `pack` or `nopack` alone is an unknown distribution with the
/// flag. `plane=<size>` takes no other level; its size must be 1 to
/// 2147483647 (srun's fallback to `SLURM_DIST_PLANESIZE` is left to the
/// caller). Words are case-insensitive.
pub fn parse(arg: &str) -> Result<Distribution, String> {
    let invalid = || format!("invalid --distribution `{arg}`");
    if arg
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("plane"))
    {
        let size = arg
            .split_once('=')
            .and_then(|(_, size)| size.parse::<i64>().ok())
            .filter(|&n| n > 0 && n <= i64::from(i32::MAX))
            .ok_or_else(|| "Invalid plane size or size not specified".to_string())?;
        return Ok(Distribution {
            task_dist: PLANE,
            plane_size: Some(size as u32),
        });
    }
    if arg.is_empty() || arg.starts_with(',') {
        return Err(invalid());
    }
    let (base, flag) = match arg.split_once(',') {
        Some((base, flag)) => (base, Some(flag)),
        None => (arg, None),
    };
    let levels: Vec<&str> = base.split(':').filter(|l| !l.is_empty()).collect();
    if levels.is_empty() || levels.len() > 3 {
        return Err(invalid());
    }
    let mut task_dist = match levels_code(&levels) {
        Some(code) => code,
        None if levels.len() == 1 => pack_flag(levels[0]).ok_or_else(invalid)? | UNKNOWN,
        None => return Err(invalid()),
    };
    if let Some(flag) = flag.filter(|f| !f.is_empty()) {
        task_dist |= pack_flag(flag).ok_or_else(invalid)?;
    }
    Ok(Distribution {
        task_dist,
        plane_size: None,
    })
}

/// The code of `node[:socket[:core]]`, `*` standing for each level's default.
fn levels_code(levels: &[&str]) -> Option<u32> {
    let node = match levels[0].to_ascii_lowercase().as_str() {
        "cyclic" => CYCLIC,
        "block" | "*" => BLOCK,
        "arbitrary" | "hostfile" if levels.len() == 1 => return Some(ARBITRARY),
        _ => return None,
    };
    let level = |text: &str, default: u32| match text.to_ascii_lowercase().as_str() {
        "cyclic" => Some(1),
        "block" => Some(2),
        "fcyclic" => Some(3),
        "*" => Some(default),
        _ => None,
    };
    let socket = match levels.get(1) {
        Some(text) => level(text, 1)?,
        None => 0,
    };
    let core = match levels.get(2) {
        Some(text) => level(text, socket)?,
        None => 0,
    };
    Some(node | socket << 4 | core << 8)
}

fn pack_flag(word: &str) -> Option<u32> {
    match word.to_ascii_lowercase().as_str() {
        "pack" => Some(PACK_NODES),
        "nopack" => Some(NO_PACK_NODES),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(arg: &str) -> u32 {
        parse(arg).unwrap().task_dist
    }

    #[test]
    fn encodes_like_task_dist_states() {
        assert_eq!(code("block:cyclic"), 0x12);
        assert_eq!(code("cyclic:block"), 0x21);
        assert_eq!(code("block:fcyclic"), 0x32);
        assert_eq!(code("cyclic"), CYCLIC);
        assert_eq!(code("Block"), BLOCK);
        assert_eq!(code("arbitrary"), ARBITRARY);
        assert_eq!(code("hostfile"), ARBITRARY);
        assert_eq!(code("cyclic:cyclic:fcyclic"), 0x311);
        assert_eq!(code("block:block:block"), 0x222);
        assert_eq!(code("*:*:*"), 0x112);
        assert_eq!(code("cyclic:block:*"), 0x221);
        assert_eq!(code("block,pack"), BLOCK | PACK_NODES);
        assert_eq!(code("NoPack"), UNKNOWN | NO_PACK_NODES);
        assert_eq!(
            parse("plane=4").unwrap(),
            Distribution {
                task_dist: PLANE,
                plane_size: Some(4)
            }
        );
    }

    #[test]
    fn refuses_unknown_shapes() {
        for bad in [
            "",
            ",pack",
            "diagonal",
            "arbitrary:block",
            "block:plane",
            "fcyclic",
            "block:block:block:block",
            "block,tight",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse("plane").unwrap_err(),
            "Invalid plane size or size not specified"
        );
        assert!(parse("plane=0").is_err());
        assert!(parse("plane=4x").is_err());
    }
}
