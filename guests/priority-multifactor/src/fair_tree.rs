//! Fair Tree (Slurm 22.05.8 src/plugins/priority/multifactor/fair_tree.c `fair_tree_decay`): Level FS per level, associations ranked by a
//! depth-first walk of the levels in descending Level FS, a user's
//! fair-share factor = its rank / number of user associations.
//!
//! For each association of a level (the fair-share children of an account):
//! `S` = its Fair Tree normalised shares, `U = usage_raw / fs_parent
//! usage_raw` (0 when the parent has none; kept as the effective usage) and
//! `Level FS = S / U` (0 when `S` is 0, infinite when `U` is 0). Users
//! marked `FairShare=parent` get an infinite Level FS, accounts so marked
//! get NO_VAL (4294967294) and no level of their own.
//!
//! Siblings are sorted by Level FS, highest first, users before accounts
//! on equal values. `rank` and `rnt` start at the number of user
//! associations; an association is *tied* when it equals the previous
//! sibling's Level FS, or when it is the first of a level entered through a
//! tied account. A user takes `rank = rnt` unless tied, gets
//! `rank / user count`, and `rnt` counts down. An account merges the
//! levels of the following accounts with exactly its Level FS and the walk
//! descends into the merged level.
//!
//! Accounts (and the root) get no fair-share factor here: theirs is 0.

use crate::tree::Tree;

/// The Level FS of an account marked `FairShare=parent` (Slurm's NO_VAL).
pub const PARENT_ACCOUNT_LEVEL_FS: f64 = 4_294_967_294.0;

/// Computes normalised usage, effective usage, Level FS and fair-share
/// factors for the whole tree (shares must be normalised the Fair Tree way).
pub fn compute(tree: &mut Tree) {
    let Some(root) = tree.root() else {
        return;
    };
    for i in 0..tree.top_down().len() {
        let id = tree.top_down()[i];
        let usage_norm = tree.usage_norm(id);
        let figures = &mut tree.get_mut(id).expect("listed").figures;
        figures.usage_norm = usage_norm;
        figures.fs_factor = 0.0;
        figures.level_fs = None;
    }
    let root_figures = &mut tree.get_mut(root).expect("root").figures;
    root_figures.usage_efctv = Some(root_figures.usage_norm);
    let mut walk = Walk {
        users: tree.user_count(),
        rank: tree.user_count(),
        rnt: tree.user_count(),
    };
    let level = tree.get(root).expect("root").fs_children().to_vec();
    walk.level(tree, level, false);
}

/// The counters of the ranking walk.
struct Walk {
    users: u32,
    rank: u32,
    rnt: u32,
}

impl Walk {
    fn level(&mut self, tree: &mut Tree, mut siblings: Vec<u32>, account_tied: bool) {
        for &id in &siblings {
            level_fs(tree, id);
        }
        let key = |tree: &Tree, id: u32| {
            let a = tree.get(id).expect("linked");
            (a.figures.level_fs.expect("just computed"), a.is_user())
        };
        siblings.sort_by(|&x, &y| {
            let ((fx, ux), (fy, uy)) = (key(tree, x), key(tree, y));
            fy.total_cmp(&fx).then(uy.cmp(&ux))
        });
        let mut i = 0;
        while i < siblings.len() {
            let (fs, is_user) = key(tree, siblings[i]);
            let tied = if i == 0 {
                account_tied
            } else {
                fs == key(tree, siblings[i - 1]).0
            };
            if is_user {
                if !tied {
                    self.rank = self.rnt;
                }
                let factor = f64::from(self.rank) / f64::from(self.users);
                tree.get_mut(siblings[i]).expect("linked").figures.fs_factor = factor;
                self.rnt = self.rnt.saturating_sub(1);
                i += 1;
                continue;
            }
            let mut end = i + 1;
            while end < siblings.len() && key(tree, siblings[end]) == (fs, false) {
                end += 1;
            }
            let merged: Vec<u32> = siblings[i..end]
                .iter()
                .flat_map(|&a| tree.get(a).expect("linked").fs_children().to_vec())
                .collect();
            self.level(tree, merged, tied);
            i = end;
        }
    }
}

/// Effective usage and Level FS of one association of a level.
fn level_fs(tree: &mut Tree, id: u32) {
    let a = tree.get(id).expect("linked");
    let parent_usage = a
        .fs_parent()
        .and_then(|f| tree.get(f))
        .map_or(0.0, |p| p.usage.raw);
    let u = if parent_usage > 0.0 {
        a.usage.raw / parent_usage
    } else {
        0.0
    };
    let s = a.figures.shares_norm;
    let level_fs = if a.uses_parent() {
        if a.is_user() {
            f64::INFINITY
        } else {
            PARENT_ACCOUNT_LEVEL_FS
        }
    } else if s == 0.0 {
        0.0
    } else if u == 0.0 {
        f64::INFINITY
    } else {
        s / u
    };
    let figures = &mut tree.get_mut(id).expect("linked").figures;
    figures.usage_efctv = Some(u);
    figures.level_fs = Some(level_fs);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::tree::tests::assoc;
    use crate::tree::{Shares, Update};

    /// The tree of testsuite/expect/test24.4 (test24.4.prog.c), Slurm 22.05.8 src/plugins/priority/multifactor/fair_tree.c `fair_tree_decay`:
    /// 21 user associations, root usage 240. (The program gives uGA1 and
    /// uGA2 the same id, 921; here uGA2 is 922.) Accounts get their usage
    /// from their users.
    pub(crate) fn test24_4_tree() -> Vec<Update> {
        let acct =
            |id, parent, name: &str, shares| assoc(id, Some(parent), name, None, shares, 0.0);
        let user = |id, parent, account: &str, name: &str, shares, usage| {
            assoc(id, Some(parent), account, Some(name), shares, usage)
        };
        let raw = Shares::Raw;
        vec![
            assoc(1, None, "root", None, raw(1), 0.0),
            acct(2, 1, "aA", raw(40)),
            acct(21, 2, "aAA", raw(30)),
            user(211, 21, "aAA", "uAA1", raw(1), 20.0),
            acct(22, 2, "aAB", raw(10)),
            user(221, 22, "aAB", "uAB1", raw(1), 25.0),
            user(222, 22, "aAB", "uAB2", raw(1), 0.0),
            acct(3, 1, "aB", raw(60)),
            acct(31, 3, "aBA", raw(25)),
            user(311, 31, "aBA", "uBA1", raw(1), 25.0),
            acct(32, 3, "aBB", raw(35)),
            user(321, 32, "aBB", "uBB1", raw(1), 0.0),
            acct(4, 1, "aC", raw(0)),
            user(41, 4, "aC", "uC1", raw(0), 30.0),
            acct(5, 1, "aD", raw(50)),
            acct(51, 5, "aDA", Shares::Parent),
            user(511, 51, "aDA", "uDA1", Shares::Parent, 10.0),
            user(512, 51, "aDA", "uDA2", raw(30), 10.0),
            user(513, 51, "aDA", "uDA3", raw(50), 25.0),
            user(52, 5, "aD", "uD1", Shares::Parent, 20.0),
            user(53, 5, "aD", "uD2", raw(40), 20.0),
            user(54, 5, "aD", "uD3", raw(50), 25.0),
            acct(6, 1, "aE", raw(10)),
            user(61, 6, "aE", "aE1", raw(10), 0.0),
            user(62, 6, "aE", "aE2", raw(10), 0.0),
            user(7, 1, "root", "u1", raw(10), 0.0),
            acct(8, 1, "aF", raw(20)),
            user(81, 8, "aF", "uF1", raw(10), 0.0),
            user(82, 8, "aF", "uF2", raw(20), 0.0),
            acct(9, 1, "aG", raw(8)),
            user(91, 9, "aG", "uG1", raw(10), 10.0),
            acct(92, 9, "aGA", raw(10)),
            user(921, 92, "aGA", "uGA1", raw(20), 4.0),
            user(922, 92, "aGA", "uGA2", raw(20), 6.0),
            user(1001, 1, "root", "u2", raw(10), 10.0),
        ]
    }

    fn six(x: f64) -> String {
        format!("{x:.6}")
    }

    fn fair_tree() -> Tree {
        let mut tree = Tree::default();
        tree.apply(test24_4_tree(), true).unwrap();
        compute(&mut tree);
        tree
    }

    #[test]
    fn every_user_row_of_test24_4() {
        let tree = fair_tree();
        assert_eq!(tree.user_count(), 21);
        assert_eq!(tree.get(1).unwrap().usage.raw, 240.0);
        // User|FairShare|LevelFS, every user association of Slurm 22.05.8 src/plugins/priority/multifactor/fair_tree.c `fair_tree_decay`.
        let expected = [
            ("u1", "1.000000", "inf"),
            ("u2", "0.666667", "1.153846"),
            ("uAA1", "0.619048", "1.000000"),
            ("uAB2", "0.571429", "inf"),
            ("uAB1", "0.523810", "0.500000"),
            ("uBB1", "0.761905", "inf"),
            ("uBA1", "0.714286", "1.000000"),
            ("uC1", "0.047619", "0.000000"),
            ("uD1", "0.476190", "inf"),
            ("uDA1", "0.476190", "inf"),
            ("uDA2", "0.380952", "1.941176"),
            ("uD3", "0.333333", "1.294118"),
            ("uDA3", "0.333333", "1.294118"),
            ("uD2", "0.238095", "1.294118"),
            ("aE1", "1.000000", "inf"),
            ("aE2", "1.000000", "inf"),
            ("uF1", "1.000000", "inf"),
            ("uF2", "1.000000", "inf"),
            ("uG1", "0.190476", "1.000000"),
            ("uGA1", "0.190476", "1.250000"),
            ("uGA2", "0.095238", "0.833333"),
        ];
        assert_eq!(expected.len(), 21);
        for (user, fs, lf) in expected {
            let a = tree
                .iter()
                .find(|a| a.spec.user.as_deref() == Some(user))
                .unwrap();
            let f = &a.figures;
            assert_eq!(
                (six(f.fs_factor), six(f.level_fs.unwrap())),
                (fs.to_string(), lf.to_string()),
                "{user}"
            );
        }
        // Slurm 22.05.8 src/plugins/priority/multifactor/fair_tree.c `_calc_assoc_fs` (Level FS = S / U):
        // uD2's Level FS is numerically below uD3's though both print 1.294118, so test24.4
        // ranks uD2 lower; uD3 and uDA3 are equal (tied).
        let lf = |id| tree.get(id).unwrap().figures.level_fs.unwrap();
        assert!(lf(53) < lf(54));
        assert_eq!(lf(54), lf(513));
    }

    #[test]
    fn test24_4_accounts_and_shares() {
        let tree = fair_tree();
        let lf = |id| six(tree.get(id).unwrap().figures.level_fs.unwrap());
        for (id, expected) in [
            (2, "1.025641"),
            (21, "1.687500"),
            (22, "0.450000"),
            (3, "2.769231"),
            (31, "0.416667"),
            (32, "inf"),
            (4, "0.000000"),
            (5, "0.524476"),
            (6, "inf"),
            (8, "inf"),
            (9, "0.461538"),
            (92, "1.000000"),
            (51, "4294967294.000000"),
        ] {
            assert_eq!(lf(id), expected, "account {id}");
        }
        let norm = |id| six(tree.get(id).unwrap().figures.shares_norm);
        assert_eq!(norm(53), "0.235294", "uD2 = 40/170");
        assert_eq!(tree.get(2).unwrap().figures.level_shares, 208);
        assert_eq!(tree.get(53).unwrap().figures.level_shares, 170);
        assert_eq!(tree.get(5).unwrap().usage.raw, 110.0);
        assert_eq!(
            six(tree.get(53).unwrap().figures.usage_efctv.unwrap()),
            "0.181818"
        );
        assert_eq!(
            tree.get(2).unwrap().figures.fs_factor,
            0.0,
            "accounts get none"
        );
    }
}
