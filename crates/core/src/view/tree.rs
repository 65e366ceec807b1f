//! The object tree: objects grouped by ownerReferences (Deployment > ReplicaSets > Pods), each
//! with its kstatus verdict and a roll-up naming the descendant that causes trouble.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::api::ObjectKey;
use crate::engine::health::{self, Health};
use crate::engine::World;

/// Groups with more children than this start collapsed.
pub const COLLAPSE_ABOVE: usize = 12;
/// At most this many children of one group are listed; the rest are summarised.
pub const MAX_CHILDREN_SHOWN: usize = 50;

/// One visible row of the tree.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeRow {
    pub key: ObjectKey,
    /// `Deployment`, `ReplicaSet`, `Pod`, ...
    pub kind: String,
    pub name: String,
    pub depth: usize,
    pub health: Health,
    /// Number of direct children.
    pub children: usize,
    pub expanded: bool,
    /// The worst descendant and its verdict, when it is worse than Current.
    pub trouble: Option<(String, Health)>,
}

/// A "… and N more" line under a long group.
#[derive(Clone, Debug, PartialEq)]
pub enum Row {
    Object(TreeRow),
    More { depth: usize, hidden: usize },
}

pub fn health_label(h: Health) -> &'static str {
    match h {
        Health::Current => "Current",
        Health::InProgress => "InProgress",
        Health::Failed => "Failed",
        Health::Terminating => "Terminating",
    }
}

fn severity(h: Health) -> u8 {
    match h {
        Health::Current => 0,
        Health::Terminating => 1,
        Health::InProgress => 2,
        Health::Failed => 3,
    }
}

fn kind_rank(resource: &str) -> u8 {
    match resource {
        "deployments" => 0,
        "replicasets" => 1,
        "pods" => 2,
        "nodes" => 9,
        _ => 5,
    }
}

struct Node<'a> {
    key: &'a ObjectKey,
    obj: &'a Value,
    health: Health,
}

/// The visible rows. `toggled` holds the keys whose default expansion the user flipped.
pub fn rows(world: &World, toggled: &BTreeSet<ObjectKey>) -> Vec<Row> {
    let now = world.now();
    let nodes: Vec<Node> = world
        .objects()
        .map(|(k, o)| Node {
            key: k,
            obj: o.as_ref(),
            health: health::compute(o, now),
        })
        .collect();
    let mut by_uid: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(uid) = n.obj.pointer("/metadata/uid").and_then(Value::as_str) {
            by_uid.insert(uid, i);
        }
    }
    let mut children: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut roots = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let owner = n
            .obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .and_then(|refs| {
                refs.iter()
                    .filter_map(|r| r.get("uid").and_then(Value::as_str))
                    .find_map(|u| by_uid.get(u).copied())
            });
        match owner {
            Some(p) if p != i => children.entry(p).or_default().push(i),
            _ => roots.push(i),
        }
    }
    let order = |v: &mut Vec<usize>| {
        v.sort_by(|a, b| {
            let (x, y) = (nodes[*a].key, nodes[*b].key);
            (kind_rank(&x.gr.resource), x).cmp(&(kind_rank(&y.gr.resource), y))
        })
    };
    order(&mut roots);
    for v in children.values_mut() {
        order(v);
    }
    let mut out = Vec::new();
    let mut ctx = Emit {
        nodes: &nodes,
        children: &children,
        toggled,
        worst: BTreeMap::new(),
    };
    for &r in &roots {
        ctx.emit(r, 0, &mut out);
    }
    out
}

/// The worst descendant of `i` (memoised).
fn worst_of(
    i: usize,
    nodes: &[Node],
    children: &BTreeMap<usize, Vec<usize>>,
    memo: &mut BTreeMap<usize, Option<(usize, Health)>>,
) -> Option<(usize, Health)> {
    if let Some(w) = memo.get(&i) {
        return *w;
    }
    let mut best: Option<(usize, Health)> = None;
    for &c in children.get(&i).map(Vec::as_slice).unwrap_or(&[]) {
        let own = (c, nodes[c].health);
        for cand in [Some(own), worst_of(c, nodes, children, memo)]
            .into_iter()
            .flatten()
        {
            if severity(cand.1) > best.map_or(0, |b| severity(b.1)) {
                best = Some(cand);
            }
        }
    }
    memo.insert(i, best);
    best
}

struct Emit<'a, 'b> {
    nodes: &'b [Node<'a>],
    children: &'b BTreeMap<usize, Vec<usize>>,
    toggled: &'b BTreeSet<ObjectKey>,
    worst: BTreeMap<usize, Option<(usize, Health)>>,
}

impl Emit<'_, '_> {
    fn emit(&mut self, i: usize, depth: usize, out: &mut Vec<Row>) {
        let n = &self.nodes[i];
        let kids = self.children.get(&i).cloned().unwrap_or_default();
        let default_open = !kids.is_empty() && kids.len() <= COLLAPSE_ABOVE;
        let expanded = !kids.is_empty() && (default_open != self.toggled.contains(n.key));
        let trouble = worst_of(i, self.nodes, self.children, &mut self.worst).map(|(w, h)| {
            (
                format!("{} {}", kind_of(self.nodes[w].obj), self.nodes[w].key.name),
                h,
            )
        });
        out.push(Row::Object(TreeRow {
            key: n.key.clone(),
            kind: kind_of(n.obj),
            name: n.key.name.clone(),
            depth,
            health: n.health,
            children: kids.len(),
            expanded,
            trouble,
        }));
        if expanded {
            for &c in kids.iter().take(MAX_CHILDREN_SHOWN) {
                self.emit(c, depth + 1, out);
            }
            if kids.len() > MAX_CHILDREN_SHOWN {
                out.push(Row::More {
                    depth: depth + 1,
                    hidden: kids.len() - MAX_CHILDREN_SHOWN,
                });
            }
        }
    }
}

fn kind_of(obj: &Value) -> String {
    obj.get("kind")
        .and_then(Value::as_str)
        .unwrap_or("Object")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::session::{replay, Starter};

    fn objects(rows: &[Row]) -> Vec<&TreeRow> {
        rows.iter()
            .filter_map(|r| match r {
                Row::Object(o) => Some(o),
                Row::More { .. } => None,
            })
            .collect()
    }

    #[test]
    fn pods_sit_under_their_replicaset_under_the_deployment() {
        let w = replay(Starter::Small, 1, &Starter::Small.actions(), |_, _| {});
        let rows = rows(&w, &BTreeSet::new());
        let rows = objects(&rows);
        assert_eq!(rows[0].kind, "Deployment");
        assert_eq!((rows[1].kind.as_str(), rows[1].depth), ("ReplicaSet", 1));
        assert_eq!((rows[2].kind.as_str(), rows[2].depth), ("Pod", 2));
        assert_eq!(rows[0].health, Health::Current);
        assert!(rows.iter().any(|r| r.kind == "Node" && r.depth == 0));
    }

    #[test]
    fn a_toggled_group_hides_its_children() {
        let w = replay(Starter::Small, 1, &Starter::Small.actions(), |_, _| {});
        let all = rows(&w, &BTreeSet::new());
        let dep = objects(&all)[0].key.clone();
        let fewer = rows(&w, &BTreeSet::from([dep]));
        assert_eq!(
            objects(&fewer).iter().filter(|r| r.kind == "Pod").count(),
            0
        );
    }

    #[test]
    fn the_rollup_points_at_a_progressing_child() {
        let mut actions = Starter::Small.actions();
        actions.pop();
        actions.extend(std::iter::repeat_n(crate::view::session::Action::Step, 12));
        let w = replay(Starter::Small, 1, &actions, |_, _| {});
        let rows = rows(&w, &BTreeSet::new());
        let dep = objects(&rows)[0];
        assert!(dep.trouble.is_some(), "{dep:?}");
    }
}
