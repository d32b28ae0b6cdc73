//! The accounting records a priority plugin is given (`assoc_mgr`'s
//! associations and QOS), as slurmdbd holds them when `sacctmgr` created
//! them with no options besides their names: what the CLI's priority
//! scenarios and the simulator's trace accounts start from.

use slurm_wasm_host::types::{Association, Qos, Shares};

/// Association `id` of `account` under `parent` (none for `root`), for
/// `user` (name and uid) in a user association, as `sacctmgr add account`
/// and `sacctmgr add user` create it: `Fairshare=1`, no `Priority`, no
/// usage, any partition.
pub fn association(
    id: u32,
    parent: Option<u32>,
    account: &str,
    user: Option<(&str, u32)>,
) -> Association {
    Association {
        id,
        parent_id: parent,
        account: account.to_owned(),
        user: user.map(|(name, _)| name.to_owned()),
        user_id: user.map(|(_, uid)| uid),
        partition: None,
        shares: Shares::Raw(1),
        priority: None,
        usage_raw: 0.0,
        usage_tres_raw: Vec::new(),
        grp_used_tres_run_secs: Vec::new(),
    }
}

/// QOS `name` with id `id`, as `sacctmgr add qos` creates it (and slurmdbd
/// its `normal` QOS): `Priority=0`, `UsageFactor=1`, usage that decays.
pub fn qos(id: u32, name: &str) -> Qos {
    Qos {
        name: name.to_owned(),
        id,
        priority: 0,
        usage_factor: 1.0,
        no_decay: false,
        grp_used_tres_run_secs: Vec::new(),
    }
}
