//! Classic fair-share (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_set_assoc_usage`, `PriorityFlags=NO_FAIR_TREE`): effective
//! usage, its depth-oblivious variant (`_depth_oblivious_set_usage_efctv`)
//! and `F = 2^(-(UE/S)/damp)` (`priority_p_calc_fs_factor`).
//!
//! As in Slurm, each decay cycle first recomputes the accounts top-down
//! ([`Classic::refresh_accounts`]) and marks users unknown; a user's
//! effective usage is computed when first needed ([`Classic::job_fair_share`],
//! [`Classic::complete`]), from its current usage and its parent's value of
//! the start of the cycle.

use crate::tree::Tree;

/// `2^(-(UE/S)/damp)`; 0 when `S <= 0`.
pub fn fs_factor(usage_efctv: f64, shares_norm: f64, damp: f64) -> f64 {
    if shares_norm <= 0.0 {
        return 0.0;
    }
    2f64.powf(-(usage_efctv / shares_norm) / damp)
}

/// The classic algorithm's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Classic {
    /// `PriorityFlags=DEPTH_OBLIVIOUS`.
    pub depth_oblivious: bool,
    /// `FairShareDampeningFactor`.
    pub damp: f64,
}

impl Classic {
    /// Step 3 of the decay cycle: normalised and effective usage of every
    /// account (root included), parents first; users become unknown.
    pub fn refresh_accounts(self, tree: &mut Tree) {
        for i in 0..tree.top_down().len() {
            let id = tree.top_down()[i];
            let a = tree.get_mut(id).expect("listed");
            if a.is_user() {
                a.figures.usage_efctv = None;
            } else {
                self.set_assoc_usage(tree, id);
            }
        }
    }

    /// `priority_p_set_assoc_usage`: the association's normalised usage,
    /// effective usage and fair-share factor, from its fair-share parent's
    /// current effective usage (computed first if unknown). Unknown ids are
    /// ignored.
    ///
    /// * the root, and associations whose fair-share parent is the root:
    ///   `UE = usage_norm`;
    /// * `FairShare=parent`: the fair-share parent's `UE`;
    /// * DEPTH_OBLIVIOUS: Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_depth_oblivious_set_usage_efctv`, `UE = Rp * Rl^k * S`;
    /// * otherwise `UE = UA + (UE_parent - UA) * shares / level_shares`
    ///   (`UE_parent` when the level has no shares).
    ///
    /// The factor uses the fair-share parent's `UE` and `S` for
    /// `FairShare=parent`.
    pub fn set_assoc_usage(self, tree: &mut Tree, id: u32) {
        let usage_norm = tree.usage_norm(id);
        let Some(a) = tree.get(id) else {
            return;
        };
        let fs_parent = a.fs_parent();
        if let Some(f) = fs_parent {
            if tree.get(f).is_some_and(|p| p.figures.usage_efctv.is_none()) {
                self.set_assoc_usage(tree, f);
            }
        }
        let a = tree.get(id).expect("checked");
        let parent = fs_parent.and_then(|f| tree.get(f));
        let (ue, fs) = match parent {
            None => (
                usage_norm,
                fs_factor(usage_norm, a.figures.shares_norm, self.damp),
            ),
            Some(p) if p.fs_parent().is_none() => (
                usage_norm,
                self.factor_of(a.uses_parent(), usage_norm, a.figures.shares_norm, p),
            ),
            Some(p) if a.uses_parent() => {
                let ue = p.figures.usage_efctv.unwrap_or(0.0);
                (ue, fs_factor(ue, p.figures.shares_norm, self.damp))
            }
            Some(p) => {
                let parent_ue = p.figures.usage_efctv.unwrap_or(0.0);
                let ue = if self.depth_oblivious {
                    self.depth_oblivious_usage(tree, id, usage_norm)
                } else if a.figures.level_shares == 0 {
                    parent_ue
                } else {
                    let share = f64::from(a.shares_raw()) / a.figures.level_shares as f64;
                    usage_norm + (parent_ue - usage_norm) * share
                };
                (ue, fs_factor(ue, a.figures.shares_norm, self.damp))
            }
        };
        let figures = &mut tree.get_mut(id).expect("checked").figures;
        figures.usage_norm = usage_norm;
        figures.usage_efctv = Some(ue);
        figures.fs_factor = fs;
        figures.level_fs = None;
    }

    /// The factor of an association with effective usage `ue` and shares
    /// `s` whose fair-share parent is `parent`: the parent's figures when it
    /// is marked `FairShare=parent`.
    fn factor_of(self, uses_parent: bool, ue: f64, s: f64, parent: &crate::tree::Assoc) -> f64 {
        if uses_parent {
            fs_factor(
                parent.figures.usage_efctv.unwrap_or(0.0),
                parent.figures.shares_norm,
                self.damp,
            )
        } else {
            fs_factor(ue, s, self.damp)
        }
    }

    /// `_depth_oblivious_set_usage_efctv` (priority_multifactor.c): with
    /// `Rp = UE_p / S_p`, `Rs = sum of the level's normalised
    /// usage / S_p` (entries marked `FairShare=parent` excluded) and
    /// `Rl = (UA / S) / Rs`: `k = 1` when `Rp` or `Rl` is 0 or `ln Rp` and
    /// `ln Rl` have the same sign, else `k = 1 / (1 + (5 ln Rp)^2)`;
    /// `UE = Rp * Rl^k * S`. When any of `S`, `S_p`, `UE_p`, `UA` is 0,
    /// `UE = UA`.
    ///
    /// The level's normalised usage adds this association's current value
    /// and each sibling's as last stored (`priority_p_set_assoc_usage` sets
    /// the association's own `usage_norm` first and reads its siblings'
    /// fields): an account's from the start of the cycle, a user's from
    /// when it was last computed (a job's priority, `sshare`). A sibling
    /// never computed since the plugin started counts 0, where Slurm's fresh
    /// record holds NO_VAL (4294967294, `slurmdb_init_assoc_usage`), which
    /// would swamp the level's sum until `sshare` or a job computes it.
    fn depth_oblivious_usage(self, tree: &Tree, id: u32, usage_norm: f64) -> f64 {
        let a = tree.get(id).expect("caller checked");
        let p = tree
            .get(a.fs_parent().expect("caller checked"))
            .expect("linked");
        let s = a.figures.shares_norm;
        let s_p = p.figures.shares_norm;
        let ue_p = p.figures.usage_efctv.unwrap_or(0.0);
        if s == 0.0 || s_p == 0.0 || ue_p == 0.0 || usage_norm == 0.0 {
            return usage_norm;
        }
        let siblings: f64 = p
            .fs_children()
            .iter()
            .map(|&c| (c, tree.get(c).expect("linked")))
            .filter(|(_, sibling)| !sibling.uses_parent())
            .map(|(c, sibling)| {
                if c == id {
                    usage_norm
                } else {
                    sibling.figures.usage_norm
                }
            })
            .sum();
        let ratio_p = ue_p / s_p;
        let ratio_s = siblings / s_p;
        let ratio_l = (usage_norm / s) / ratio_s;
        let k = if ratio_p == 0.0 || ratio_l == 0.0 || ratio_p.ln() * ratio_l.ln() >= 0.0 {
            1.0
        } else {
            1.0 / (1.0 + (5.0 * ratio_p.ln()).powi(2))
        };
        ratio_p * ratio_l.powf(k) * s
    }

    /// The fair-share factor of a job of association `id` (its fair-share
    /// parent's for `FairShare=parent`), computing unknown effective usage
    /// first; 0 for an unknown association.
    pub fn job_fair_share(self, tree: &mut Tree, id: u32) -> f64 {
        let Some(a) = tree.get(id) else {
            return 0.0;
        };
        let fs_id = if a.uses_parent() {
            a.fs_parent().unwrap_or(id)
        } else {
            id
        };
        if tree
            .get(fs_id)
            .is_some_and(|f| f.figures.usage_efctv.is_none())
        {
            self.set_assoc_usage(tree, fs_id);
        }
        let f = tree.get(fs_id).expect("checked");
        f.figures
            .usage_efctv
            .map_or(0.0, |ue| fs_factor(ue, f.figures.shares_norm, self.damp))
    }

    /// Computes every association still unknown (what `sshare` needs).
    pub fn complete(self, tree: &mut Tree) {
        for i in 0..tree.top_down().len() {
            let id = tree.top_down()[i];
            if tree.get(id).expect("listed").figures.usage_efctv.is_none() {
                self.set_assoc_usage(tree, id);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::tree::tests::assoc;
    use crate::tree::{Shares, Update};

    /// Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_set_assoc_usage` (classic_fair_share.shtml, test24.1): root children A(40),
    /// D(60), G(0); A -> B(30), C(10); D -> E(25), F(35); users U1 in B
    /// (usage 20), U2, U3 in C (25, 0), U4 in E (25), U5 in F (0), U6 (0
    /// shares) in G (usage 30). Root usage 100.
    pub(crate) fn test24_1_tree() -> Vec<Update> {
        let acct = |id, parent, name: &str, shares| {
            assoc(id, Some(parent), name, None, Shares::Raw(shares), 0.0)
        };
        let user = |id, parent, account: &str, name: &str, shares, usage| {
            assoc(
                id,
                Some(parent),
                account,
                Some(name),
                Shares::Raw(shares),
                usage,
            )
        };
        vec![
            assoc(1, None, "root", None, Shares::Raw(1), 0.0),
            acct(2, 1, "AccountA", 40),
            acct(3, 2, "AccountB", 30),
            acct(4, 2, "AccountC", 10),
            acct(5, 1, "AccountD", 60),
            acct(6, 5, "AccountE", 25),
            acct(7, 5, "AccountF", 35),
            acct(8, 1, "AccountG", 0),
            user(11, 3, "AccountB", "User1", 1, 20.0),
            user(12, 4, "AccountC", "User2", 1, 25.0),
            user(13, 4, "AccountC", "User3", 1, 0.0),
            user(14, 6, "AccountE", "User4", 1, 25.0),
            user(15, 7, "AccountF", "User5", 1, 0.0),
            user(16, 8, "AccountG", "User6", 0, 30.0),
        ]
    }

    const CLASSIC: Classic = Classic {
        depth_oblivious: false,
        damp: 1.0,
    };

    fn six(x: f64) -> String {
        format!("{x:.6}")
    }

    #[test]
    fn classic_test24_1_vector() {
        let mut tree = Tree::default();
        tree.apply(test24_1_tree(), false).unwrap();
        CLASSIC.refresh_accounts(&mut tree);
        CLASSIC.complete(&mut tree);
        // Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare
        let expected = [
            (
                11,
                "AccountB|User1|1|0.300000|20|0.200000|0.387500|0.408479",
            ),
            (
                12,
                "AccountC|User2|1|0.050000|25|0.250000|0.275000|0.022097",
            ),
            (13, "AccountC|User3|1|0.050000|0|0.000000|0.150000|0.125000"),
            (
                14,
                "AccountE|User4|1|0.250000|25|0.250000|0.250000|0.500000",
            ),
            (15, "AccountF|User5|1|0.350000|0|0.000000|0.145833|0.749154"),
            (
                16,
                "AccountG|User6|0|0.000000|30|0.300000|0.300000|0.000000",
            ),
        ];
        for (id, line) in expected {
            let a = tree.get(id).unwrap();
            let f = &a.figures;
            let got = format!(
                "{}|{}|{}|{}|{}|{}|{}|{}",
                a.spec.account,
                a.spec.user.as_deref().unwrap(),
                a.shares_raw(),
                six(f.shares_norm),
                a.usage.raw,
                six(f.usage_norm),
                six(f.usage_efctv.unwrap()),
                six(f.fs_factor)
            );
            assert_eq!(got, line);
        }
        // Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_set_assoc_usage` intermediate effective usage: A .45, D .25, B .3875,
        // C .3, E .25, F .1458.
        for (id, ue) in [
            (2, 0.45),
            (5, 0.25),
            (3, 0.3875),
            (4, 0.3),
            (6, 0.25),
            (7, 0.145833),
        ] {
            assert_eq!(
                six(tree.get(id).unwrap().figures.usage_efctv.unwrap()),
                six(ue)
            );
        }
    }

    #[test]
    fn users_are_computed_lazily_from_the_cycle_start_values() {
        let mut tree = Tree::default();
        tree.apply(test24_1_tree(), false).unwrap();
        CLASSIC.refresh_accounts(&mut tree);
        assert_eq!(tree.get(11).unwrap().figures.usage_efctv, None);
        assert_eq!(six(CLASSIC.job_fair_share(&mut tree, 11)), "0.408479");
        assert_eq!(tree.get(11).unwrap().figures.usage_efctv, Some(0.3875));
        assert_eq!(CLASSIC.job_fair_share(&mut tree, 99), 0.0);
    }

    #[test]
    fn fairshare_parent_user_takes_its_accounts_figures() {
        let mut updates = test24_1_tree();
        updates.push(assoc(
            17,
            Some(3),
            "AccountB",
            Some("User7"),
            Shares::Parent,
            0.0,
        ));
        let mut tree = Tree::default();
        tree.apply(updates, false).unwrap();
        CLASSIC.refresh_accounts(&mut tree);
        // B: UE .3875, S .3 -> 2^(-.3875/.3).
        assert_eq!(six(CLASSIC.job_fair_share(&mut tree, 17)), "0.408479");
        CLASSIC.complete(&mut tree);
        let u7 = &tree.get(17).unwrap().figures;
        let b = &tree.get(3).unwrap().figures;
        assert_eq!(
            (u7.shares_norm, u7.usage_efctv),
            (b.shares_norm, b.usage_efctv)
        );
    }

    #[test]
    fn depth_oblivious_usage() {
        let depth = Classic {
            depth_oblivious: true,
            damp: 1.0,
        };
        let mut tree = Tree::default();
        tree.apply(test24_1_tree(), false).unwrap();
        // A level reads its siblings' values as last stored: on the first
        // cycle C (computed after B) has none, so B's Rs is B's alone.
        depth.refresh_accounts(&mut tree);
        let first = tree.get(3).unwrap().figures.usage_efctv.unwrap();
        let (rp, rl): (f64, f64) = (0.45 / 0.4, (0.2 / 0.3) / (0.2 / 0.4));
        assert!((first - rp * rl * 0.3).abs() < 1e-12, "{first}");
        // The next cycle (same usage) reads C's stored .25.
        depth.refresh_accounts(&mut tree);
        depth.complete(&mut tree);
        // B under A: Rp = .45/.4, Rs = (.2 + .25)/.4 = 1.125,
        // Rl = (.2/.3)/1.125; ln Rp > 0, ln Rl < 0 -> k = 1/(1+(5 ln 1.125)^2).
        let rp: f64 = 0.45 / 0.4;
        let rl: f64 = (0.2 / 0.3) / 1.125;
        let k = 1.0 / (1.0 + (5.0 * rp.ln()).powi(2));
        let ue_b = rp * rl.powf(k) * 0.3;
        let b = tree.get(3).unwrap().figures.usage_efctv.unwrap();
        assert!((b - ue_b).abs() < 1e-12, "{b} vs {ue_b}");
        // Zero usage keeps UE = UA (User3 in C, User5 in F).
        assert_eq!(tree.get(13).unwrap().figures.usage_efctv, Some(0.0));
        assert_eq!(tree.get(15).unwrap().figures.usage_efctv, Some(0.0));
        // The root's children use their normalised usage.
        assert_eq!(tree.get(2).unwrap().figures.usage_efctv, Some(0.45));
    }

    #[test]
    fn damping_and_zero_shares() {
        assert_eq!(fs_factor(0.5, 0.5, 1.0), 0.5);
        assert_eq!(fs_factor(0.5, 0.5, 2.0), 2f64.powf(-0.5));
        assert_eq!(fs_factor(0.5, 0.0, 1.0), 0.0);
    }
}
