//! The object tree: objects grouped by ownerReferences (Deployment > ReplicaSets > Pods), each
//! with its kstatus verdict and a roll-up naming the descendant that causes trouble.
//!
//! [`Tree`] is incremental: it keeps per-object facts (kind, uid, owners, verdict) between
//! renders and recomputes them only for objects whose stored value changed (the world shares
//! unchanged objects by `Arc`, so a pointer comparison tells). The owner structure is rebuilt
//! only when an object appears, disappears or changes its uid or owners. A step in a world of
//! 1,000 objects therefore costs a pointer comparison per object, an integer pass for the
//! roll-up, and the rows on screen; big groups start collapsed and list children a page at a
//! time.

use crate::api::meta::Fields;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::json::Value;

use crate::api::ObjectKey;
use crate::engine::health::{self, Health};
use crate::engine::World;
use crate::time::SimTime;

/// Groups with more children than this start collapsed.
pub const COLLAPSE_ABOVE: usize = 12;
/// Children listed per page of an expanded group; "show more" lists another page.
pub const CHILDREN_PAGE: usize = 50;

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

#[derive(Clone, Debug, PartialEq)]
pub enum Row {
    Object(TreeRow),
    /// The rest of a long group: `hidden` children of `parent` are not listed yet.
    More {
        parent: ObjectKey,
        depth: usize,
        hidden: usize,
    },
}

/// How the user arranged the tree: the groups whose default expansion they flipped, and the
/// groups where they listed more than the first page of children.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    pub toggled: BTreeSet<ObjectKey>,
    pub pages: BTreeMap<ObjectKey, usize>,
}

impl Layout {
    /// Flips `key` between expanded and collapsed.
    pub fn toggle(&mut self, key: &ObjectKey) {
        if !self.toggled.remove(key) {
            self.toggled.insert(key.clone());
        }
    }

    /// Lists one more page of `key`'s children.
    pub fn show_more(&mut self, key: &ObjectKey) {
        *self.pages.entry(key.clone()).or_insert(1) += 1;
    }
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
        "deployments" | "jobs" => 0,
        "replicasets" => 1,
        "pods" => 2,
        "nodes" => 9,
        _ => 5,
    }
}

/// What the tree knows about one object.
#[derive(Clone, Debug)]
struct TreeEntry {
    key: ObjectKey,
    obj: Arc<Value>,
    kind: String,
    uid: Option<String>,
    /// Owner uids, in the order of `metadata.ownerReferences`.
    owners: Vec<String>,
    health: Health,
    /// When `health` was computed.
    at: SimTime,
}

impl TreeEntry {
    fn new(key: &ObjectKey, obj: &Arc<Value>, now: SimTime) -> TreeEntry {
        let str_at = |p: &str| obj.pointer(p).and_then(Value::as_str).map(str::to_owned);
        let owners = obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .map(|refs| {
                refs.iter()
                    .filter_map(|r| r.field("uid").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        TreeEntry {
            key: key.clone(),
            obj: Arc::clone(obj),
            kind: str_at("/kind").unwrap_or_else(|| "Object".to_owned()),
            uid: str_at("/metadata/uid"),
            owners,
            health: health::compute(obj, now),
            at: now,
        }
    }

    fn same_place(&self, other: &TreeEntry) -> bool {
        self.uid == other.uid && self.owners == other.owners
    }
}

/// The object tree of one world, kept up to date with [`Tree::refresh`].
#[derive(Clone, Debug, Default)]
pub struct Tree {
    /// In key order (the world's order).
    entries: Vec<TreeEntry>,
    roots: Vec<usize>,
    children: Vec<Vec<usize>>,
}

impl Tree {
    /// A tree for `world`.
    pub fn new(world: &World) -> Tree {
        let mut t = Tree::default();
        t.refresh(world);
        t
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Brings the tree up to date with `world` (any world: the live one or a snapshot),
    /// recomputing only what changed.
    pub fn refresh(&mut self, world: &World) {
        let now = world.now();
        let mut old = std::mem::take(&mut self.entries).into_iter().peekable();
        let mut entries = Vec::with_capacity(world.object_count());
        let mut restructure = false;
        // Events are reports about objects, not part of the ownership tree (as `kubectl get
        // all` leaves them out); the inspector lists an object's own.
        for (key, obj) in world.objects().filter(|(k, _)| !k.gr.is_events()) {
            while old.next_if(|e| e.key < *key).is_some() {
                restructure = true;
            }
            let entry = match old.next_if(|e| e.key == *key) {
                // kstatus reads the clock only to turn a Pod that has waited too long for a
                // node from InProgress to Failed, so other verdicts outlive a clock change.
                Some(e)
                    if Arc::ptr_eq(&e.obj, obj)
                        && (e.at == now || e.health != Health::InProgress) =>
                {
                    e
                }
                Some(mut e) if Arc::ptr_eq(&e.obj, obj) => {
                    e.health = health::compute(obj, now);
                    e.at = now;
                    e
                }
                previous => {
                    let fresh = TreeEntry::new(key, obj, now);
                    restructure |= previous.is_none_or(|p| !p.same_place(&fresh));
                    fresh
                }
            };
            entries.push(entry);
        }
        restructure |= old.next().is_some();
        self.entries = entries;
        if restructure {
            self.restructure();
        }
    }

    fn restructure(&mut self) {
        let n = self.entries.len();
        let by_uid: BTreeMap<&str, usize> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.uid.as_deref().map(|u| (u, i)))
            .collect();
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for (i, e) in self.entries.iter().enumerate() {
            parent[i] = e
                .owners
                .iter()
                .find_map(|u| by_uid.get(u.as_str()).copied())
                .filter(|p| *p != i);
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, p) in parent.iter().enumerate() {
            match p {
                Some(p) => children[*p].push(i),
                None => roots.push(i),
            }
        }
        // Owner cycles have no root: the first object of each unreached cycle becomes one, so
        // every object is listed exactly once.
        let mut reached = vec![false; n];
        let mut stack: Vec<usize> = roots.clone();
        while let Some(i) = stack.pop() {
            if !std::mem::replace(&mut reached[i], true) {
                stack.extend(children[i].iter().copied());
            }
        }
        for i in 0..n {
            if !reached[i] {
                if let Some(p) = parent[i] {
                    children[p].retain(|c| *c != i);
                }
                roots.push(i);
                let mut stack = vec![i];
                while let Some(j) = stack.pop() {
                    if !std::mem::replace(&mut reached[j], true) {
                        stack.extend(children[j].iter().copied());
                    }
                }
            }
        }
        // Indices follow key order, so a stable sort by kind gives (kind, key) order.
        let entries = &self.entries;
        let rank = |i: &usize| kind_rank(&entries[*i].key.gr.resource);
        roots.sort_by_key(rank);
        for c in &mut children {
            c.sort_by_key(rank);
        }
        self.roots = roots;
        self.children = children;
    }

    /// The visible rows for `layout`.
    pub fn rows(&self, layout: &Layout) -> Vec<Row> {
        let worst = self.worst();
        let mut out = Vec::new();
        let mut emit = Emit {
            tree: self,
            layout,
            worst: &worst,
            seen: vec![false; self.entries.len()],
        };
        for &r in &self.roots {
            emit.emit(r, 0, &mut out);
        }
        out
    }

    /// For every object, its worst descendant (the first in tree order among the worst) when
    /// that is worse than Current.
    fn worst(&self) -> Vec<Option<(usize, Health)>> {
        let n = self.entries.len();
        let mut worst: Vec<Option<(usize, Health)>> = vec![None; n];
        // Children before parents: reverse of a pre-order walk from the roots.
        let mut order = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack: Vec<usize> = self.roots.iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            order.push(i);
            stack.extend(self.children[i].iter().rev().copied());
        }
        for &i in order.iter().rev() {
            let mut best: Option<(usize, Health)> = None;
            for &c in &self.children[i] {
                let own = (c, self.entries[c].health);
                for cand in [Some(own), worst[c]].into_iter().flatten() {
                    if severity(cand.1) > best.map_or(0, |b| severity(b.1)) {
                        best = Some(cand);
                    }
                }
            }
            worst[i] = best;
        }
        worst
    }
}

struct Emit<'a> {
    tree: &'a Tree,
    layout: &'a Layout,
    worst: &'a [Option<(usize, Health)>],
    seen: Vec<bool>,
}

impl Emit<'_> {
    fn emit(&mut self, i: usize, depth: usize, out: &mut Vec<Row>) {
        if std::mem::replace(&mut self.seen[i], true) {
            return;
        }
        let e = &self.tree.entries[i];
        let kids = &self.tree.children[i];
        let default_open = !kids.is_empty() && kids.len() <= COLLAPSE_ABOVE;
        let expanded = !kids.is_empty() && (default_open != self.layout.toggled.contains(&e.key));
        let trouble = self.worst[i].map(|(w, h)| {
            let w = &self.tree.entries[w];
            (format!("{} {}", w.kind, w.key.name), h)
        });
        out.push(Row::Object(TreeRow {
            key: e.key.clone(),
            kind: e.kind.clone(),
            name: e.key.name.to_string(),
            depth,
            health: e.health,
            children: kids.len(),
            expanded,
            trouble,
        }));
        if expanded {
            let pages = self.layout.pages.get(&e.key).copied().unwrap_or(1);
            let shown = kids.len().min(pages.saturating_mul(CHILDREN_PAGE));
            for &c in &kids[..shown] {
                self.emit(c, depth + 1, out);
            }
            if kids.len() > shown {
                out.push(Row::More {
                    parent: e.key.clone(),
                    depth: depth + 1,
                    hidden: kids.len() - shown,
                });
            }
        }
    }
}

/// The visible rows of `world` with `layout`, built from scratch.
pub fn rows(world: &World, layout: &Layout) -> Vec<Row> {
    Tree::new(world).rows(layout)
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
        let rows = rows(&w, &Layout::default());
        let rows = objects(&rows);
        assert_eq!(rows[0].kind, "Deployment");
        assert_eq!((rows[1].kind.as_str(), rows[1].depth), ("ReplicaSet", 1));
        assert_eq!((rows[2].kind.as_str(), rows[2].depth), ("Pod", 2));
        assert_eq!(rows[0].health, Health::Current);
        assert!(rows.iter().any(|r| r.kind == "Node" && r.depth == 0));
    }

    /// The gallery's DaemonSet lesson: the DaemonSet holds its Pods and ControllerRevision,
    /// badged by kstatus (InProgress while the joining node's Pod starts, then Current).
    #[test]
    fn daemon_set_pods_sit_under_their_daemon_set_with_badges() {
        let entry = crate::scenario::gallery::find("daemonset-new-node").unwrap();
        let scenario = crate::scenario::Scenario::load(entry.text).unwrap();
        let mut w = scenario.playground_world(None).unwrap();
        w.advance(20_005);
        let all = rows(&w, &Layout::default());
        let list = objects(&all);
        let ds = list.iter().find(|r| r.kind == "DaemonSet").unwrap();
        // node-3 joined at 20 s: its Pod was created at once, beside the other two and the
        // revision.
        assert_eq!(
            (ds.depth, ds.children),
            (0, 4),
            "three Pods and one revision"
        );
        assert_eq!(ds.health, Health::InProgress);
        let kids: Vec<&str> = list
            .iter()
            .filter(|r| r.depth == 1)
            .map(|r| r.kind.as_str())
            .collect();
        assert!(
            kids.contains(&"Pod") && kids.contains(&"ControllerRevision"),
            "{kids:?}"
        );
        w.advance(15_000);
        let all = rows(&w, &Layout::default());
        let ds = objects(&all)
            .into_iter()
            .find(|r| r.kind == "DaemonSet")
            .cloned()
            .unwrap();
        assert_eq!((ds.children, ds.health), (4, Health::Current));
    }

    /// The gallery's StatefulSet lesson: the set holds its ordered Pods and both revisions,
    /// InProgress while db-2 is replaced behind the partition, Current once it is back.
    #[test]
    fn stateful_set_pods_and_revisions_sit_under_their_set_with_badges() {
        let entry = crate::scenario::gallery::find("statefulset-partition").unwrap();
        let scenario = crate::scenario::Scenario::load(entry.text).unwrap();
        let mut w = scenario.playground_world(None).unwrap();
        w.advance(30_010);
        let all = rows(&w, &Layout::default());
        let list = objects(&all);
        let sts = list.iter().find(|r| r.kind == "StatefulSet").unwrap();
        assert_eq!(sts.depth, 0);
        assert_eq!(sts.health, Health::InProgress);
        w.advance(30_000);
        let all = rows(&w, &Layout::default());
        let list = objects(&all);
        let sts = list
            .iter()
            .find(|r| r.kind == "StatefulSet")
            .cloned()
            .unwrap();
        assert_eq!(
            (sts.children, sts.health),
            (5, Health::Current),
            "three Pods and two revisions"
        );
        let pods: Vec<&str> = list
            .iter()
            .filter(|r| r.depth == 1 && r.kind == "Pod")
            .map(|r| r.key.name.as_str())
            .collect();
        assert_eq!(pods, ["db-0", "db-1", "db-2"]);
    }

    /// The gallery's readiness lesson: the Service holds its EndpointSlice (owned through a
    /// controller reference), which kstatus calls Current, as it does the ClusterIP Service,
    /// while the Deployment is InProgress with every Pod unready.
    #[test]
    fn an_endpoint_slice_sits_under_its_service_with_a_badge() {
        let entry = crate::scenario::gallery::find("readiness-probe-endpoints").unwrap();
        let scenario = crate::scenario::Scenario::load(entry.text).unwrap();
        let mut w = scenario.playground_world(None).unwrap();
        w.advance(55_000);
        let all = rows(&w, &Layout::default());
        let list = objects(&all);
        let svc = list.iter().find(|r| r.kind == "Service").unwrap();
        assert_eq!((svc.depth, svc.children), (0, 1));
        assert_eq!(svc.health, Health::Current);
        let slice = list.iter().find(|r| r.kind == "EndpointSlice").unwrap();
        assert_eq!((slice.depth, slice.health), (1, Health::Current));
        let dep = list.iter().find(|r| r.kind == "Deployment").unwrap();
        assert_eq!(dep.health, Health::InProgress);
    }

    #[test]
    fn a_toggled_group_hides_its_children() {
        let w = replay(Starter::Small, 1, &Starter::Small.actions(), |_, _| {});
        let all = rows(&w, &Layout::default());
        let dep = objects(&all)[0].key.clone();
        let fewer = rows(
            &w,
            &Layout {
                toggled: BTreeSet::from([dep]),
                ..Layout::default()
            },
        );
        assert_eq!(
            objects(&fewer).iter().filter(|r| r.kind == "Pod").count(),
            0
        );
    }

    #[test]
    fn the_rollup_points_at_a_progressing_child() {
        let mut actions = Starter::Small.actions();
        actions.pop();
        actions.extend(std::iter::repeat_n(
            crate::view::session::SessionAction::Step,
            18,
        ));
        let w = replay(Starter::Small, 1, &actions, |_, _| {});
        let rows = rows(&w, &Layout::default());
        let dep = objects(&rows)[0];
        assert!(dep.trouble.is_some(), "{dep:?}");
    }

    #[test]
    fn a_refreshed_tree_equals_one_built_from_scratch_at_every_step() {
        let mut actions = Starter::Small.actions();
        let rollout = crate::engine::script::patch_as(
            "alice",
            crate::api::GroupResource::new("apps", "deployments"),
            "default",
            "web",
            crate::json::json!({"spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.28"}]}}}}),
        );
        actions.push(crate::view::session::SessionAction::apply(rollout));
        actions.extend(std::iter::repeat_n(
            crate::view::session::SessionAction::Step,
            60,
        ));
        let mut tree = Tree::default();
        let layout = Layout::default();
        replay(Starter::Small, 1, &actions, |w, _| {
            tree.refresh(w);
            assert_eq!(
                tree.rows(&layout),
                rows(w, &layout),
                "at step {}",
                w.steps()
            );
        });
    }

    #[test]
    fn a_big_group_lists_its_children_a_page_at_a_time() {
        let w = replay(Starter::Large, 1, &Starter::Large.actions(), |_, _| {});
        let tree = Tree::new(&w);
        let mut layout = Layout::default();
        let all = tree.rows(&layout);
        let rs = objects(&all)
            .into_iter()
            .find(|r| r.kind == "ReplicaSet")
            .map(|r| (r.key.clone(), r.children, r.expanded));
        let Some((rs, pods, expanded)) = rs else {
            panic!("no ReplicaSet row in {all:?}");
        };
        assert_eq!((pods, expanded), (960, false));
        layout.toggle(&rs);
        let open = tree.rows(&layout);
        assert_eq!(
            objects(&open).iter().filter(|r| r.kind == "Pod").count(),
            CHILDREN_PAGE
        );
        assert!(open.contains(&Row::More {
            parent: rs.clone(),
            depth: 2,
            hidden: 960 - CHILDREN_PAGE
        }));
        layout.show_more(&rs);
        let more = tree.rows(&layout);
        assert_eq!(
            objects(&more).iter().filter(|r| r.kind == "Pod").count(),
            2 * CHILDREN_PAGE
        );
    }
}
